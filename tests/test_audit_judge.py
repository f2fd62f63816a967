"""Judge-based suspects: the verify prompt through the LLM engine, against a fake OpenAI server on 127.0.0.1."""

import json
import re
import subprocess
import sys

import pytest

from builder.audit.judge import judge_settings, judge_suspects
from builder.audit.release import open_release
from builder.record import Record
from fake_openai import FakeOpenAI
from test_audit_helpers import REPO, make_records, write_test_release

QUERY = re.compile(r"User's last message: (.*)$", re.DOTALL)


def unique_queries(records):
    """Tag each query so the scripted judge can tell records apart (ids follow the new text)."""
    out = []
    for i, r in enumerate(records):
        fields = {k: v for k, v in r.items() if k != "id"}
        fields["query"] = f"{r['query']} (case {i})"
        out.append(Record(**fields).to_dict())
    return out


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    records = unique_queries(make_records(per_cell=1, seed=7))  # 56, every category
    by_query = {r["query"]: r for r in records}
    flip_label = {records[0]["query"], records[9]["query"]}
    flip_category = {next(r["query"] for r in records if r["category"] == "clear" and r["query"] not in flip_label)}
    no_verdict = records[5]["query"]
    records[5]["query"] += " [[length]]"  # the fake server answers finish_reason=length: no usable verdict
    by_query = {r["query"]: r for r in records}

    def responder(body):
        user = body["messages"][-1]["content"]
        record = by_query[QUERY.search(user).group(1).strip()]
        needs, category = record["needs_clarification"], record["category"]
        if record["query"] in flip_label:
            needs = not needs
            category = "multiple_interpretations" if needs else "clear"
        elif record["query"] in flip_category:
            category = "hard_negative"
        return json.dumps({"needs_clarification": needs, "category": category, "resolved_by": "none" if needs else "self",
                           "referent": None, "interpretations": ["one reading", "another"],
                           "reason": f"scripted verdict for {record['id']}"})

    server = FakeOpenAI(responder=responder).start()
    rel_dir = write_test_release(tmp_path_factory.mktemp("rel") / "rel", records)
    yield server, open_release(rel_dir), records, flip_label, flip_category
    server.stop()


def test_judge_lists_disagreements_with_reasons(setup, tmp_path):
    server, release, records, flip_label, flip_category = setup
    settings = judge_settings(None, server.url, "judge-model", cache_dir=str(tmp_path / "cache"))
    run = judge_suspects(release, settings)
    by_query = {release.records[s.record_id]["query"]: s for s in run.suspects}
    assert set(by_query) == flip_label | flip_category
    assert [s.score for s in run.suspects] == [1.0, 1.0, 0.5]  # label disagreements first
    for s in run.suspects:
        assert s.method == "judge" and f"scripted verdict for {s.record_id}" in s.reason
    assert run.judged == 56 and len(run.failed) == 1 and "length" in run.failed[0]["error"]
    # The verify prompt went over the wire at temperature 0, with the record's text in it.
    body = server.bodies[-1]
    assert body["model"] == "judge-model" and body["temperature"] == 0.0

    # Second run: all verdicts come from the cache.
    before = server.requests
    again = judge_suspects(release, settings)
    assert [s.record_id for s in again.suspects] == [s.record_id for s in run.suspects]
    assert server.requests - before <= 1  # only the failed one may be retried


def test_cli_judge(setup, tmp_path):
    server, release, *_ = setup
    out = tmp_path / "suspects.jsonl"
    proc = subprocess.run(
        [sys.executable, "-c", "from builder.cli import main; main()", "audit", "suspects", "--release",
         str(release.path), "--method", "judge", "--base-url", server.url, "--llm-model", "judge-model",
         "--cache-dir", str(tmp_path / "cache"), "--out", str(out)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["rank"] for r in rows] == [1, 2, 3] and [r["score"] for r in rows] == [1.0, 1.0, 0.5]
    failed = (tmp_path / "suspects.failed.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(failed) == 1
    assert "3 suspects out of 56 records checked" in proc.stdout
