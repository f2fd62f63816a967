"""Kappa on cases computed by hand."""


import pytest

from builder.audit.agreement import agreement, cohen_kappa, fleiss_kappa, percent_agreement


def test_cohen_textbook_case():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15. po = 35/50 = 0.7;
    # pe = P(a yes) P(b yes) + P(a no) P(b no) = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4.
    a = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_cohen_extremes_and_undefined():
    assert cohen_kappa(["a", "b", "a", "c"], ["a", "b", "a", "c"]) == pytest.approx(1.0)
    # po = 0, pe = 0.5*0.5 + 0.5*0.5 = 0.5 -> kappa = -1.
    assert cohen_kappa([True, False, True, False], [False, True, False, True]) == pytest.approx(-1.0)
    # Both raters always say the same single label: pe = 1, kappa is 0/0.
    assert cohen_kappa([True, True], [True, True]) is None


def test_fleiss_small_case_by_hand():
    # 3 items, 3 raters, 2 categories: [3,0] [0,3] [2,1].
    # P_i = 1, 1, (4+1-3)/(3*2) = 1/3 -> P_bar = 7/9; p = (5/9, 4/9) -> P_e = 41/81.
    # kappa = (63/81 - 41/81) / (40/81) = 22/40 = 0.55.
    assert fleiss_kappa([[3, 0], [0, 3], [2, 1]]) == pytest.approx(0.55)


def test_fleiss_wikipedia_table():
    # Fleiss (1971) style worked example: 10 subjects, 14 raters, 5 categories; kappa = 0.210.
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-4)


def test_fleiss_undefined_when_one_category():
    assert fleiss_kappa([[3, 0], [2, 0]]) is None
    assert fleiss_kappa([[1, 0]]) is None  # no item with two ratings


def test_agreement_picks_cohen_for_two_and_fleiss_for_more():
    two = {"r1": {"ann": "y", "bob": "y"}, "r2": {"ann": "n", "bob": "y"}, "r3": {"ann": "n", "bob": "n"},
           "r4": {"ann": "y"}}  # r4 has one rating: not an agreement item
    out = agreement(two)
    assert out["method"] == "cohen" and out["items"] == 3
    # po = 2/3; ann yes 1/3, bob yes 2/3 -> pe = 1/3*2/3 + 2/3*1/3 = 4/9; kappa = (6/9-4/9)/(5/9) = 0.4
    assert out["kappa"] == pytest.approx(0.4)
    three = {"r1": {"a": "y", "b": "y", "c": "y"}, "r2": {"a": "n", "b": "n", "c": "n"}, "r3": {"a": "y", "b": "y", "c": "n"}}
    out = agreement(three)
    assert out["method"] == "fleiss"
    assert out["kappa"] == pytest.approx(fleiss_kappa([[3, 0], [0, 3], [2, 1]]))
    assert percent_agreement(three) == pytest.approx((3 + 3 + 1) / 9)


def test_agreement_without_overlap():
    out = agreement({"r1": {"a": "y"}, "r2": {"b": "n"}})
    assert out["method"] is None and out["kappa"] is None and out["items"] == 0
