"""The normalized input: grounded conversations (`schemas/conversation.schema.json`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Passage:
    id: str
    text: str
    title: str = ""
    relevant: bool | None = None

    def as_document(self) -> dict[str, str]:
        return {"id": self.id, "title": self.title, "text": self.text}


@dataclass
class Turn:
    role: str  # "user" | "assistant"
    text: str
    passages: list[Passage] = field(default_factory=list)
    rewrite: str | None = None
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class Conversation:
    id: str
    domain: str
    turns: list[Turn]
    source: dict[str, str] = field(default_factory=dict)

    def user_turn_indices(self) -> list[int]:
        return [i for i, t in enumerate(self.turns) if t.role == "user"]

    def to_dict(self) -> dict[str, Any]:
        turns = []
        for t in self.turns:
            turn: dict[str, Any] = {"role": t.role, "text": t.text}
            if t.passages:
                turn["passages"] = [
                    {k: v for k, v in vars(p).items() if v is not None and v != ""} | {"id": p.id, "text": p.text}
                    for p in t.passages
                ]
            if t.rewrite:
                turn["rewrite"] = t.rewrite
            if t.labels:
                turn["labels"] = dict(t.labels)
            turns.append(turn)
        out: dict[str, Any] = {"id": self.id, "domain": self.domain, "turns": turns}
        if self.source:
            out["source"] = dict(self.source)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Conversation":
        turns = [
            Turn(
                role=t["role"],
                text=t["text"],
                passages=[
                    Passage(id=p["id"], text=p["text"], title=p.get("title") or "", relevant=p.get("relevant"))
                    for p in t.get("passages") or []
                ],
                rewrite=t.get("rewrite"),
                labels=dict(t.get("labels") or {}),
            )
            for t in data["turns"]
        ]
        return cls(id=data["id"], domain=data["domain"], turns=turns, source=dict(data.get("source") or {}))
