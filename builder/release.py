"""Release stage: write `dist/<name>/<version>/` with parquet splits, a dataset card and a manifest."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from builder.io import atomic_path, write_bytes, write_json, write_jsonl, write_text
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


def parquet_bytes(records: list[dict[str, Any]]) -> bytes:
    """Serialize records to parquet deterministically (fixed schema, no timestamps)."""
    table = pa.Table.from_pylist(records, schema=ARROW_SCHEMA)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", write_statistics=False)
    return sink.getvalue()


def read_parquet_records(path: Path) -> list[dict[str, Any]]:
    """Records back from a release parquet file, with absent optional fields dropped as the schema expects."""
    rows = pq.read_table(path).to_pylist()
    for row in rows:
        # Parquet structs carry every field; the schema wants absent optional provenance fields left out.
        row["provenance"] = {k: v for k, v in row["provenance"].items() if v is not None}
    return rows


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
) -> Path:
    """Write a release directory; the manifest gets the sha256 of every file written before it."""
    out_dir = Path(out_dir)
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
    write_text(out_dir / "README.md", card)
    written.append(out_dir / "README.md")
    manifest = dict(manifest)
    manifest["files"] = {p.relative_to(out_dir).as_posix(): sha256_file(p) for p in sorted(written)}
    write_json(out_dir / "manifest.json", manifest)
    return out_dir


def load_release(release_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """All records of a release, by split."""
    return {s: read_parquet_records(Path(release_dir) / "data" / f"{s}.parquet") for s in SPLITS}
