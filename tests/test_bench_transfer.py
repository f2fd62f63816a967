"""bench/transfer.py's table code on the small benchmark fixtures and a baseline trained on hand records."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from builder.train.baseline import BaselinePredictor, train_baseline

from train_helpers import write_hand_release

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "benchmarks"


def bench():
    spec = importlib.util.spec_from_file_location("transfer_bench", ROOT / "bench" / "transfer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_score_row_against_the_constant_references():
    t = bench()
    records = [{"needs_clarification": g} for g in (True, True, False, False, False)]
    row = t.score_row("x", records, [True, False, True, False, False], samples=200, seed=1)
    # tp 1, fn 1, fp 1, tn 2
    assert (row["n"], row["positives"]) == (5, 2)
    assert row["precision"] == 0.5 and row["recall"] == 0.5 and row["f1"] == 0.5 and row["accuracy"] == 0.6
    assert row["always_clarify_f1"] == pytest.approx(2 * 2 / (2 * 2 + 3))  # P 2/5, R 1
    assert row["majority_label"] == "clear" and row["majority_f1"] == 0.0
    low, high = row["f1_ci95"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    again = t.score_row("x", records, [True, False, True, False, False], samples=200, seed=1)
    assert again["f1_ci95"] == row["f1_ci95"]  # seeded
    assert row["roc_auc"] is None  # no probabilities, no ranking figures
    ranked = t.score_row("x", records, [True, False, True, False, False], samples=200, seed=1,
                         probabilities=[0.9, 0.2, 0.6, 0.1, 0.3])
    # positives at ranks 1 and 4 of 5: 4 of the 6 positive-negative pairs ordered right
    assert ranked["roc_auc"] == pytest.approx(4 / 6)
    assert ranked["average_precision"] == pytest.approx((1 / 1 + 2 / 4) / 2)


def test_table_rows_on_the_fixture_benchmarks(tmp_path):
    t = bench()
    release = write_hand_release(tmp_path / "dist", train=10, validation=2, test=2)
    train_baseline(release, tmp_path / "m", embedder="tfidf", log=lambda _: None)
    predictor = BaselinePredictor.load(tmp_path / "m")
    sets = t.benchmark_sets(FIX / "mtrag_conversations.json", FIX / "mtragun_reference.jsonl",
                            FIX / "abgcoqa_val.json")
    assert [name for name, _, _ in sets] == ["MTRAG-UN dev half", "Abg-CoQA val"]
    details: list = []
    rows = t.evaluate_sets(predictor, sets, samples=100, seed=0, details=details)
    for row, (_, records, _) in zip(rows, sets):
        assert row["n"] == len(records) and row["positives"] == sum(r["needs_clarification"] for r in records)
        c = row["confusion"]
        assert c["tp"] + c["fp"] + c["fn"] + c["tn"] == row["n"]
    # the details are the predictor's own decisions, at its saved threshold
    predicted = [p.needs_clarification for p in predictor.predict(sets[0][1])]
    assert [d["predicted"] for d in details if d["data"] == "MTRAG-UN dev half"] == predicted
    table = t.render_table(rows)
    lines = table.splitlines()
    assert lines[0].startswith("| data | n | pos | F1 | 95% CI |") and len(lines) == 2 + len(rows)
    assert lines[2].startswith(f"| MTRAG-UN dev half | {rows[0]['n']} | {rows[0]['positives']} |")


def test_skips_cleanly_without_shared_data(tmp_path, monkeypatch, capsys):
    t = bench()
    monkeypatch.setattr(t, "CONVERSATIONS", tmp_path / "absent.json")
    assert t.main([]) == 0
    assert capsys.readouterr().out.startswith("skipped: needs")
