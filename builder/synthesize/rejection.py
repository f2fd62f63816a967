"""A candidate a generator's self-check turned down, with the reason (it ends in the accounting, never lost)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Rejection:
    method: str
    reason: str
    conversation_id: str
    turn: int
    query: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
