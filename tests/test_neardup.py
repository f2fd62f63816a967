import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rapidfuzz import fuzz, process

from builder.neardup import LshParams, _may_match, candidate_pairs, clusters, distinct, near_duplicate_pairs, normalize

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT.parent / "shared" / "bench" / "gen_queries.py"

TEMPLATES = ["how do i {v} my {n} in {p}", "what is the {a} {n} for {n} in {p}", "can i {v} a {n} without a {n}",
             "where can i {v} the {a} {n} near {p}", "is it {a} to {v} {n} before {p}", "{n} {n} {p}",
             "how much does a {a} {n} cost in {p} this year", "why does my {n} keep {v} after the update",
             "tell me about {p} {n} and {n}", "who can {v} the {n} at {p}"]
VERBS = "renew cancel reset fix install transfer pay open book return print sign claim".split()
ADJS = "cheap best new local quick safe free old main daily".split()


def synthetic(n: int, seed: int) -> list[str]:
    """Template queries (some pairs differ only in one slot) with made-up nouns and places drawn Zipf-like,
    and planted edits: a typo, an extra or dropped word, two swapped words, a case or punctuation change."""
    rng = random.Random(seed)
    syl = "ka lo ve ri tan mor bel zen tri dor fin gal hex jun kel lum nor pax rov sol tor vel".split()
    made = sorted({"".join(rng.choice(syl) for _ in range(rng.randint(1, 3))) for _ in range(3000)})
    rng.shuffle(made)
    words = {"v": VERBS, "a": ADJS, "n": made[:1200], "p": made[1200:]}
    weights = {k: [1 / (r + 1) for r in range(len(w))] for k, w in words.items()}
    out: list[str] = []
    while len(out) < n:
        q = rng.choice(TEMPLATES)
        while "{" in q:
            i = q.index("{")
            q = q[:i] + rng.choices(words[q[i + 1]], weights[q[i + 1]])[0] + q[i + 3:]
        out.append(q)
        if rng.random() < 0.3:
            w = q.split()
            k = rng.randrange(len(w))
            edit = rng.randrange(5)
            if edit == 0 and len(w[k]) > 3:
                w[k] = w[k][:1] + w[k][2:]
            elif edit == 1:
                w.insert(k, rng.choice(["please", "the", "really", "now"]))
            elif edit == 2 and len(w) > 5:
                del w[k]
            elif edit == 3 and k + 1 < len(w):
                w[k], w[k + 1] = w[k + 1], w[k]
            else:
                w[0] = w[0].upper() + ","
            out.append(" ".join(w) + rng.choice(["", "?", "!!"]))
    return out[:n]


def gen_queries(tmp_path: Path, n: int) -> list[str]:
    """gen_queries.py's realistic corpus (seed 13), from ../shared."""
    if not GEN.exists():
        pytest.skip(f"{GEN} is absent")
    out = tmp_path / "q.tsv"
    subprocess.run([sys.executable, str(GEN), "--n", str(n), "--seed", "13", "--out", str(out)], check=True,
                   capture_output=True)
    return [line.rstrip("\n").split("\t", 3)[3] for line in out.read_text(encoding="utf-8").splitlines()[1:]]


def as_set(pairs: np.ndarray) -> set[tuple[int, int]]:
    return {(int(i), int(j)) for i, j in pairs}


def brute(texts: list[str], threshold: float) -> set[tuple[int, int]]:
    strings = [normalize(t) for t in texts]
    m = process.cdist(strings, strings, scorer=fuzz.ratio, score_cutoff=threshold, dtype=np.uint8)
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(m)) if i < j}


def differing(pairs: set[tuple[int, int]], texts: list[str]) -> set[tuple[int, int]]:
    strings = [normalize(t) for t in texts]
    return {(i, j) for i, j in pairs if strings[i] != strings[j]}


@pytest.mark.parametrize("threshold", [90, 92])
def test_equals_exact_all_pairs_on_gen_queries(tmp_path, threshold):
    texts = gen_queries(tmp_path, 2000)
    truth = brute(texts, threshold)
    pairs, scores = near_duplicate_pairs(texts, threshold)
    found = as_set(pairs)
    assert len(differing(truth, texts)) > 200  # enough non-identical pairs to mean something
    assert differing(found, texts) == differing(truth, texts)
    assert found == truth  # and the identical ones, all of them
    assert (scores >= threshold).all()


@pytest.mark.parametrize("seed", [3, 13])
def test_recall_on_the_in_test_corpus(seed):
    # Blocking is probabilistic: on this denser corpus (few templates, Zipf words) it misses 1 to 4 of
    # 1,175-1,430 non-identical pairs; it never reports a false one and never misses an identical one.
    texts = synthetic(2000, seed)
    truth = brute(texts, 90)
    found = as_set(near_duplicate_pairs(texts, 90)[0])
    assert found <= truth
    assert truth - differing(truth, texts) <= found
    assert len(differing(found, texts)) >= 0.995 * len(differing(truth, texts)) > 1000


def test_normalize():
    assert normalize("  What's THE visa-fee?! ") == "what s the visa fee"
    assert normalize("Café   au\tlait") == "caf au lait"  # non-ASCII letters are separators, as in the regex
    assert normalize("") == normalize("?!") == ""
    assert normalize("A1_b2") == "a1 b2"


def test_exact_duplicates_all_paired_after_normalizing():
    texts = ["What is the visa fee?", "what is the visa fee", "WHAT IS THE VISA FEE !!", "how do i renew a passport"]
    pairs, scores = near_duplicate_pairs(texts)
    assert as_set(pairs) == {(0, 1), (0, 2), (1, 2)}
    assert scores.tolist() == [100.0, 100.0, 100.0]
    assert clusters(len(texts), pairs).tolist() == [0, 0, 0, 1]


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


def test_empty_single_and_short_strings():
    assert near_duplicate_pairs([])[0].shape == (0, 2)
    assert near_duplicate_pairs([])[1].shape == (0,)
    assert near_duplicate_pairs(["only one"])[0].shape == (0, 2)
    assert candidate_pairs(["only one"]).shape == (0, 2)
    pairs, scores = near_duplicate_pairs(["", "?!", "a", "a", "ab", "é"])
    # "" "?!" and "é" all normalize to the empty string; "a" twice is identical; "a" vs "ab" is 66.7.
    assert as_set(pairs) == {(0, 1), (0, 5), (1, 5), (2, 3)}
    assert scores.tolist() == [100.0] * 4
    assert clusters(0, np.zeros((0, 2), dtype=np.int64)).tolist() == []


def test_all_identical():
    pairs, scores = near_duplicate_pairs(["Same query?"] * 5)
    assert as_set(pairs) == {(i, j) for i in range(5) for j in range(i + 1, 5)}
    assert clusters(5, pairs).tolist() == [0] * 5


def test_short_strings_against_all_pairs():
    # At ratio >= 90 two different strings need 10+ characters between them (one edit costs 1 of l1 + l2),
    # so the shortest that can pair are 5 and 5 characters: edits on strings of 4-12 characters.
    rng = random.Random(7)
    base = ["".join(rng.choice("abcdefgh") for _ in range(rng.randint(4, 12))) for _ in range(150)]
    texts = base + [s[:k] + rng.choice("xyz") + s[k + 1:] for s in base for k in [rng.randrange(len(s))]]
    texts += [s + rng.choice("xyz") for s in base] + [s[1:] for s in base]
    truth = brute(texts, 90)
    assert len(differing(truth, texts)) > 50
    assert as_set(near_duplicate_pairs(texts, 90)[0]) == truth


def test_deterministic_and_sorted():
    texts = synthetic(1500, seed=4)
    a, sa = near_duplicate_pairs(texts)
    b, sb = near_duplicate_pairs(list(texts))
    assert np.array_equal(a, b) and np.array_equal(sa, sb)
    codes = a[:, 0] * len(texts) + a[:, 1]
    assert (a[:, 0] < a[:, 1]).all() and (np.diff(codes) > 0).all()


def test_prefilter_never_rejects_a_true_pair():
    strings = distinct([normalize(t) for t in synthetic(3000, seed=5)])[0]
    rng = np.random.default_rng(0)
    pairs = rng.integers(len(strings), size=(200_000, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    for threshold in (80, 92):
        scores = process.cpdist([strings[i] for i in pairs[:, 0]], [strings[j] for j in pairs[:, 1]], scorer=fuzz.ratio)
        kept = _may_match(strings, pairs, threshold)
        assert kept[scores >= threshold].all()
        assert (~kept).sum() > len(pairs) // 2  # and it does prune


def test_candidates_unique_and_cover_the_found_pairs():
    strings = distinct([normalize(t) for t in synthetic(1500, seed=6)])[0]
    cand = candidate_pairs(strings, LshParams(), 90)
    codes = cand[:, 0] * len(strings) + cand[:, 1]
    assert (cand[:, 0] < cand[:, 1]).all() and len(np.unique(codes)) == len(codes)
    assert len(cand) < len(strings) * (len(strings) - 1) // 20  # blocking, not all pairs


def test_params_change_blocking_not_truth():
    texts = synthetic(1000, seed=2)
    truth = brute(texts, 92)
    for params in (LshParams(bands=8, rows=2, window=2), LshParams(drop_common=0), LshParams(seed=9),
                   LshParams(pair_budget=0.0, window=1), LshParams(chunk=97)):
        assert as_set(near_duplicate_pairs(texts, 92, params)[0]) <= truth
