"""CLAMBER (Zhang et al., ACL 2024): `clamber_benchmark.jsonl`, each line a JSON-encoded string of an object.

Fields used: `question`, `require_clarification` (0/1), `clarifying_question`; `category` (when
present) becomes the domain, and a non-empty `context` the one document. Plain-object lines are accepted too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builder.eval_sets.common import make_record
from builder.errors import InputError
from builder.io import iter_jsonl


def load(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    records = [_record(path, lineno, line) for lineno, line in iter_jsonl(path)]
    return records, {}


def _record(path: Path, lineno: int, line: Any) -> dict[str, Any]:
    where = f"{path}:{lineno}"
    item = line
    if isinstance(line, str):
        try:
            item = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{where}: the JSON string does not hold JSON ({err.msg})") from None
    if not isinstance(item, dict):
        raise InputError(f"{where}: expected an object (or a JSON string of one)")
    for key in ("question", "require_clarification"):
        if key not in item:
            raise InputError(f"{where}: missing field '{key}'")
    flag = item["require_clarification"]
    if flag not in (0, 1, True, False, "0", "1"):
        raise InputError(f"{where}: field 'require_clarification' is {flag!r}, expected 0 or 1")
    needs = str(int(flag)) == "1" if not isinstance(flag, str) else flag == "1"
    question = item.get("clarifying_question")
    if needs and not (isinstance(question, str) and question.strip()):
        raise InputError(f"{where}: require_clarification is 1 but 'clarifying_question' is empty")
    context = item.get("context")
    context = context.strip() if isinstance(context, str) else ""
    documents = [{"id": f"clamber-{lineno}#context", "title": "", "text": context}] if context else []
    return make_record(
        source="clamber",
        conversation_id=f"clamber-{lineno}",
        turn=1,
        domain=str(item.get("category") or "clamber"),
        history=[],
        query=str(item["question"]).strip(),
        documents=documents,
        needs_clarification=needs,
        clarification=question.strip() if needs else None,
    )
