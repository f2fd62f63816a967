"""The ClariEdge record: the schema's Python mirror, and the label rule.

The contract is `schemas/clariedge.schema.json`. Generators build `Record`s; from synthesize on, the stages
(validate, dedup, split, release, and audit/evaluate/train after them) pass plain record dicts as read from
and written to JSONL/parquet, not `Record`s: validation runs on the dicts exactly as they will be written.
Whatever the form, the label is `label_of(record)` and canonical JSON is `builder.io.dumps`.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from builder.io import dumps

CLEAR = "CLEAR"
POSITIVE_CATEGORIES = (
    "unresolved_reference",
    "underspecified_entity",
    "missing_parameter",
    "ill_formed",
    "multiple_interpretations",
)
NEGATIVE_CATEGORIES = ("hard_negative", "clear")
SETTINGS = ("pre_retrieval", "post_retrieval")
SPLITS = ("train", "validation", "test")


@dataclass
class Record:
    domain: str
    setting: str
    history: list[dict[str, str]]
    query: str
    documents: list[dict[str, str]]
    needs_clarification: bool
    category: str
    interpretations: list[str]
    target: dict[str, str]
    provenance: dict[str, Any]
    resolution: dict[str, Any] | None = None
    pair_id: str | None = None
    clarification_pattern: str | None = None
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            self.id = record_id(self)

    @property
    def label(self) -> str:
        return label_of(self)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Record":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def label_of(record: Record | dict[str, Any]) -> str:
    """`needs_clarification` or `clear`, for a Record or a record dict: the one label rule."""
    needs = record.needs_clarification if isinstance(record, Record) else record["needs_clarification"]
    return "needs_clarification" if needs else "clear"


def method_of(record: dict[str, Any]) -> str:
    """The generator that made the record (its provenance method)."""
    return record["provenance"]["method"]


def record_id(record: Record) -> str:
    """Stable id from content and provenance; labels and targets are left out so a relabel keeps the id."""
    prov = record.provenance
    key = {
        "setting": record.setting,
        "history": record.history,
        "query": record.query,
        "documents": [d["id"] for d in record.documents],
        "source": [prov.get("source_dataset"), prov.get("conversation_id"), prov.get("turn")],
        "method": prov.get("method"),
        "history_source": prov.get("history_source"),
    }
    return "ce-" + hashlib.sha256(dumps(key).encode("utf-8")).hexdigest()[:16]


def clear_target() -> dict[str, str]:
    return {"clarification": CLEAR}


def model_output(record: dict[str, Any]) -> str:
    """The exact string a model is trained to emit: the target as compact JSON."""
    return dumps(record["target"])


def conversations_of(record: dict[str, Any]) -> set[str]:
    """The source conversations a record draws on: its query's, its history's and its documents'."""
    prov = record["provenance"]
    convs = {prov["conversation_id"]}
    hs = prov.get("history_source") or {}
    if hs.get("conversation_id"):
        convs.add(hs["conversation_id"])
    convs.update(prov.get("document_sources") or [])
    return convs


def topic_switch(record: dict[str, Any]) -> bool:
    """The record is asked after another conversation's history: the question switches topic."""
    prov = record["provenance"]
    source = (prov.get("history_source") or {}).get("conversation_id")
    return len(record["history"]) > 0 and bool(source) and source != prov["conversation_id"]
