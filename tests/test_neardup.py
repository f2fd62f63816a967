import importlib.util
from pathlib import Path

import numpy as np
import pytest
from rapidfuzz import fuzz, process

from builder.neardup import LshParams, _may_match, clusters, near_duplicate_pairs, normalize

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("bench_neardup", ROOT / "bench" / "neardup.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def as_set(pairs: np.ndarray) -> set[tuple[int, int]]:
    return {(int(i), int(j)) for i, j in pairs}


def brute(texts: list[str], threshold: float) -> set[tuple[int, int]]:
    strings = [normalize(t) for t in texts]
    m = process.cdist(strings, strings, scorer=fuzz.ratio, score_cutoff=threshold, dtype=np.uint8)
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(m)) if i < j}


def test_exact_duplicates_all_paired_after_normalizing():
    texts = ["What is the visa fee?", "what is the visa fee", "WHAT IS THE VISA FEE !!", "how do i renew a passport"]
    pairs, scores = near_duplicate_pairs(texts)
    assert as_set(pairs) == {(0, 1), (0, 2), (1, 2)}
    assert scores.tolist() == [100.0, 100.0, 100.0]


def test_one_char_edits_found_and_different_strings_not_paired():
    texts = ["how do i reset my router password", "how do i reset my ruoter password", "where is the nearest pharmacy",
             "how do i reset my router passwords", "what is the best laptop for students"]
    pairs, scores = near_duplicate_pairs(texts, 92)
    assert as_set(pairs) == {(0, 1), (0, 3), (1, 3)}
    assert all(s >= 92 for s in scores)
    assert clusters(len(texts), pairs).tolist() == [0, 0, 1, 0, 2]


def test_threshold_is_respected():
    texts = ["what about its cost", "what about its price"]  # ratio well below 92
    assert fuzz.ratio(*texts) < 92
    assert len(near_duplicate_pairs(texts, 92)[0]) == 0
    assert len(near_duplicate_pairs(texts, 50)[0]) == 1


def test_empty_and_short_strings():
    assert near_duplicate_pairs([])[0].shape == (0, 2)
    assert near_duplicate_pairs(["only one"])[0].shape == (0, 2)
    pairs, scores = near_duplicate_pairs(["", "?!", "a", "a", "ab", "é"])
    # "" "?!" and "é" all normalize to the empty string; "a" twice is identical.
    assert as_set(pairs) == {(0, 1), (0, 5), (1, 5), (2, 3)}
    assert scores.tolist() == [100.0] * 4
    assert clusters(0, np.zeros((0, 2), dtype=np.int64)).tolist() == []


def test_deterministic_and_sorted():
    texts = _bench().synthetic_queries(1500, seed=4)[0]
    a, sa = near_duplicate_pairs(texts)
    b, sb = near_duplicate_pairs(list(texts))
    assert np.array_equal(a, b) and np.array_equal(sa, sb)
    codes = a[:, 0] * len(texts) + a[:, 1]
    assert (a[:, 0] < a[:, 1]).all() and (np.diff(codes) > 0).all()


def test_prefilter_never_rejects_a_true_pair():
    texts = _bench().synthetic_queries(3000, seed=5)[0]
    strings = list(dict.fromkeys(normalize(t) for t in texts))
    rng = np.random.default_rng(0)
    pairs = rng.integers(len(strings), size=(200_000, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    for threshold in (80, 92):
        scores = process.cpdist([strings[i] for i in pairs[:, 0]], [strings[j] for j in pairs[:, 1]], scorer=fuzz.ratio)
        kept = _may_match(strings, pairs, threshold)
        assert kept[scores >= threshold].all()
        assert (~kept).sum() > len(pairs) // 2  # and it does prune


@pytest.mark.parametrize("seed", [0, 1])
def test_recall_against_all_pairs(seed):
    texts, planted = _bench().synthetic_queries(2000, seed=seed)
    truth = brute(texts, 92)
    pairs, scores = near_duplicate_pairs(texts, 92)
    found = as_set(pairs)
    assert len(truth) > 100
    assert found <= truth  # every reported pair is a true one
    recall = len(found & truth) / len(truth)
    assert recall >= 0.97, recall
    strings = [normalize(t) for t in texts]
    identical = {p for p in truth if strings[p[0]] == strings[p[1]]}
    assert identical <= found  # identical strings are never missed


def test_params_change_blocking_not_truth():
    texts = _bench().synthetic_queries(1000, seed=2)[0]
    truth = brute(texts, 92)
    for params in (LshParams(bands=8, rows=2, window=2), LshParams(drop_common=0), LshParams(seed=9)):
        assert as_set(near_duplicate_pairs(texts, 92, params)[0]) <= truth
