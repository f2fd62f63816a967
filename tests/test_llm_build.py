"""`clariedge build` with an llm: section, as a subprocess against the fake OpenAI server (real sockets)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_openai import FakeOpenAI  # noqa: E402
from test_llm_generators import responder  # noqa: E402

from builder.record import SPLITS
from builder.release import load_release
from builder.resources import load_schema

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "demo-llm.yaml"
CLI = [sys.executable, "-c", "from builder.cli import main; main()"]


def _build_cmd(url: str, cache: Path, out: Path, *extra: str) -> list[str]:
    return [*CLI, "build", "--config", str(CONFIG), "--base-url", url, "--cache", str(cache), "--out", str(out), *extra]


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-secret-never-logged"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _files(release: Path) -> dict[str, bytes]:
    return {p.relative_to(release).as_posix(): p.read_bytes() for p in sorted(release.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def server():
    fake = FakeOpenAI(responder=responder).start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def first(server, tmp_path_factory):
    """One uninterrupted LLM build of the demo: (server requests it made, release dir, stdout+stderr, cache, out)."""
    tmp = tmp_path_factory.mktemp("llm-build")
    server.reset()
    done = _run(_build_cmd(server.url, tmp / "cache", tmp / "out"))
    release = Path(done.stdout.strip().splitlines()[-1])
    return server.requests, release, done.stdout + done.stderr, tmp / "cache", tmp / "out"


def test_llm_build_makes_a_valid_release_with_llm_records(first):
    import jsonschema

    requests, release, output, _, _ = first
    assert requests > 0
    validator = jsonschema.Draft202012Validator(load_schema("clariedge.schema.json"))
    splits = load_release(release)
    records = [r for s in SPLITS for r in splits[s]]
    for record in records:
        validator.validate(record)
    methods = {r["provenance"]["method"] for r in records}
    assert {"llm_ambiguate", "llm_hard_negative"} <= methods and "followup_twins" in methods
    llm_record = next(r for r in records if r["provenance"]["method"] == "llm_ambiguate")
    assert llm_record["provenance"]["prompt"]["name"] == "ambiguate+clarify"

    manifest = json.loads((release / "manifest.json").read_text())
    llm = manifest["llm"]
    assert llm["requests"] == requests  # every unique request the build needed, nothing on the fake went unused
    assert llm["failed"] == 0 and llm["model"] == "gpt-4o-mini"
    assert set(llm["methods"]) == {"llm_ambiguate", "llm_hard_negative", "verify"}
    assert manifest["generators"]["llm_hard_negative"] == "hard_negative@1"
    assert "endpoint" not in manifest["config"]["llm"] and "run" not in llm
    stats = json.loads((release.parents[1] / ".work" / release.parent.name / release.name / "llm_stats.json").read_text())
    assert stats["run"]["answered"] == requests and stats["run"]["cache_hits"] == 0
    assert f"{requests} answered" in output
    assert "sk-test-secret" not in output
    assert not any("sk-test-secret" in p.read_text(errors="ignore") for p in release.parents[1].rglob("*") if p.is_file())


def test_cached_rerun_makes_no_request_and_is_byte_identical(server, first, tmp_path):
    _, release, _, cache, _ = first
    server.reset()
    done = _run(_build_cmd(server.url, cache, tmp_path / "out"))
    assert server.requests == 0
    again = Path(done.stdout.strip().splitlines()[-1])
    assert again != release and _files(again) == _files(release)


def test_dry_run_calls_nothing_and_counts_requests(server, first, tmp_path):
    requests, _, _, _, _ = first
    server.reset()
    done = _run(_build_cmd(server.url, tmp_path / "empty-cache", tmp_path / "out", "--dry-run"))
    assert server.requests == 0 and not (tmp_path / "out").exists()
    counted = int(done.stdout.split("requests ")[1].split()[0])
    tokens = int(done.stdout.split("estimated input tokens ")[1].split()[0])
    assert counted > 0 and tokens > 0
    assert abs(counted - requests) <= requests // 2  # clarify/verify follow-ups are estimates


def test_sigkill_mid_build_then_rerun_reasks_nothing_answered(server, first, tmp_path):
    _, release, _, _, _ = first
    server.reset()
    server.latency = 0.02  # so the kill lands mid-run
    cmd = _build_cmd(server.url, tmp_path / "cache", tmp_path / "out")
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        while len(server.answered) < 120 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        # Hold further answers and give the client a moment to store what it already received: a reply
        # still in the socket buffer at the kill was never delivered, and no client can keep it.
        server.holding = True
        time.sleep(0.5)
        answered_before = set(server.answered)
        assert proc.poll() is None, "the build finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        server.latency = 0.0
        server.holding = False
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.3)  # let held handlers notice the closed sockets
    seen = len(server.log)
    assert 0 < len(answered_before) < first[0]
    done = _run(cmd)
    asked_again = answered_before & set(server.log[seen:])
    assert not asked_again, sorted(asked_again)[:3]
    resumed = Path(done.stdout.strip().splitlines()[-1])
    a, b = (json.loads((r / "manifest.json").read_text()) for r in (resumed, release))
    assert {k for k in a if a[k] != b.get(k)} == set(), {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k) and k != "files"}
    assert _files(resumed) == _files(release)
    shutil.rmtree(tmp_path / "cache")


MTRAG_LLM = ROOT / "configs" / "mtrag-llm.yaml"
SHARED_MTRAG = ROOT.parent / "shared" / "data" / "mtrag" / "conversations" / "conversations.json"


@pytest.mark.skipif(not SHARED_MTRAG.exists(), reason="../shared/data/mtrag absent")
def test_mtrag_llm_build_then_rerun_makes_zero_requests(server, tmp_path):
    """The issue's 'done when': the MTRAG build through the LLM generators, then a fully cached rerun."""
    server.reset()
    cmd = [*CLI, "build", "--config", str(MTRAG_LLM), "--base-url", server.url, "--cache", str(tmp_path / "cache")]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    done = subprocess.run([*cmd, "--out", str(tmp_path / "a")], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    first_requests = server.requests
    release = Path(done.stdout.strip().splitlines()[-1])
    manifest = json.loads((release / "manifest.json").read_text())
    # The server also counts re-asks after an invalid reply; the manifest counts the requests the build needs.
    assert first_requests > 500 and 0 < manifest["llm"]["requests"] <= first_requests, manifest["llm"]
    assert manifest["counts"]["quarantined"] == 0 and manifest["leakage"]["passed"]
    methods = {r["provenance"]["method"] for rows in load_release(release).values() for r in rows}
    assert {"llm_ambiguate", "llm_hard_negative"} <= methods
    server.reset()
    again = subprocess.run([*cmd, "--out", str(tmp_path / "b")], capture_output=True, text=True, env=env, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert server.requests == 0
    assert _files(Path(again.stdout.strip().splitlines()[-1])) == _files(release)


# --- failing loudly, structured output against servers that refuse json_schema ------------------------------


def _config(tmp: Path, **endpoint) -> Path:
    """configs/demo-llm.yaml with quick retries (a failing server is retried, not waited on, in a test)."""
    import yaml

    data = yaml.safe_load(CONFIG.read_text())
    data["llm"]["endpoint"].update({"max_retries": 1, "backoff_base": 0.01, "backoff_max": 0.05, **endpoint})
    path = tmp / "demo-llm.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _build(config: Path, url: str, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [*CLI, "build", "--config", str(config), "--base-url", url, "--cache", str(tmp / "cache"),
           "--out", str(tmp / "out"), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "OPENAI_API_KEY": "sk-test"},
                          timeout=300)


@pytest.fixture
def fresh(server):
    server.reset()
    yield server
    server.fail_all, server.reject_json_schema = None, False


def test_a_server_failing_everything_stops_the_build_with_its_message(fresh, tmp_path):
    fresh.fail_all = 500
    done = _build(_config(tmp_path), fresh.url, tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    error = done.stderr[done.stderr.index("error: "):]
    assert "fake server error 500: the model is not loaded" in error  # the server's own words
    assert "LLM requests failed (100.0%, more than the 5.0% allowed" in error
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out" / "clariedge-demo-llm").exists()  # no release at all
    report = json.loads(next((tmp_path / "out" / ".work").rglob("llm_failures.json")).read_text())
    assert report["failed"] == report["requests"] > 0 and report["first_error"].startswith("http 500: fake server")
    assert "answered 0 · failed" in done.stderr  # the live counts, as the bar last showed them


def test_max_llm_failure_rate_flag_lets_a_curator_accept_failures(fresh, tmp_path):
    fresh.fail_all = 500
    done = _build(_config(tmp_path), fresh.url, tmp_path, "--max-llm-failure-rate", "1")
    assert done.returncode == 0, done.stderr[-2000:]
    release = Path(done.stdout.strip().splitlines()[-1])
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["llm"]["failed"] == manifest["llm"]["requests"] > 0
    assert "max_failure_rate" not in manifest["config"]["llm"]  # a limit does not change the data
    rejected = [json.loads(line) for line in (release.parents[1] / ".work" / release.parent.name / release.name
                                              / "rejected.jsonl").read_text().splitlines()]
    llm_lost = [r for r in rejected if r["method"].startswith("llm_")]
    assert llm_lost and all("fake server error 500" in r["reason"] for r in llm_lost)  # each with its reason


def test_llamacpp_style_server_is_negotiated_down_to_json_object(fresh, tmp_path):
    """A server that answers json_schema with HTTP 500 naming the format (as llama-cpp-python's does)."""
    fresh.reject_json_schema = "llamacpp"
    done = _build(_config(tmp_path, max_retries=6), fresh.url, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    release = Path(done.stdout.strip().splitlines()[-1])
    llm = json.loads((release / "manifest.json").read_text())["llm"]
    assert llm["structured_output"] == {"json_object": llm["requests"]} and llm["failed"] == 0
    stats = json.loads((release.parents[1] / ".work" / release.parent.name / release.name / "llm_stats.json").read_text())
    assert stats["run"]["retries"] == 0  # a format rejection is not retried
    assert 0 < stats["run"]["format_fallbacks"] < llm["requests"]  # learnt per schema, not paid per request
    methods = {r["provenance"]["method"] for rows in load_release(release).values() for r in rows}
    assert {"llm_ambiguate", "llm_hard_negative"} <= methods
    assert "structured output: json_object" in " ".join(done.stderr.split())  # rich wraps at 80 columns


def test_llm_build_gives_three_non_empty_splits(first):
    _, release, _, _, _ = first
    splits = load_release(release)
    assert all(len(splits[s]) > 0 for s in SPLITS), {s: len(splits[s]) for s in SPLITS}
