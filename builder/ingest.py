"""Ingest stage: grounded conversations (MTRAG or the generic JSONL format) -> normalized conversations."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from builder.conversation import Conversation, Passage, Turn
from builder.errors import InputError
from builder.io import iter_jsonl, read_json, read_text
from builder.resources import load_schema

MAX_REPORTED = 20
_MTRAG_DOMAINS = {"clapnq": "clapnq", "govt": "govt", "fiqa": "fiqa", "ibmcloud": "ibmcloud", "cloud": "ibmcloud"}


def demo_corpus() -> Path:
    """The embedded demo corpus, shipped inside the package."""
    return Path(__file__).resolve().parent / "data" / "demo" / "conversations.jsonl"


def detect_format(path: Path) -> str:
    """'mtrag' for a JSON array of MTRAG conversations, else 'generic' (JSONL)."""
    head = read_text(path).lstrip()[:1]
    return "mtrag" if head == "[" else "generic"


def ingest(path: Path | None, fmt: str = "auto", retrieval_tasks: Path | None = None) -> list[Conversation]:
    """One obvious entry point: read conversations from `path` (None = the embedded demo corpus)."""
    path = Path(path) if path else demo_corpus()
    if fmt == "auto":
        fmt = detect_format(path)
    conversations = read_mtrag(path, retrieval_tasks) if fmt == "mtrag" else read_generic(path)
    _check_unique_ids(conversations, path)
    return conversations


# --- generic JSONL ---------------------------------------------------------------------------------


def read_generic(path: Path) -> list[Conversation]:
    validator = Draft202012Validator(load_schema("conversation.schema.json"))
    problems: list[str] = []
    out: list[Conversation] = []
    for lineno, obj in iter_jsonl(path):
        where = f"{path}:{lineno}"
        if isinstance(obj, dict) and obj.get("id"):
            where += f": conversation '{obj['id']}'"
        errors = sorted(validator.iter_errors(obj), key=lambda e: list(e.absolute_path))
        if errors:
            problems.extend(f"{where}: {_describe(e)}" for e in errors[:3])
            continue
        turns = obj["turns"]
        if turns[-1]["role"] != "user":
            problems.append(f"{where}: field 'turns/{len(turns) - 1}/role': the last turn must be a user turn")
            continue
        out.append(Conversation.from_dict(obj))
    if problems:
        raise InputError(_summarize(problems))
    if not out:
        raise InputError(f"{path}: no conversations")
    return out


def _describe(error) -> str:
    field = "/".join(str(p) for p in error.absolute_path) or "(record)"
    if error.validator == "required":
        missing = re.findall(r"'([^']+)' is a required property", error.message)
        name = missing[0] if missing else error.message
        field = f"{field}/{name}" if field != "(record)" else name
        return f"missing required field '{field}'"
    if error.validator in ("minLength", "pattern") and error.instance in ("",) or (
        isinstance(error.instance, str) and not error.instance.strip()
    ):
        return f"field '{field}': empty text"
    if error.validator == "minItems" and error.instance == []:
        return f"field '{field}': empty (a conversation needs at least one turn)"
    return f"field '{field}': {error.message}"


def _summarize(problems: list[str]) -> str:
    shown = problems[:MAX_REPORTED]
    more = len(problems) - len(shown)
    return "\n".join(shown) + (f"\n... and {more} more problems" if more > 0 else "")


def _check_unique_ids(conversations: list[Conversation], path: Path) -> None:
    seen: dict[str, int] = {}
    for n, conv in enumerate(conversations, start=1):
        if conv.id in seen:
            raise InputError(f"{path}: duplicate conversation id '{conv.id}' (records {seen[conv.id]} and {n})")
        seen[conv.id] = n


# --- MTRAG -----------------------------------------------------------------------------------------


def _clean(text: str) -> str:
    return text.replace("|user|:", "").strip()


_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]{2,}")


def repair(text: str) -> str:
    """UTF-8 read as Mac Roman or Windows-1252 in the source ('NASA‚Äôs', 'NASAâ€™s' for 'NASA’s'): each run of
    non-ASCII characters that re-encodes to valid UTF-8 is decoded back; text that is already right ('café',
    '北京') does not re-encode so."""
    def fix(m: re.Match) -> str:
        for codec in ("mac_roman", "cp1252"):
            try:
                return m.group(0).encode(codec).decode("utf-8")
            except (UnicodeEncodeError, UnicodeDecodeError):
                continue
        return m.group(0)

    return _NON_ASCII_RUN.sub(fix, text)


def read_task_files(folder: Path) -> tuple[dict[str, dict[str, list[str]]], dict[str, str]]:
    """From retrieval_tasks/: first user turn -> {conversation id: its user turns}, and '<id><::><turn>' -> rewrite."""
    first_turn: dict[str, dict[str, list[str]]] = {}
    rewrites: dict[str, str] = {}
    for file in sorted(folder.glob("*/*_questions.jsonl")):
        for lineno, obj in iter_jsonl(file):
            task = _field(obj, "_id", file, lineno)
            lines = [_clean(t) for t in _field(obj, "text", file, lineno).split("\n|user|:")]
            known = first_turn.setdefault(lines[0], {})
            cid = task.split("<::>")[0]
            if len(lines) > len(known.get(cid, [])):
                known[cid] = lines
    for file in sorted(folder.glob("*/*_rewrite.jsonl")):
        for lineno, obj in iter_jsonl(file):
            rewrites[_field(obj, "_id", file, lineno)] = _clean(_field(obj, "text", file, lineno))
    if not first_turn:
        raise InputError(f"{folder}: no */*_questions.jsonl files found")
    return first_turn, rewrites


def _match_id(candidates: dict[str, list[str]], user_texts: list[str]) -> str | None:
    """conversations.json has no ids: pick the task conversation whose user turns agree with ours."""
    best, best_score = None, -1
    for cid, turns in sorted(candidates.items()):
        score = sum(a == b for a, b in zip(turns, user_texts))
        if score > best_score:
            best, best_score = cid, score
    return best


def _field(obj: Any, name: str, where: Path, lineno: int | str) -> Any:
    if not isinstance(obj, dict) or name not in obj:
        raise InputError(f"{where}:{lineno}: missing required field '{name}'")
    return obj[name]


def _relevant(context: dict, author: str | None, editor: str | None) -> bool | None:
    """MTRAG relevance rule: the editor's feedback, else the author's."""
    votes = ((context.get("feedback") or {}).get("relevant")) or {}
    for who in (editor, author):
        if who and who in votes:
            return str(votes[who].get("value", "")).lower() == "yes"
    return None


def _title(context: dict) -> str:
    if context.get("title"):
        return context["title"].strip()
    if context.get("url"):  # ibmcloud: the first line is the section heading
        first = context["text"].strip().split("\n")[0].strip()
        return first if len(first) <= 100 else ""
    return ""


def read_mtrag(path: Path, retrieval_tasks: Path | None) -> list[Conversation]:
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON array of MTRAG conversations")
    first_turn, rewrites = read_task_files(Path(retrieval_tasks)) if retrieval_tasks else ({}, {})
    out = []
    for n, raw in enumerate(data):
        where = f"{path}: conversation [{n}]"
        messages = _field(raw, "messages", where, "")
        if not messages:
            raise InputError(f"{where}: field 'messages': empty conversation")
        domain_key = _field(raw, "domain", where, "")
        domain = next((v for k, v in _MTRAG_DOMAINS.items() if f"-{k}-" in f"-{domain_key}-"), domain_key)
        first = _clean(_field(messages[0], "text", where, "messages[0]"))
        user_texts = [_clean(str(x.get("text", ""))) for x in messages if x.get("speaker") == "user"]
        conv_id = _match_id(first_turn.get(first, {}), user_texts) or f"mtrag-{n:04d}"
        turns: list[Turn] = []
        user_no = 0
        for m, msg in enumerate(messages):
            speaker = _field(msg, "speaker", where, f"messages[{m}]")
            text = _field(msg, "text", where, f"messages[{m}]")
            if not str(text).strip():
                raise InputError(f"{where}: field 'messages/{m}/text': empty turn")
            if speaker == "user":
                user_no += 1
                enr = msg.get("enrichments") or {}
                labels = {
                    k: ",".join(enr[src])
                    for k, src in (("multi_turn", "Multi-Turn"), ("answerability", "Answerability"), ("question_type", "Question Type"))
                    if enr.get(src)
                }
                rewrite = rewrites.get(f"{conv_id}<::>{user_no}")
                turns.append(Turn("user", repair(text.strip()), rewrite=repair(rewrite) if rewrite else rewrite, labels=labels))
            elif speaker == "agent":
                passages = [
                    Passage(id=c["document_id"], text=repair(c["text"].strip()), title=repair(_title(c)),
                            relevant=_relevant(c, raw.get("author"), raw.get("editor")))
                    for c in msg.get("contexts") or []
                    if c.get("text", "").strip()
                ]
                if turns and turns[-1].role == "user":
                    turns[-1].passages = passages
                turns.append(Turn("assistant", repair(text.strip())))
            else:
                raise InputError(f"{where}: field 'messages/{m}/speaker': unknown speaker {speaker!r}")
        while turns and turns[-1].role == "assistant":  # the final answer is never anyone's history
            turns.pop()
        if not turns:
            raise InputError(f"{where}: no user turn")
        out.append(Conversation(conv_id, domain, turns, source={"dataset": "mtrag", "license": "Apache-2.0"}))
    return out
