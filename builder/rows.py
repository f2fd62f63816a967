"""Side rows: what the stages write beside the records, so that every input ends kept, rejected or deduplicated.

One small type per kind of row, each with the `to_dict` that the stage file (or accounting.jsonl) holds. The
rows are read back as plain dicts. A generator's own rejection is `builder.synthesize.rejection.Rejection`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Duplicate:
    """A record dedup dropped (duplicates.jsonl): the same example as `kept_id`."""

    id: str
    kept_id: str
    score: float  # rapidfuzz ratio of the two normalized queries; 100 for an exact duplicate
    reason: str  # "exact duplicate" or "near duplicate"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kept_id": self.kept_id, "score": self.score, "reason": self.reason}


@dataclass(frozen=True)
class Quarantined:
    """A candidate the schema turned down (quarantine.jsonl): every violation, and the record as it was."""

    id: str | None  # None when the record has no id at all
    errors: list[dict[str, str]]  # {pointer, message}, deepest first
    record: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "errors": self.errors, "record": self.record}


@dataclass(frozen=True)
class SplitDrop:
    """A record the split stage dropped (split_dropped.jsonl), with its reason."""

    id: str
    split: str | None  # the split it had been placed in; None when dropped before the assignment
    kept_id: str | None  # the record in another split its query matches, for a near-duplicate across splits
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "split": self.split, "kept_id": self.kept_id, "reason": self.reason}


@dataclass(frozen=True)
class Assignment:
    """A record and the split it went to (split.jsonl)."""

    split: str
    record: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"split": self.split, "record": self.record}


@dataclass(frozen=True)
class AccountingRow:
    """One row of accounting.jsonl: a candidate, a generator's rejection, or a turn no generator took.

    kept carries `split`; deduplicated `kept_id` and `score`; rejected `reason` (and `query` when no record
    was made). A field that does not apply is left out of the row.
    """

    conversation_id: str
    turn: int
    method: str | None  # None for a turn no generator applies to
    id: str | None  # None when no record was made
    status: str  # "kept", "deduplicated" or "rejected"
    split: str | None = None
    kept_id: str | None = None
    score: float | None = None
    reason: str | None = None
    query: str | None = None

    def to_dict(self) -> dict[str, Any]:
        row = {"conversation_id": self.conversation_id, "turn": self.turn, "method": self.method, "id": self.id,
               "status": self.status}
        for key in ("split", "kept_id", "score", "reason", "query"):
            if (value := getattr(self, key)) is not None:
                row[key] = value
        return row

    def sort_key(self) -> tuple:
        return (self.conversation_id, self.turn, self.method or "", self.id or "", self.reason or "")
