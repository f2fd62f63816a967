"""MTRAG-UN (IBM mt-rag-benchmark, `mtragun-human/generation_tasks/reference.jsonl`).

One task per line: `input` is the conversation (last item = the query), `contexts` the passages,
`answerability` a one-item list; UNDERSPECIFIED needs clarification with `targets[0].text` as the
reference, everything else (ANSWERABLE, PARTIAL, UNANSWERABLE) is clear.
Tasks whose first user turn equals the first user turn of a build-input conversation are dropped:
they share a conversation with the training source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder.eval_sets.common import make_record, norm
from builder.errors import InputError
from builder.io import iter_jsonl, read_json, read_text

ANSWERABILITY = ("ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED")
ROLES = {"user": "user", "agent": "assistant", "assistant": "assistant"}
DOMAINS = ("clapnq", "fiqa", "govt", "cloud")


def load(path: Path, *, build_input: str | Path | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    if build_input is None:
        raise InputError(
            "--benchmark mtragun needs --build-input (the MTRAG conversations the release was built from) "
            "to drop the tasks that overlap with it"
        )
    seen_first = first_user_turns(Path(build_input))
    records, dropped = [], []
    for lineno, task in iter_jsonl(path):
        record = _record(path, lineno, task)
        first = next((h["content"] for h in record["history"] if h["role"] == "user"), record["query"])
        if norm(first) in seen_first:
            dropped.append(task.get("task_id"))
            continue
        records.append(record)
    info = {"build_input": str(build_input), "dropped_overlap": len(dropped), "dropped_task_ids": dropped}
    return records, info


def _record(path: Path, lineno: int, task: Any) -> dict[str, Any]:
    where = f"{path}:{lineno}"
    if not isinstance(task, dict):
        raise InputError(f"{where}: expected a JSON object")
    for key in ("task_id", "input", "answerability"):
        if key not in task:
            raise InputError(f"{where} (task {task.get('task_id')!r}): missing field '{key}'")
    where = f"{path}:{lineno} (task {task['task_id']!r})"
    turns = task["input"]
    if not isinstance(turns, list) or not turns:
        raise InputError(f"{where}: field 'input' must be a non-empty list of turns")
    history = []
    for i, turn in enumerate(turns):
        role = ROLES.get(str(turn.get("speaker", "")).lower())
        if role is None or not isinstance(turn.get("text"), str):
            raise InputError(f"{where}: input[{i}] needs speaker user|agent and a text")
        history.append({"role": role, "content": turn["text"]})
    last = history.pop()
    if last["role"] != "user":
        raise InputError(f"{where}: the last item of 'input' is not a user turn")
    labels = task["answerability"]
    labels = labels if isinstance(labels, list) else [labels]
    bad = [a for a in labels if a not in ANSWERABILITY]
    if len(labels) != 1 or bad:
        raise InputError(f"{where}: field 'answerability' is {task['answerability']!r}; expected one of {ANSWERABILITY}")
    needs = labels[0] == "UNDERSPECIFIED"
    targets = [t.get("text", "") for t in task.get("targets") or [] if isinstance(t, dict)]
    if needs and not (targets and targets[0].strip()):
        raise InputError(f"{where}: UNDERSPECIFIED but 'targets[0].text' (the reference clarification) is empty")
    documents = [
        {"id": str(c.get("document_id") or f"{task['task_id']}#{i}"), "title": c.get("title") or "", "text": c["text"]}
        for i, c in enumerate(task.get("contexts") or [])
        if isinstance(c, dict) and (c.get("text") or "").strip()
    ]
    return make_record(
        source="mtrag-un",
        conversation_id=str(task.get("conversation_id") or task["task_id"]),
        turn=int(task.get("turn") or 1),
        domain=_domain(str(task.get("Collection") or "")),
        history=[h for h in history if h["content"].strip()],
        query=last["content"],
        documents=documents,
        needs_clarification=needs,
        clarification=targets[0].strip() if needs else None,
        positive_category="underspecified_entity",
    )


def _domain(collection: str) -> str:
    lowered = collection.lower()
    for name in DOMAINS:
        if name in lowered:
            return "ibmcloud" if name == "cloud" else name
    return collection or "mtrag-un"


def first_user_turns(path: Path) -> set[str]:
    """Normalized first user turns of the build input.

    Accepts MTRAG's raw `conversations.json` (a list with `messages[{speaker, text}]`), or normalized
    conversations (`schemas/conversation.schema.json`: JSON list or JSONL with `turns[{role, text}]`),
    or a folder holding `conversations/conversations.json`.
    """
    if path.is_dir():
        path = path / "conversations" / "conversations.json"
    text = read_text(path)
    items = read_json(path) if text.lstrip().startswith("[") else [obj for _, obj in iter_jsonl(path)]
    firsts = set()
    for i, conv in enumerate(items):
        turns = conv.get("messages") or conv.get("turns") if isinstance(conv, dict) else None
        if not isinstance(turns, list):
            raise InputError(f"{path}: conversation {i + 1} has neither 'messages' nor 'turns'")
        for turn in turns:
            if (turn.get("speaker") or turn.get("role")) == "user":
                firsts.add(norm(turn.get("text") or turn.get("content") or ""))
                break
    return firsts
