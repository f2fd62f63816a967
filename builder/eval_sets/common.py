"""Shared helpers: build a record dict from benchmark fields."""

from __future__ import annotations

from typing import Any

from builder.record import CLEAR, Record

METHOD = "benchmark_adapter"
METHOD_VERSION = "1"


def make_record(
    *,
    source: str,
    conversation_id: str,
    turn: int,
    domain: str,
    history: list[dict[str, str]],
    query: str,
    documents: list[dict[str, str]],
    needs_clarification: bool,
    clarification: str | None,
    positive_category: str = "multiple_interpretations",
    interpretations: list[str] | None = None,
) -> dict[str, Any]:
    record = Record(
        domain=domain,
        setting="post_retrieval" if documents else "pre_retrieval",
        history=history,
        query=query,
        documents=documents,
        needs_clarification=needs_clarification,
        category=positive_category if needs_clarification else "clear",
        interpretations=list(interpretations or []),
        target={"clarification": clarification if needs_clarification else CLEAR},
        provenance={
            "source_dataset": source,
            "conversation_id": conversation_id,
            "turn": max(1, int(turn)),
            "method": METHOD,
            "method_version": METHOD_VERSION,
            "seed": 0,
            "label_source": "human",
        },
    )
    return record.to_dict()


def norm(text: str) -> str:
    """Whitespace- and case-insensitive form used to match turns across datasets."""
    return " ".join(text.split()).casefold()
