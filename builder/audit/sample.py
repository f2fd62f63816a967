"""Stratified, seeded sample of a release, exported for annotators as JSONL, CSV and Label Studio tasks."""

from __future__ import annotations

import csv
import io
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.audit import render
from builder.audit.release import AuditRelease, field_value, strip_split
from builder.errors import InputError
from builder.io import write_json, write_jsonl, write_text

DEFAULT_STRATIFY = ("label", "category", "domain", "setting")
ALLOCATIONS = ("equal", "proportional")
# Columns the annotator fills in, shared by the CSV export and the importer.
ANSWER_COLUMNS = (
    "annotator",
    "needs_clarification",
    "category",
    "clarification_acceptable",
    "suggested_clarification",
    "interpretations",
    "comment",
    "annotated_at",
)
CONTEXT_COLUMNS = ("record_id", "split", "domain", "setting", "history", "documents", "query", "proposed_clarification")
CSV_COLUMNS = CONTEXT_COLUMNS + ANSWER_COLUMNS
EXCEL_CELL_LIMIT = 32_767
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class Sample:
    ids: list[str]  # in presentation order
    strata: dict[str, dict[str, int]]  # stratum key -> {"available", "sampled"}
    stratify: tuple[str, ...]
    seed: int
    allocation: str


def stratum_key(record: dict[str, Any], fields: tuple[str, ...]) -> str:
    return "|".join(field_value(record, f) for f in fields)


def allocate(sizes: dict[str, int], n: int, allocation: str, rng: random.Random) -> dict[str, int]:
    """How many to draw from each stratum. `equal`: the same quota each, capped at the stratum size,
    with the leftover spread over the rest (rare categories get enough to measure). `proportional`:
    largest remainder."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    keys = sorted(sizes)
    quota = {k: 0 for k in keys}
    if allocation == "proportional":
        exact = {k: n * sizes[k] / total for k in keys}
        for k in keys:
            quota[k] = int(exact[k])
        left = n - sum(quota.values())
        # Ties in the remainder go to a seeded order, not to alphabetical luck.
        order = sorted(keys, key=lambda k: (-(exact[k] - quota[k]), rng.random()))
        for k in order[:left]:
            quota[k] += 1
        return quota
    remaining = n
    open_keys = [k for k in keys if sizes[k] > 0]
    while remaining > 0 and open_keys:
        share = remaining // len(open_keys)
        if share == 0:
            for k in rng.sample(open_keys, remaining):
                quota[k] += 1
            break
        for k in open_keys:
            give = min(share, sizes[k] - quota[k])
            quota[k] += give
            remaining -= give
        open_keys = [k for k in open_keys if quota[k] < sizes[k]]
    return quota


def draw_sample(
    release: AuditRelease,
    n: int,
    stratify: tuple[str, ...] = DEFAULT_STRATIFY,
    seed: int = 0,
    allocation: str = "equal",
    splits: tuple[str, ...] | None = None,
) -> Sample:
    if n < 1:
        raise InputError(f"--n must be at least 1 (got {n})")
    if allocation not in ALLOCATIONS:
        raise InputError(f"--allocation: unknown value '{allocation}' (expected one of {', '.join(ALLOCATIONS)})")
    pool = [release.records[i] for i in release.ordered if splits is None or release.records[i]["split"] in splits]
    if not pool:
        raise InputError(f"{release.path}: no records to sample from (splits: {', '.join(splits or ())})")
    for field in stratify:
        if field != "label" and field not in pool[0]:
            raise InputError(f"--stratify: unknown field '{field}' (use label or a record field such as category, domain, setting, split)")
    groups: dict[str, list[str]] = defaultdict(list)
    for record in pool:
        groups[stratum_key(record, stratify)].append(record["id"])
    rng = random.Random(seed)
    quota = allocate({k: len(v) for k, v in groups.items()}, n, allocation, rng)
    chosen: list[str] = []
    for key in sorted(groups):
        ids = sorted(groups[key])  # independent of file order
        chosen.extend(random.Random(f"{seed}|{key}").sample(ids, quota[key]))
    chosen.sort()
    rng.shuffle(chosen)  # annotators should not see the strata as blocks
    strata = {k: {"available": len(groups[k]), "sampled": quota[k]} for k in sorted(groups)}
    return Sample(chosen, strata, tuple(stratify), seed, allocation)


def spreadsheet_cell(text: str) -> str:
    """Keep display cells inert and within Excel's cell limit; the JSONL keeps the full text."""
    if text.startswith(FORMULA_START):
        text = "'" + text
    if len(text) > EXCEL_CELL_LIMIT:
        marker = " …[truncated; full text in sample.jsonl]"
        text = text[: EXCEL_CELL_LIMIT - len(marker)] + marker
    return text


def csv_text(records: list[dict[str, Any]]) -> str:
    """UTF-8 with BOM (Excel detects the encoding), every cell quoted, CRLF rows, readable history/passages."""
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for r in records:
        context = [
            r["id"],
            r["split"],
            r["domain"],
            r["setting"],
            spreadsheet_cell(render.history_text(r)),
            spreadsheet_cell(render.documents_text(r)),
            spreadsheet_cell(r["query"]),
            spreadsheet_cell(render.proposed_clarification(r)),
        ]
        writer.writerow(context + [""] * len(ANSWER_COLUMNS))
    return "\ufeff" + buf.getvalue()


def label_studio_tasks(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Import file for the project set up with annotations/label_studio_config.xml."""
    return [
        {
            "data": {
                "record_id": r["id"],
                "split": r["split"],
                "domain": r["domain"],
                "setting": r["setting"],
                "history": render.history_paragraphs(r),
                "documents": render.documents_text(r),
                "query": r["query"],
                "proposed_clarification": render.proposed_clarification(r),
            }
        }
        for r in records
    ]


def export_sample(release: AuditRelease, sample: Sample, out_dir: Path) -> dict[str, Path]:
    out_dir = Path(out_dir)
    records = [release.records[i] for i in sample.ids]
    paths = {
        "jsonl": out_dir / "sample.jsonl",
        "csv": out_dir / "sample.csv",
        "label_studio": out_dir / "label_studio_tasks.json",
        "manifest": out_dir / "sample.json",
    }
    # JSONL keeps the whole record (labels included) for curators; the CSV and tasks are blind.
    write_jsonl(paths["jsonl"], ({"split": r["split"], "record": strip_split(r)} for r in records))
    write_text(paths["csv"], csv_text(records))
    write_json(paths["label_studio"], label_studio_tasks(records))
    write_json(
        paths["manifest"],
        {
            "release": {"name": release.name, "version": release.version, "path": str(release.path)},
            "n": len(sample.ids),
            "seed": sample.seed,
            "stratify": list(sample.stratify),
            "allocation": sample.allocation,
            "strata": sample.strata,
            "ids": sample.ids,
        },
    )
    return paths
