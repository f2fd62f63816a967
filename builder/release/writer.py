"""Release stage: write `dist/<name>/<version>/` with parquet splits, a dataset card and a manifest."""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from builder.errors import InputError
from builder.io import write_bytes, write_json, write_jsonl, write_text
from builder.record import SETTINGS, SPLITS

_STR = pa.string()
_PROMPT = pa.struct([("name", _STR), ("version", _STR), ("sha256", _STR)])
# Explicit schema: every split has the same columns and types, whatever its content.
ARROW_SCHEMA = pa.schema(
    [
        ("id", _STR),
        ("domain", _STR),
        ("setting", _STR),
        ("history", pa.list_(pa.struct([("role", _STR), ("content", _STR)]))),
        ("query", _STR),
        ("documents", pa.list_(pa.struct([("id", _STR), ("title", _STR), ("text", _STR)]))),
        ("needs_clarification", pa.bool_()),
        ("category", _STR),
        ("interpretations", pa.list_(_STR)),
        ("target", pa.struct([("clarification", _STR)])),
        ("clarification_pattern", _STR),
        (
            "resolution",
            pa.struct(
                [
                    ("source", _STR),
                    ("turn_index", pa.int32()),
                    ("document_id", _STR),
                    ("referent", _STR),
                    ("resolved_query", _STR),
                ]
            ),
        ),
        ("pair_id", _STR),
        (
            "provenance",
            pa.struct(
                [
                    ("source_dataset", _STR),
                    ("conversation_id", _STR),
                    ("turn", pa.int32()),
                    ("history_source", pa.struct([("conversation_id", _STR), ("turns", pa.int32())])),
                    ("document_sources", pa.list_(_STR)),
                    ("retrieval", pa.struct([("method", _STR), ("k", pa.int32()), ("query", _STR)])),
                    ("method", _STR),
                    ("method_version", _STR),
                    ("seed", pa.int64()),
                    ("label_source", _STR),
                    ("prompt", _PROMPT),
                ]
            ),
        ),
    ]
)


class ReleaseError(InputError):
    """What would be published is unsound (the message names the file, row and field); nothing is written."""


# Parquet gives every struct key to every row: an absent key reads back as null. The writer fills the optional
# keys itself, so what is written, read back and described by the schema is one shape.
_OPTIONAL_TOP = {"resolution": None, "pair_id": None, "clarification_pattern": None}
_OPTIONAL_PROVENANCE = {"history_source": None, "retrieval": None, "prompt": None}


def published(record: dict[str, Any]) -> dict[str, Any]:
    """The record as a published row: every optional key present, `document_sources` a list (never null)."""
    out = {**_OPTIONAL_TOP, **record}
    prov = {**_OPTIONAL_PROVENANCE, **record["provenance"]}
    prov["document_sources"] = list(prov.get("document_sources") or [])
    out["provenance"] = prov
    return out


def parquet_bytes(records: list[dict[str, Any]]) -> bytes:
    """Serialize records to parquet deterministically (fixed schema, no timestamps)."""
    table = pa.Table.from_pylist([published(r) for r in records], schema=ARROW_SCHEMA)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", write_statistics=False)
    return sink.getvalue()


def read_parquet_records(path: Path) -> list[dict[str, Any]]:
    """Records back from a release parquet file, in the published shape (older releases have null lists)."""
    return [published(row) for row in pq.read_table(path).to_pylist()]


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_release(
    out_dir: Path,
    splits: dict[str, list[dict[str, Any]]],
    manifest: dict[str, Any],
    card: str,
    extra_files: dict[str, Iterable[dict[str, Any]]] | None = None,
    assets: dict[str, bytes] | None = None,
) -> Path:
    """Write a release directory: built beside it, read back and checked, then swapped in whole.

    A check that fails (see `check_release`) raises ReleaseError and leaves any earlier release as it was."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".staging", dir=out_dir.parent))
    try:
        os.chmod(stage, 0o777 & ~_umask())  # mkdtemp makes 0700; a release is for reading
        _write_files(stage, splits, manifest, card, extra_files, assets or {})
        check_release(stage, where=out_dir)
        _swap_in(stage, out_dir)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return out_dir


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_files(out_dir: Path, splits, manifest, card, extra_files, assets) -> None:
    """Every file of the release; the manifest gets the sha256 of every file written before it."""
    written: list[Path] = []
    for split in SPLITS:
        rows = splits.get(split, [])
        path = out_dir / "data" / f"{split}.parquet"
        write_bytes(path, parquet_bytes(rows))
        written.append(path)
        # Per-setting copies back the card's `pre_retrieval` / `post_retrieval` configs.
        for setting in SETTINGS:
            path = out_dir / "data" / setting / f"{split}.parquet"
            write_bytes(path, parquet_bytes([r for r in rows if r["setting"] == setting]))
            written.append(path)
    for name, rows in (extra_files or {}).items():
        path = out_dir / name
        write_jsonl(path, rows)
        written.append(path)
    for name, data in sorted(assets.items()):  # the card's pictures
        write_bytes(out_dir / name, data)
        written.append(out_dir / name)
    write_text(out_dir / "README.md", card)
    written.append(out_dir / "README.md")
    manifest = dict(manifest)
    manifest["files"] = {p.relative_to(out_dir).as_posix(): sha256_file(p) for p in sorted(written)}
    write_json(out_dir / "manifest.json", manifest)


def _swap_in(stage: Path, out_dir: Path) -> None:
    if not out_dir.exists():
        os.rename(stage, out_dir)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent))
    os.rename(out_dir, old / out_dir.name)
    os.rename(stage, out_dir)
    shutil.rmtree(old, ignore_errors=True)


_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)[^)]*\)")


def card_links(card: str) -> list[str]:
    """Relative links of a card (images and markdown links; not URLs or anchors)."""
    return [t for t in _LINK.findall(card) if not re.match(r"^(?:[a-z][a-z0-9+.-]*:|#|/)", t)]


def check_release(release_dir: Path, where: Path | None = None) -> dict[str, int]:
    """Read every parquet file back and validate every row, as a user gets it, against the record schema; check
    that the per-setting copies hold the split's records and that every relative link of the card resolves.
    Returns rows checked per file; raises ReleaseError naming the file, row, id and field."""
    from builder.validate import fast_validator, problems

    release_dir = Path(release_dir)
    shown = Path(where) if where else release_dir
    fast, checked = fast_validator(), {}
    for path in sorted((release_dir / "data").rglob("*.parquet")):
        rel = path.relative_to(release_dir).as_posix()
        rows = pq.read_table(path).to_pylist()
        for i, row in enumerate(rows):
            if not fast.is_valid(row):
                found = problems(row) or [{"pointer": "/", "message": "rejected by the schema (jsonschema-rs)"}]
                raise ReleaseError(f"{shown / rel}: row {i} (id {row.get('id')}): field {found[0]['pointer']}: "
                                   f"{found[0]['message']}; the published record does not match "
                                   "schemas/clariedge.schema.json, so no release was written")
        checked[rel] = len(rows)
    for split in SPLITS:
        whole = checked.get(f"data/{split}.parquet", 0)
        parts = sum(checked.get(f"data/{st}/{split}.parquet", 0) for st in SETTINGS)
        if whole != parts:
            raise ReleaseError(f"{shown}/data: {split} has {whole} rows but its per-setting copies {parts}; "
                               "no release was written")
    card = (release_dir / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---", 2)[1]) if card.startswith("---") else {}
    data_files = [f["path"] for c in (header or {}).get("configs", []) for f in c.get("data_files", [])
                  if isinstance(f, dict) and "*" not in str(f.get("path", "*"))]  # globs are the curator's
    for target in card_links(card) + data_files:
        if not (release_dir / target.split("#")[0]).is_file():
            raise ReleaseError(f"{shown / 'README.md'}: links {target}, which the release lacks; "
                               "no release was written")
    return checked


def load_release(release_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """All records of a release, by split."""
    return {s: read_parquet_records(Path(release_dir) / "data" / f"{s}.parquet") for s in SPLITS}
