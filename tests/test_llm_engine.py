"""The LLM engine against a fake OpenAI-compatible server on 127.0.0.1 (real client, real sockets)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_openai import FakeOpenAI  # noqa: E402

from builder.errors import InputError
from builder.llm import EngineConfig, RequestSpec, RunStats, estimate, extract_json, run_requests
from builder.llm.cache import Cache

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}},
    "required": ["answer", "score"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def fake():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def server(fake):
    fake.reset()
    fake.latency, fake.slow_seconds, fake.reject_json_schema, fake.holding = 0.0, 5.0, False, False
    fake.reject_json_object, fake.fail_all = False, None
    fake.retry_after, fake.api_key, fake.responder = "1", None, None
    return fake


@pytest.fixture
def cfg(server, tmp_path):
    return EngineConfig(base_url=server.url, cache_dir=str(tmp_path / "cache"), concurrency=8,
                        timeout=5, max_retries=3, backoff_base=0.01, backoff_max=0.05)


def spec(text: str, schema: dict | None = SCHEMA) -> RequestSpec:
    return RequestSpec("fake-model", [{"role": "user", "content": text}], {"temperature": 0, "max_tokens": 64}, schema)


def test_results_in_input_order_and_duplicates_asked_once(server, cfg):
    specs = [spec(f"q{i % 10}") for i in range(30)]
    results = run_requests(specs, cfg)
    assert server.requests == 10
    assert all(r.ok for r in results)
    assert [r.key for r in results] == [s.key() for s in specs]
    assert results[0].value == results[10].value and results[0].value != results[1].value


def test_cache_hits_make_no_request(server, cfg):
    specs = [spec(f"q{i}") for i in range(20)]
    first = run_requests(specs, cfg)
    assert server.requests == 20
    stats = RunStats()
    second = run_requests(specs, cfg, stats)
    assert server.requests == 20
    assert stats.cache_hits == 20 and stats.http_requests == 0
    assert [r.value for r in second] == [r.value for r in first] and all(r.cached for r in second)


def test_no_cache_asks_again(server, cfg):
    run_requests([spec("q")], cfg)
    cfg.no_cache = True
    run_requests([spec("q")], cfg)
    assert server.requests == 2


def test_concurrency_is_bounded(server, cfg):
    server.latency = 0.05
    cfg.concurrency = 5
    run_requests([spec(f"q{i}") for i in range(40)], cfg)
    assert server.max_in_flight == 5


def test_429_retry_after_is_honoured_by_every_worker(server, cfg):
    cfg.concurrency = 1  # the others queue behind the throttled one and must wait out its cool-down
    stats = RunStats()
    results = run_requests([spec("a [[429:1]]"), spec("b"), spec("c")], cfg, stats)
    assert all(r.ok for r in results)
    assert server.attempts["a [[429:1]]"] == 2 and stats.rate_limited == 1
    gap = server.times[1] - server.times[0]
    assert gap >= 0.95, f"next request went out {gap:.2f} s after a 429 with Retry-After: 1"


def test_500_retried_then_answered(server, cfg):
    stats = RunStats()
    [result] = run_requests([spec("x [[500:2]]")], cfg, stats)
    assert result.ok and server.attempts["x [[500:2]]"] == 3 and stats.retries == 2


def test_500_gives_up_at_cap_is_stored_and_retried_on_rerun(server, cfg):
    cfg.max_retries = 1
    [result] = run_requests([spec("x [[500:3]]")], cfg)
    assert result.error == "http 500: internal error (gave up after 2 attempts)"  # the server's own words
    assert server.attempts["x [[500:3]]"] == 2
    cache = Cache(cfg.cache_path())
    assert cache.stats()["failures"] == 1 and cache.stats()["responses"] == 0
    cache.close()
    [again] = run_requests([spec("x [[500:3]]")], cfg)  # attempt 3 fails, attempt 4 succeeds
    assert again.ok and server.attempts["x [[500:3]]"] == 4
    cache = Cache(cfg.cache_path())
    assert cache.stats()["failures"] == 0 and cache.stats()["responses"] == 1
    cache.close()


def test_slow_response_times_out_and_is_retried(server, cfg):
    server.slow_seconds, cfg.timeout, cfg.max_retries = 3.0, 0.4, 1
    results = run_requests([spec("s [[slow:1]]"), spec("t [[slow:5]]")], cfg)
    assert results[0].ok and server.attempts["s [[slow:1]]"] == 2
    assert not results[1].ok and results[1].error.startswith("timeout")
    assert server.attempts["t [[slow:5]]"] == 2


def test_connection_refused_retried_then_given_up(cfg):
    import socket

    with socket.socket() as sock:  # a port with nobody listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg.base_url, cfg.max_retries = f"http://127.0.0.1:{port}/v1", 2
    stats = RunStats()
    [result] = run_requests([spec("q")], cfg, stats)
    assert not result.ok and "connection error" in result.error and stats.http_requests == 3


def test_malformed_json_is_reasked_once(server, cfg):
    stats = RunStats()
    fixed, broken = run_requests([spec("m [[badjson:1]]"), spec("n [[badjson:9]]")], cfg, stats)
    assert fixed.ok and fixed.reasked and fixed.value["answer"]
    assert server.attempts["m [[badjson:1]]"] == 2
    reask = next(b for b in server.bodies if b["messages"][0]["content"] == "m [[badjson:1]]" and len(b["messages"]) == 3)
    assert reask["messages"][1] == {"role": "assistant", "content": '{"answer": "unterminated'}
    assert not broken.ok and "after re-ask" in broken.error and server.attempts["n [[badjson:9]]"] == 2
    assert stats.reasks == 2


def test_schema_violation_is_reasked(server, cfg):
    [result] = run_requests([spec("v [[invalid:1]]")], cfg)
    assert result.ok and result.reasked and set(result.value) == {"answer", "score"}


def test_reasks_are_cached_too(server, cfg):
    specs = [spec("m [[badjson:1]]")]
    run_requests(specs, cfg)
    before = server.requests
    [result] = run_requests(specs, cfg)
    assert result.ok and server.requests == before


def test_finish_reason_length_and_content_filter_fail_with_reason(server, cfg):
    long, filtered = run_requests([spec("l [[length]]"), spec("f [[filter]]")], cfg)
    assert not long.ok and long.error == "finish_reason=length" and not long.reasked
    assert not filtered.ok and filtered.error == "finish_reason=content_filter"
    assert server.requests == 2
    again = run_requests([spec("l [[length]]")], cfg)  # paid for, so cached: the verdict is re-derived, not re-asked
    assert again[0].error == "finish_reason=length" and server.requests == 2


def _format(body: dict) -> str:
    return (body.get("response_format") or {}).get("type", "prompt")


def test_rejected_json_schema_falls_back_to_json_object_per_request(server, cfg):
    server.reject_json_schema = "vllm"  # a 400 that names response_format
    stats = RunStats()
    results = run_requests([spec(f"q{i}") for i in range(5)], cfg, stats)
    assert all(r.ok for r in results) and stats.modes == {"json_object": 5} and stats.retries == 0
    for i in range(5):
        asked = [_format(b) for b in server.bodies if b["messages"][0]["content"].startswith(f"q{i}")]
        assert asked == ["json_schema", "json_object"], asked
    answered = [b for b in server.bodies if _format(b) == "json_object"]
    assert "JSON Schema" in answered[0]["messages"][-1]["content"]  # the schema moves into the prompt


def test_llamacpp_500_naming_the_format_is_a_fallback_not_a_retry(server, cfg):
    """llama-cpp-python's server answers a json_schema response_format with HTTP 500 and a pydantic message."""
    server.reject_json_schema = "llamacpp"
    cfg.concurrency = 1  # one at a time: the first rejection teaches the engine about this schema
    stats = RunStats()
    results = run_requests([spec(f"q{i}") for i in range(4)], cfg, stats)
    assert all(r.ok for r in results)
    assert server.attempts["q0"] == 2 and stats.retries == 0  # not retried seven times
    assert [server.attempts[f"q{i}"] for i in range(1, 4)] == [1, 1, 1]  # same schema: straight to json_object
    assert stats.modes == {"json_object": 4} and stats.format_fallbacks == 1
    again = RunStats()
    run_requests([spec(f"q{i}") for i in range(4)], cfg, again)  # the mode is kept with the cached reply
    assert again.http_requests == 0 and again.modes == {"json_object": 4}


def test_json_object_rejected_too_falls_back_to_a_plain_prompt(server, cfg):
    server.reject_json_schema, server.reject_json_object = "vllm", True
    stats = RunStats()
    [result] = run_requests([spec("p")], cfg, stats)
    assert result.ok and result.text.startswith("Sure!")  # the JSON was dug out of prose
    assert [_format(b) for b in server.bodies] == ["json_schema", "json_object", "prompt"]
    assert stats.modes == {"prompt": 1} and stats.format_fallbacks == 2


def test_unrelated_400_fails_that_request_alone(server, cfg):
    cfg.concurrency = 1
    stats = RunStats()
    results = run_requests([spec("a"), spec("too long [[ctx400]]"), spec("b"), spec("c")], cfg, stats)
    bad = results[1]
    assert not bad.ok and bad.error.startswith("http 400: This model's maximum context length is 2048 tokens")
    assert server.attempts["too long [[ctx400]]"] == 1  # a 400 is not retried
    assert all(r.ok for i, r in enumerate(results) if i != 1)
    assert [_format(b) for b in server.bodies] == ["json_schema"] * 4  # structured output stays on
    assert stats.modes == {"json_schema": 3} and stats.failed == 1 and stats.first_error == bad.error


def test_format_words_are_what_makes_a_fallback():
    from builder.llm.engine import names_format
    from fake_openai import CONTEXT_400, LLAMACPP_JSON_SCHEMA_500

    assert names_format(LLAMACPP_JSON_SCHEMA_500)
    assert names_format("response_format json_schema is not supported by this server")
    assert names_format("Invalid schema for response_format 'r': 'additionalProperties' is required")
    assert not names_format(CONTEXT_400)
    assert not names_format("internal error")


def test_plain_text_specs_return_text(server, cfg):
    [result] = run_requests([spec("hello", schema=None)], cfg)
    assert result.ok and result.value == "echo: hello"


def test_rpm_limit_spaces_requests(server, cfg):
    cfg.rpm = 600  # 10 per second, bursts of 10
    start = time.monotonic()
    run_requests([spec(f"r{i}") for i in range(25)], cfg)
    elapsed = time.monotonic() - start
    assert elapsed >= 1.3, elapsed
    assert server.requests == 25


def test_dry_run_estimate_calls_nothing(server, cfg):
    specs = [spec(f"q{i}") for i in range(6)] + [spec("q0")]
    run_requests(specs[:2], cfg)
    before = server.requests
    est = estimate(specs, cfg)
    assert server.requests == before
    assert (est.unique, est.cached, est.requests) == (6, 2, 4)
    assert est.input_tokens == sum(s.estimated_input_tokens() for s in specs[2:6]) > 0


def test_api_key_is_sent_but_never_stored(server, cfg, monkeypatch, tmp_path):
    secret = "sk-test-0123456789-secret"
    monkeypatch.setenv("CE_TEST_KEY", secret)
    cfg.api_key_env = "CE_TEST_KEY"
    server.api_key = secret
    assert all(r.ok for r in run_requests([spec("k")], cfg))
    assert f"Bearer {secret}" in server.auth
    for path in Path(cfg.cache_dir).iterdir():
        assert secret.encode() not in path.read_bytes()
    server.api_key = "a-different-key"
    with pytest.raises(InputError) as err:
        run_requests([spec("k2")], cfg)
    assert "401" in str(err.value) and "CE_TEST_KEY" in str(err.value) and secret not in str(err.value)


def test_extract_json_tolerates_prose_and_fences():
    assert extract_json('{"a": 1}') == {"a": 1}
    assert extract_json('Here:\n```json\n{"a": [1, 2]}\n```\nDone.') == {"a": [1, 2]}
    assert extract_json('The answer is {"a": "x"} as asked.') == {"a": "x"}
    with pytest.raises(ValueError):
        extract_json("no json at all")


def test_extract_json_takes_the_first_candidate_that_fits_the_schema():
    from builder.llm import parse_reply

    text = 'Per passage [1], the answer is {"answer": "Bangor", "score": 2}.'
    assert extract_json(text) == [1]  # without a schema: the first JSON value
    assert extract_json(text, SCHEMA) == {"answer": "Bangor", "score": 2}
    assert parse_reply(text, SCHEMA) == {"answer": "Bangor", "score": 2}
    nested = 'Example: {"answer": 1} then ```json\n{"wrapper": {"answer": "a", "score": 1}}\n```'
    assert parse_reply(nested, SCHEMA) == {"answer": "a", "score": 1}
    with pytest.raises(ValueError, match="schema violation"):  # none fits: the first one is reported
        parse_reply('see [1] and {"answer": 3}', SCHEMA)


def test_extractor_runs_after_the_cache(server, cfg):
    """A reply cached before the extractor learned to skip `[1]` parses on the rerun, without a request."""
    from builder.llm.cache import Cache
    from builder.io import dumps

    s = spec("cached prose")
    cache = Cache(cfg.cache_path())
    body = {"content": 'Per passage [1], {"answer": "x", "score": 1}', "finish_reason": "stop", "usage": {}, "model": "m"}
    cache.put(s.key(), dumps(body))
    cache.close()
    stats = RunStats()
    [result] = run_requests([s], cfg, stats)
    assert result.ok and result.value == {"answer": "x", "score": 1} and stats.http_requests == 0
    assert stats.modes == {"unrecorded": 1}


def test_failures_are_counted_the_same_from_the_cache_and_a_listener_sees_each(server, cfg):
    specs = [spec("ok1"), spec("ok2"), spec("never parses [[badjson:9]]"), spec("cut [[length]]")]
    seen = []
    stats = RunStats(listener=lambda t: seen.append((t.label, t.total, t.answered, t.failed, t.cached)))
    run_requests(specs, cfg, stats)
    assert (stats.failed, stats.answered) == (2, 5)  # 4 first asks + 1 re-ask answered on the wire
    assert seen[0] == ("llm", 4, 0, 0, 0) and seen[-1] == ("llm", 4, 2, 2, 0)
    assert [a + f for _, _, a, f, _ in seen] == [0, 1, 2, 3, 4]
    assert set(stats.failure_reasons) == {"finish_reason=length", "no JSON object in the reply (after re-ask)"}
    rerun = RunStats()
    run_requests(specs, cfg, rerun)
    assert rerun.http_requests == 0 and rerun.failed == 2 and rerun.failure_reasons == stats.failure_reasons


WORKER = textwrap.dedent(
    """
    import sys
    from builder.llm import EngineConfig, RequestSpec, run_requests
    url, cache, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    specs = [RequestSpec("fake-model", [{"role": "user", "content": f"req-{i}"}], {}, schema) for i in range(n)]
    results = run_requests(specs, EngineConfig(base_url=url, cache_dir=cache, concurrency=8, timeout=30))
    print(sum(r.ok for r in results))
    """
)


def test_sigkill_mid_run_loses_nothing_answered(server, tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    cache, n = str(tmp_path / "cache"), 300
    server.latency = 0.01
    proc = subprocess.Popen([sys.executable, str(script), server.url, cache, str(n)], stdout=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while len(server.answered) < 100 and time.monotonic() < deadline:
        time.sleep(0.005)
    # Freeze the server so the kill lands between two answers, not on a reply still on the wire.
    server.holding = True
    while server.in_flight < 8 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    answered_before = set(server.answered)
    assert 100 <= len(answered_before) < n, "the kill must land mid-run"
    server.holding = False
    time.sleep(0.05)
    server.log.clear()
    out = subprocess.run([sys.executable, str(script), server.url, cache, str(n)], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == str(n)
    asked_again = answered_before & set(server.log)
    assert not asked_again, f"{len(asked_again)} answered requests were asked again"
    assert len(server.log) == n - len(answered_before)


def test_cache_stats_command(server, cfg, tmp_path):
    from typer.testing import CliRunner

    from builder.cli import app

    cfg.max_retries = 0
    run_requests([spec("ok"), spec("bad [[500:9]]")], cfg)
    out = CliRunner().invoke(app, ["llm", "stats", "--cache-dir", cfg.cache_dir, "--json", str(tmp_path / "stats.json")])
    assert out.exit_code == 0, out.output
    info = json.loads((tmp_path / "stats.json").read_text())
    assert (info["responses"], info["failures"]) == (1, 1)


def test_a_client_error_is_kept_as_final_and_not_asked_again(server, cfg):
    specs = [spec("fine"), spec("too long [[ctx400]]")]
    first = run_requests(specs, cfg)
    assert server.requests == 2 and not first[1].ok
    stats = RunStats()
    again = run_requests(specs, cfg, stats)
    assert server.requests == 2 and stats.http_requests == 0  # the same request would get the same 400
    assert again[1].error == first[1].error and stats.failed == 1
    assert [o["ok"] for o in sorted(stats.outcomes, key=lambda o: o["key"] != specs[0].key())] == [True, False]
    cache = Cache(cfg.cache_path())
    assert cache.stats()["final_failures"] == 1 and cache.clear_failures() == 1
    cache.close()
    run_requests(specs, cfg)  # cleared: asked again
    assert server.attempts["too long [[ctx400]]"] == 2
