"""LLM generators over the demo corpus against the fake OpenAI server (real client, real sockets)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_openai import FakeOpenAI  # noqa: E402

from builder.ingest import demo_corpus, ingest
from builder.llm import EngineConfig, RunStats
from builder.synthesize import assign_blocks, turn_contexts
from builder.synthesize.llm.base import LLMSettings
from builder.synthesize.llm.run import dry_run, llm_synthesize, naturalize, verify
from builder.validate import validate


def _field(text: str, label: str) -> str:
    found = re.search(rf"^{label}: (.*)$", text, re.MULTILINE)
    return found.group(1) if found else ""


_BY_FIRST_KEY = {"ambiguous_query": "ambiguate", "pattern": "clarify", "rewrite": "hard_negative",
                 "needs_clarification": "verify", "query": "naturalize"}


def _prompt_in_text(body: dict) -> str | None:
    """Which prompt a request without json_schema is (json_object or plain prompt): its quoted schema says."""
    for m in body["messages"]:
        found = re.search(r"JSON Schema[^\n]*\n(\{.*\})\s*$", m.get("content") or "", re.DOTALL)
        if found:
            required = json.loads(found.group(1)).get("required") or [""]
            return _BY_FIRST_KEY.get(required[0])
    return None


def responder(body: dict) -> str | None:
    """Plausible replies per prompt, so the records are checkable (the fake server routes by schema name)."""
    name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name") or _prompt_in_text(body)
    # The prompt's own user message (a re-ask appends more turns after it).
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    if name == "ambiguate":
        clear = _field(user, "Clear question")
        return json.dumps({"ambiguous_query": f"which one: {clear.rstrip('?').split()[-1]}?",
                           "category": _field(user, "Kind of ambiguity wanted"),
                           "interpretations": [clear, f"{clear} (the other one)"], "removed": "the entity"})
    if name == "clarify":
        readings = re.findall(r"^- (.*)$", user, re.MULTILINE) + ["this", "that"]
        return json.dumps({"pattern": _field(user, "Pattern") or "open", "question": f"Do you mean {readings[0]} or {readings[1]}?"})
    if name == "hard_negative":
        clear = _field(user, "Standalone question")
        return json.dumps({"rewrite": f"and {clear.split()[-1]}", "form": _field(user, "Form wanted"),
                           "referent": "it", "resolving_turn": 0})
    if name == "verify":
        query = _field(user, "User's last message")
        return json.dumps({"needs_clarification": query.startswith("which one") and "DISPUTE" not in query,
                           "category": "clear", "resolved_by": "self", "referent": None, "interpretations": [query],
                           "reason": "scripted"})
    if name == "naturalize":
        return json.dumps({"query": _field(user, "User's last message") + " please",
                           "clarification": _field(user, "Clarifying question")})
    return None


@pytest.fixture(scope="module")
def fake():
    server = FakeOpenAI(responder=responder).start()
    yield server
    server.stop()


@pytest.fixture
def setup(fake, tmp_path):
    fake.reset()
    conversations = ingest(demo_corpus(), "auto", None)
    contexts = turn_contexts(conversations, assign_blocks(conversations, 2, 13), 13, "clariedge-demo")
    engine = EngineConfig(base_url=fake.url, cache_dir=str(tmp_path / "cache"), concurrency=16, backoff_base=0.01)
    return fake, contexts, engine


def test_llm_generators_make_valid_records_and_a_rerun_asks_nothing(setup):
    server, contexts, engine = setup
    settings = LLMSettings(model="fake-model")
    stats = RunStats()
    records, rejected = llm_synthesize(contexts, settings, engine, stats)
    assert server.requests > 0 and stats.answered == server.requests
    dicts = [r.to_dict() for r in records]
    valid, quarantined = validate(dicts)
    assert not quarantined, quarantined[:1]
    kinds = {r.category for r in records}
    assert "hard_negative" in kinds and kinds & {"underspecified_entity", "unresolved_reference",
                                                  "missing_parameter", "multiple_interpretations"}
    positive = next(r for r in records if r.needs_clarification)
    assert positive.target["clarification"].startswith("Do you mean") and positive.clarification_pattern
    assert positive.provenance["prompt"]["name"] == "ambiguate+clarify"
    negative = next(r for r in records if r.category == "hard_negative")
    assert negative.resolution["source"] == "history" and negative.target == {"clarification": "CLEAR"}

    before = server.requests
    again, _ = llm_synthesize(contexts, settings, engine, RunStats())
    assert server.requests == before, "a rerun must be served from the cache"
    assert [r.to_dict() for r in again] == dicts


def test_verify_drops_or_flags_disagreements(setup):
    server, contexts, engine = setup
    records, _ = llm_synthesize(contexts, LLMSettings(model="fake-model"), engine)
    dicts = [r.to_dict() for r in records]
    disputed = next(d for d in dicts if d["needs_clarification"])
    disputed["query"] += " DISPUTE"
    dropped = verify(dicts, LLMSettings(model="fake-model", verify="drop"), engine)
    assert [d["id"] for d in dropped.dropped] == [disputed["id"]]
    assert "judge says clear" in dropped.dropped[0]["reason"]
    assert len(dropped.kept) == len(dicts) - 1
    flagged = verify(dicts, LLMSettings(model="fake-model", verify="flag"), engine)
    assert len(flagged.kept) == len(dicts) and [d["id"] for d in flagged.flagged] == [disputed["id"]]


def test_naturalize_keeps_labels_and_gets_new_ids(setup):
    server, contexts, engine = setup
    records, _ = llm_synthesize(contexts, LLMSettings(model="fake-model"), engine)
    dicts = [r.to_dict() for r in records[:6]]
    edited, kept = naturalize(dicts, LLMSettings(model="fake-model"), engine)
    assert len(edited) == 6 and not kept
    for old, new in zip(dicts, edited):
        assert new["query"] == old["query"] + " please" and new["id"] != old["id"]
        assert (new["needs_clarification"], new["category"], new["target"]) == (
            old["needs_clarification"], old["category"], old["target"])
        assert new["provenance"]["method"].endswith("+naturalize")


def test_dry_run_counts_without_calling(setup):
    server, contexts, engine = setup
    plan = dry_run(contexts, LLMSettings(model="fake-model"), engine, n_records=10)
    assert server.requests == 0
    assert plan["exact_requests"] > 0 and plan["estimated_input_tokens"] > 0
    assert plan["requests"] == plan["exact_requests"] + plan["dependent_requests_estimated"]
