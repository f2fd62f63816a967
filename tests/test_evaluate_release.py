"""Evaluation end to end on a hand-made release: predictions files, a prompted model and the judge
behind a fake OpenAI-compatible server on 127.0.0.1 (real client, real socket), the CLI, JSON and report."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from builder.evaluate.predictors import FilePredictor, load_predictor
from builder.evaluate.prompted import OpenAIPredictor
from builder.evaluate.run import evaluate, load_release_split
from builder.record import CLEAR, Record
from builder.release import write_release

QUESTION = "Do you mean the savings account or the checking account?"


def make_record(i: int, *, needs: bool, setting: str, category: str, domain: str = "fiqa") -> dict:
    docs = [] if setting == "pre_retrieval" else [{"id": f"doc-{i}", "title": "Accounts", "text": "Savings and checking accounts differ."}]
    query = f"what is the interest on it {i}" if needs else f"what is the interest on my savings account {i}"
    return Record(
        domain=domain, setting=setting,
        history=[{"role": "user", "content": "I have two accounts"}, {"role": "assistant", "content": "Which bank?"}],
        query=query, documents=docs, needs_clarification=needs, category=category,
        interpretations=["savings account", "checking account"] if needs else [],
        target={"clarification": QUESTION if needs else CLEAR},
        resolution={"source": "history", "turn_index": 0, "referent": "savings", "resolved_query": query}
        if category == "hard_negative" else None,
        provenance={"source_dataset": "test", "conversation_id": f"c{i}", "turn": 2, "method": "hand",
                    "method_version": "1", "seed": 0, "label_source": "human"},
    ).to_dict()


def make_records() -> list[dict]:
    specs = [
        (True, "pre_retrieval", "unresolved_reference", "fiqa"),
        (True, "post_retrieval", "multiple_interpretations", "govt"),
        (True, "post_retrieval", "underspecified_entity", "fiqa"),
        (False, "pre_retrieval", "clear", "fiqa"),
        (False, "post_retrieval", "hard_negative", "govt"),
        (False, "pre_retrieval", "hard_negative", "fiqa"),
    ]
    return [make_record(i, needs=n, setting=s, category=c, domain=d) for i, (n, s, c, d) in enumerate(specs)]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist") / "clariedge-test" / "0.0.1"
    records = make_records()
    write_release(out, {"train": records[:2], "validation": records[:1], "test": records},
                  {"name": "clariedge-test", "version": "0.0.1", "seed": 0}, "# card\n")
    return out


def write_predictions(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# ---- fake OpenAI-compatible server ---------------------------------------------------------


class FakeChat(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    requests: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeChat.requests.append(body)
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if "You grade clarifying questions" in system:
            two = " or " in user.split("CANDIDATE question:")[1]
            content = json.dumps({"is_clarification": True, "interpretations_named": 2 if two else 1,
                                  "covers_two_interpretations": two, "reason": "names both accounts" if two else "one"})
        else:
            query = user.rsplit("Last user query:", 1)[1].split("\n")[0].strip()
            if query.endswith("2"):
                content = "Hmm, hard to say."  # unparseable on purpose
            elif "on it" in query:
                content = json.dumps({"clarification": "Which account: savings or checking?"})
            else:
                content = '{"clarification":"CLEAR"}'
        reply = json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakeChat)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


# ---- tests ------------------------------------------------------------------------------------


def test_predictions_file_with_missing_ids_and_garbage_is_reported(release, tmp_path):
    records, data = load_release_split(release, "test")
    assert data["name"] == "clariedge-test" and data["version"] == "0.0.1"
    ids = [r["id"] for r in records]
    preds = write_predictions(tmp_path / "preds.jsonl", [
        {"id": ids[0], "output": json.dumps({"clarification": QUESTION})},
        {"id": ids[1], "output": "the answer is 42"},                      # unparseable
        {"id": ids[3], "output": '{"clarification":"CLEAR"}'},
        {"id": ids[4], "output": '{"clarification":"Which one?"}'},       # false positive on a hard negative
        {"id": ids[5], "needs_clarification": False},
        {"id": "ce-0000000000000000", "output": "CLEAR"},                  # matches no record
    ])                                                                     # ids[2] is missing
    result, details = evaluate(records, FilePredictor(preds), data=data, samples=200, embed=False)
    assert result["n"] == 6
    assert result["confusion"] == {"tp": 1, "fp": 1, "fn": 2, "tn": 2, "invalid": 2}
    assert result["accuracy"] == pytest.approx(3 / 6)
    errors = {e["id"]: e["error"] for e in result["errors"]["examples"]}
    assert errors[ids[1]].startswith("not JSON and not CLEAR")
    assert errors[ids[2]].startswith("missing: no line for this id")
    assert result["errors"]["unmatched_prediction_ids"] == {"count": 1, "examples": ["ce-0000000000000000"]}
    hard = result["by_category"]["hard_negative"]
    assert hard["n"] == 2 and hard["accuracy"] == pytest.approx(0.5) and hard["recall"] is None
    assert result["by_setting"]["pre_retrieval"]["n"] == 3
    assert result["by_setting_category"]["post_retrieval/hard_negative"]["accuracy"] == 0.0
    assert result["by_domain"]["govt"]["n"] == 2
    # Exact match with the reference on the one true positive.
    assert result["quality"]["scored"] == 1 and result["quality"]["rouge_l"] == pytest.approx(1.0)
    assert details[1]["error"] and details[1]["predicted"] is None


def test_results_break_down_by_generator(release, tmp_path):
    from builder.evaluate.report import render

    records, data = load_release_split(release, "test")
    for r in records[:2]:  # a second generator: the two first positives
        r["provenance"] = {**r["provenance"], "method": "kind_reference"}
    preds = write_predictions(tmp_path / "preds.jsonl", [
        {"id": r["id"], "output": "CLEAR"} for r in records])  # right on the negatives only
    result, _ = evaluate(records, FilePredictor(preds), data=data, samples=50, embed=False)
    assert {k: (m["n"], m["accuracy"]) for k, m in result["by_method"].items()} == \
        {"hand": (4, 0.75), "kind_reference": (2, 0.0)}
    assert "### By generator (provenance method)" in render([result])


def test_predictions_file_bad_line_is_an_input_error(tmp_path):
    from builder.errors import InputError

    bad = write_predictions(tmp_path / "bad.jsonl", [{"id": "a", "output": "CLEAR"}, {"output": "CLEAR"}])
    with pytest.raises(InputError, match=r"bad.jsonl:2: each line needs a string field 'id'"):
        FilePredictor(bad)


def test_prompted_predictor_and_judge_against_fake_server(release, server, tmp_path):
    from builder.evaluate.chat import Endpoint

    records, data = load_release_split(release, "test")
    pool, _ = load_release_split(release, "train")
    FakeChat.requests.clear()
    # concurrency 1 -> chunks of 4: the 6 records go to the engine in two calls, order kept.
    predictor = OpenAIPredictor(model="fake-7b", base_url=server, shots=0, no_cache=True, concurrency=1)
    judge = Endpoint(base_url=server, model="fake-judge", no_cache=True)
    result, details = evaluate(records, predictor, data=data, samples=200, embed=False, judge_endpoint=judge)
    # Queries 0 and 1 mention "it" -> asks; query 2 gets garbage; 3-5 -> CLEAR.
    assert [d["predicted"] for d in details] == [True, True, None, False, False, False]
    assert details[2]["error"].startswith("not JSON and not CLEAR")
    assert result["confusion"] == {"tp": 2, "fp": 0, "fn": 1, "tn": 3, "invalid": 1}
    judge_summary = result["quality"]["judge"]
    assert judge_summary == {"judged": 2, "errors": 0, "is_clarification": 1.0, "covers_two_interpretations": 1.0}
    predict_calls = [r for r in FakeChat.requests if r["model"] == "fake-7b"]
    judge_calls = [r for r in FakeChat.requests if r["model"] == "fake-judge"]
    assert len(predict_calls) == 6 and len(judge_calls) == 2
    assert predict_calls[0]["temperature"] == 0.0
    assert judge_calls[0]["response_format"]["type"] == "json_schema"  # the judge asks for structured output
    # The judge sees the record's interpretations and the reference.
    assert "- savings account" in judge_calls[0]["messages"][-1]["content"] and QUESTION in judge_calls[0]["messages"][-1]["content"]
    assert result["predictor"]["prompt"]["name"] == "predict_clarification"


def test_few_shot_examples_come_from_train_and_never_leak(release, server):
    records, _ = load_release_split(release, "test")
    pool, _ = load_release_split(release, "train")
    predictor = OpenAIPredictor(model="fake-7b", base_url=server, shots=2, shot_pool=pool, no_cache=True)
    assert {e["needs_clarification"] for e in predictor.examples} == {True}  # the pool holds two positives
    user = predictor.prompt.messages(record=records[3], examples=predictor.examples)[1]["content"]
    assert user.count("### Example") == 2 and f'Answer: {{"clarification":"{QUESTION}"}}' in user
    from builder.errors import InputError

    with pytest.raises(InputError, match="also an evaluation record"):
        predictor.predict(records)  # train records reappear in this hand-made test split


CLI = "from builder.cli import main; main()"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CLI, "evaluate", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_cli_json_report_and_compare(release, tmp_path):
    records, _ = load_release_split(release, "test")
    preds = write_predictions(tmp_path / "p.jsonl", [
        {"id": r["id"], "output": json.dumps({"clarification": QUESTION if r["needs_clarification"] else "CLEAR"})}
        for r in records
    ])
    first = run_cli("--constant", "clear", "--release", release, "--json", tmp_path / "m.json", "--no-embed",
                    "--bootstrap", "100")
    assert first.returncode == 0, first.stderr
    out = run_cli("--predictions", preds, "--release", release, "--split", "test", "--json", tmp_path / "r.json",
                  "--report", tmp_path / "r.md", "--details", tmp_path / "d.jsonl", "--compare", tmp_path / "m.json",
                  "--plot", tmp_path / "r.png",
                  "--no-embed", "--bootstrap", "100")
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    assert {k: result[k] for k in ("n", "accuracy", "precision", "recall", "f1")} == \
        {"n": 6, "accuracy": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert result["data"]["version"] == "0.0.1" and result["predictor"]["name"] == "file:p.jsonl"
    baseline = json.loads((tmp_path / "m.json").read_text())
    assert baseline["accuracy"] == 0.5 and baseline["f1"] == 0.0 and baseline["precision"] is None
    report = (tmp_path / "r.md").read_text()
    assert "release clariedge-test 0.0.1 / test" in report
    assert "| file:p.jsonl | all | 6 | 1.000 [1.000, 1.000] |" in report
    assert "| constant:clear | all | 6 | 0.500" in report
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| file:p.jsonl | pre_retrieval | 3 |" in report and "### By category (hard negatives separate)" in report
    assert len((tmp_path / "d.jsonl").read_text().splitlines()) == 6


def test_cli_bad_input_is_one_line_exit_2(release, tmp_path):
    out = run_cli("--predictions", tmp_path / "nope.jsonl", "--release", release)
    assert out.returncode == 2 and "nope.jsonl: file not found" in out.stderr and "Traceback" not in out.stderr
    out = run_cli("--predictions", tmp_path / "nope.jsonl")
    assert out.returncode == 2 and "exactly one data source" in out.stderr
    out = run_cli("--release", tmp_path, "--predictions", tmp_path / "x.jsonl")
    assert out.returncode == 2 and "not a release directory" in out.stderr


def test_cli_on_a_benchmark(tmp_path):
    fix = Path(__file__).parent / "fixtures" / "benchmarks"
    from builder.eval_sets import load_benchmark

    bench = load_benchmark("clamber", fix / "clamber_benchmark.jsonl")
    preds = write_predictions(tmp_path / "p.jsonl", [{"id": r["id"], "output": "CLEAR"} for r in bench.records])
    out = run_cli("--predictions", preds, "--benchmark", "clamber", "--path", fix / "clamber_benchmark.jsonl",
                  "--json", tmp_path / "c.json", "--no-embed", "--bootstrap", "50")
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "c.json").read_text())
    assert result["n"] == 4 and result["accuracy"] == 0.5 and result["recall"] == 0.0
    assert result["data"]["benchmark"] == "clamber" and result["data"]["positives"] == 2
    assert set(result["by_domain"]) == {"semantic", "epistemic"}


def test_load_predictor_specs(tmp_path):
    preds = write_predictions(tmp_path / "p.jsonl", [{"id": "a", "output": "CLEAR"}])
    assert isinstance(load_predictor(f"file:{preds}"), FilePredictor)
    assert isinstance(load_predictor(str(preds)), FilePredictor)
    from builder.errors import InputError

    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    with pytest.raises(InputError, match="give the base model"):
        load_predictor(str(adapter))
    with pytest.raises(InputError, match="not a predictor spec"):
        load_predictor(str(tmp_path / "missing"))


# ---- on a real demo build -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_release(tmp_path_factory) -> Path:
    from builder.config import load_config
    from builder.build import build

    release_dir = build(load_config(None), tmp_path_factory.mktemp("demo")).release
    return release_dir


def test_evaluate_on_the_demo_build(demo_release, tmp_path):
    records, data = load_release_split(demo_release, "validation")
    assert records and data["name"] and data["version"]
    gold = write_predictions(tmp_path / "gold.jsonl", [{"id": r["id"], "output": json.dumps(r["target"])} for r in records])
    out = run_cli("--predictions", gold, "--release", demo_release, "--split", "validation", "--json", tmp_path / "g.json",
                  "--no-embed", "--bootstrap", "100")
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "g.json").read_text())
    assert result["n"] == len(records) and result["accuracy"] == 1.0 and result["errors"]["count"] == 0
    positives = sum(r["needs_clarification"] for r in records)
    assert result["quality"]["scored"] == positives and result["quality"]["rouge_l"] == pytest.approx(1.0)
    assert set(result["by_setting"]) == {r["setting"] for r in records}
    assert set(result["by_category"]) == {r["category"] for r in records}
    majority = evaluate(records, load_predictor("constant:clear"), data=data, samples=100, embed=False)[0]
    assert majority["accuracy"] == pytest.approx(1 - positives / len(records))
