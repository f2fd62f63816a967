"""Abg-CoQA (Guo et al., AKBC 2021): `{"data": [...]}` with story, history_turns, target_turn, ambiguity.

The story is the one document (post-retrieval setting); history turns become user/assistant pairs;
`ambiguous` needs clarification, with `clarification_turn.question` as the reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder.eval_sets.common import make_record
from builder.errors import InputError
from builder.io import read_json

LABELS = {"ambiguous": True, "non_ambiguous": False}


def load(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    data = read_json(path)
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InputError(f"{path}: expected a JSON object with a 'data' list (Abg-CoQA format)")
    return [_record(path, i, item) for i, item in enumerate(items)], {}


def _record(path: Path, index: int, item: Any) -> dict[str, Any]:
    where = f"{path}: data[{index}]"
    if not isinstance(item, dict):
        raise InputError(f"{where}: not an object")
    for key in ("id", "story", "target_turn", "history_turns", "ambiguity"):
        if key not in item:
            raise InputError(f"{where} (id {item.get('id')!r}): missing field '{key}'")
    where = f"{path}: data[{index}] (id {item['id']!r})"
    if item["ambiguity"] not in LABELS:
        raise InputError(f"{where}: field 'ambiguity' is {item['ambiguity']!r}, expected ambiguous or non_ambiguous")
    needs = LABELS[item["ambiguity"]]
    question = (item.get("clarification_turn") or {}).get("question")
    if needs and not (isinstance(question, str) and question.strip()):
        raise InputError(f"{where}: ambiguous but 'clarification_turn.question' is missing")
    history = []
    for turn in item["history_turns"]:
        history.append({"role": "user", "content": turn["question"]})
        history.append({"role": "assistant", "content": turn["answer"]})
    target = item["target_turn"]
    conversation_id = str(item["id"])
    return make_record(
        source="abg-coqa",
        conversation_id=conversation_id,
        turn=int(target.get("turn_id", 1)),
        domain=str(item.get("source") or "abg-coqa"),
        history=[h for h in history if h["content"].strip()],
        query=target["question"],
        documents=[{"id": f"{conversation_id}#story", "title": str(item.get("source") or ""), "text": item["story"]}],
        needs_clarification=needs,
        clarification=question.strip() if needs else None,
    )
