"""Dataset card (README.md) for a release: YAML header with `configs`, then statistics tables."""

from __future__ import annotations

from collections import Counter
from typing import Any

import yaml

from builder.record import SETTINGS, SPLITS


def size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "n>1M"


def card_metadata(total: int, license: str, pretty_name: str, source_datasets: list[str]) -> dict[str, Any]:
    configs = [
        {
            "config_name": "default",
            "default": True,
            "data_files": [{"split": s, "path": f"data/{s}.parquet"} for s in SPLITS],
        }
    ] + [
        {"config_name": setting, "data_files": [{"split": s, "path": f"data/{setting}/{s}.parquet"} for s in SPLITS]}
        for setting in SETTINGS
    ]
    return {
        "pretty_name": pretty_name,
        "license": license,
        "language": ["en"],
        "task_categories": ["text-classification", "text-generation"],
        "size_categories": [size_category(total)],
        "source_datasets": source_datasets,
        "configs": configs,
    }


def count_table(splits: dict[str, list[dict[str, Any]]], field: str) -> str:
    """Markdown table: one row per value of `field`, one column per split."""
    counts = {s: Counter(_value(r, field) for r in splits.get(s, [])) for s in SPLITS}
    values = sorted(set().union(*counts.values()))
    lines = [f"| {field} | " + " | ".join(SPLITS) + " | total |", "|---|" + "---:|" * (len(SPLITS) + 1)]
    for v in values:
        row = [counts[s][v] for s in SPLITS]
        lines.append(f"| {v} | " + " | ".join(str(n) for n in row) + f" | {sum(row)} |")
    return "\n".join(lines)


def _value(record: dict[str, Any], field: str) -> str:
    if field == "label":
        return "needs_clarification" if record["needs_clarification"] else "clear"
    return str(record[field])


def render_card(
    splits: dict[str, list[dict[str, Any]]],
    *,
    name: str,
    version: str,
    license: str,
    source_datasets: list[str],
    methods: dict[str, str],
    body_sections: dict[str, str] | None = None,
) -> str:
    total = sum(len(v) for v in splits.values())
    meta = card_metadata(total, license, f"ClariEdge ({name})", source_datasets)
    header = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).strip()
    tables = "\n\n".join(f"### By {f}\n\n{count_table(splits, f)}" for f in ("label", "setting", "category", "domain"))
    generators = "\n".join(f"- `{m}` version {v}" for m, v in sorted(methods.items()))
    sections = [
        f"# ClariEdge: {name} {version}",
        "Grounded multi-turn examples that teach a RAG assistant when to ask a clarifying question "
        "instead of guessing. Each record is labelled *needs clarification* (with the question to ask) "
        'or *clear*; the model target is `{"clarification": "<question>"}` or `{"clarification": "CLEAR"}`.',
        "## Fields\n\n"
        "`id`, `domain`, `setting` (`pre_retrieval` / `post_retrieval`), `history` (role, content), `query`, "
        "`documents` (id, title, text; empty before retrieval), `needs_clarification`, `category`, "
        "`interpretations`, `target`, `clarification_pattern`, `resolution` (what resolves a hard negative), "
        "`pair_id` (links contrastive twins), `provenance`.",
        f"## Statistics\n\nTotal records: {total}.\n\n{tables}",
        f"## How it was built\n\nGenerators:\n\n{generators}",
        "## Loading\n\n```python\nfrom datasets import load_dataset\n"
        'ds = load_dataset("path/or/repo")                     # default config\n'
        'pre = load_dataset("path/or/repo", "pre_retrieval")   # one setting\n```',
    ]
    for title, text in (body_sections or {}).items():
        sections.append(f"## {title}\n\n{text}")
    return f"---\n{header}\n---\n\n" + "\n\n".join(sections) + "\n"
