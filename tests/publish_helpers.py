"""Schema-valid hand-made records and releases for the publish, diff and versioning tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from builder.release.card import card_assets, render_card
from builder.release.versioning import schema_sha256
from builder.record import SPLITS, Record
from builder.release import write_release

DOMAINS = ("govt", "fiqa")


def make_record(i: int, *, setting: str = "post_retrieval", positive: bool = False, query: str | None = None) -> dict[str, Any]:
    docs = [] if setting == "pre_retrieval" else [{"id": f"doc-{i}", "title": f"Doc {i}", "text": f"Passage number {i}."}]
    common = dict(
        domain=DOMAINS[i % 2],
        setting=setting,
        history=[{"role": "user", "content": f"Tell me about topic {i}."}, {"role": "assistant", "content": "Sure."}],
        query=query or f"What about it, case {i}?",
        documents=docs,
        provenance={
            "source_dataset": "mtrag",
            "conversation_id": f"conv-{i}",
            "turn": 2,
            "method": "reference_ablation",
            "method_version": "1.0",
            "seed": 13,
            "label_source": "generator",
            "prompt": {"name": "clarify", "version": "2", "sha256": "ab" * 32},
        },
    )
    if positive:
        rec = Record(
            needs_clarification=True,
            category="unresolved_reference",
            interpretations=[f"topic {i}", f"topic {i + 1}"],
            target={"clarification": f"Do you mean topic {i} or topic {i + 1}?"},
            clarification_pattern="list",
            **common,
        )
    else:
        rec = Record(needs_clarification=False, category="clear", interpretations=[], target={"clarification": "CLEAR"}, **common)
    return rec.to_dict()


def make_splits(n: int = 12, offset: int = 0) -> dict[str, list[dict[str, Any]]]:
    """n records over three splits, both settings, both labels."""
    splits: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    for i in range(offset, offset + n):
        setting = "pre_retrieval" if (i // 3) % 2 == 0 else "post_retrieval"
        splits[SPLITS[i % 3]].append(make_record(i, setting=setting, positive=i % 2 == 0))
    return splits


def relabel(record: dict[str, Any]) -> dict[str, Any]:
    """The same record (same id) with the label flipped to clear."""
    r = copy.deepcopy(record)
    r.update(needs_clarification=False, category="clear", interpretations=[], target={"clarification": "CLEAR"})
    r["clarification_pattern"] = None
    r["provenance"]["label_source"] = "human"
    return r


def write_test_release(root: Path, version: str, splits: dict[str, list[dict[str, Any]]], name: str = "demo") -> Path:
    manifest = {
        "name": name,
        "version": version,
        "seed": 13,
        "schema_sha256": schema_sha256(),
        "license": "apache-2.0",
        "counts": {s: len(v) for s, v in splits.items()},
    }
    card = render_card(
        splits, name=name, version=version, license="apache-2.0", source_datasets=["mtrag"], methods={}
    )
    return write_release(root / name / version, splits, manifest, card, assets=card_assets(splits))
