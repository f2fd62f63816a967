"""Records as text for people (spreadsheets, Label Studio) and for the LLM judge."""

from __future__ import annotations

from typing import Any

NO_HISTORY = "(no earlier turns: this is the first user turn)"
NO_DOCUMENTS = "(no passages: pre-retrieval setting, judge from the conversation alone)"


def history_text(record: dict[str, Any]) -> str:
    if not record["history"]:
        return NO_HISTORY
    return "\n\n".join(f"{turn['role'].upper()}: {turn['content']}" for turn in record["history"])


def history_paragraphs(record: dict[str, Any]) -> list[dict[str, str]]:
    """Label Studio <Paragraphs> data: [{author, text}], never empty (the tag needs one item)."""
    if not record["history"]:
        return [{"author": "note", "text": NO_HISTORY}]
    return [{"author": turn["role"], "text": turn["content"]} for turn in record["history"]]


def documents_text(record: dict[str, Any]) -> str:
    if not record["documents"]:
        return NO_DOCUMENTS
    parts = []
    for i, doc in enumerate(record["documents"], start=1):
        title = f" {doc['title']}" if doc.get("title") else ""
        parts.append(f"[{i}]{title} ({doc['id']})\n{doc['text']}")
    return "\n\n".join(parts)


def proposed_clarification(record: dict[str, Any]) -> str:
    return record["target"]["clarification"]
