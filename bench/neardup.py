"""Bench the near-duplicate detector (builder/neardup.py) on synthetic short English questions.

    python bench/neardup.py                          # sizes 10k 100k 1M, threshold 92, seed 0
    python bench/neardup.py --sizes 10000 100000 --threshold 90 --seed 3

Queries come from question templates ("what is the ...", "how do i ...") filled with a word list made here
(a few hundred real words plus pronounceable made-up ones, drawn Zipf-like so words repeat as in real text).
About 10% of them are planted near-duplicates of another query: 1-3 character edits, a swap of two
neighbouring words, or a punctuation/case change. Each size runs in a fresh process, so its peak RSS
(ru_maxrss, read right after detection) is its own; it includes the strings themselves ("data RSS").
Planted recall counts the planted pairs whose normalized ratio reaches the threshold (the others are not
near-duplicates by definition). At the smallest size (<= 20k) recall and precision are also measured against
TRUE all-pairs: rapidfuzz cdist with fuzz.ratio on the same normalized strings. "Cluster recall" counts a
true pair as found when both ends land in one cluster (what dedup and split use).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

NOUNS = """account address airport apartment app battery bank bill bike blood book browser budget bus cable camera
car card cat certificate charger city class code company computer contract course credit data database date
diet dog doctor drug email engine exam fee file flight form fund game garden heart hotel house insurance
interest internet invoice job key kitchen laptop lease license loan map medicine meeting model monitor mortgage
museum network order package password passport payment pension phone plan policy printer project rate receipt
recipe refund rent report restaurant room router salary school screen server service software station student
subscription tax team ticket train treatment trip university update user vaccine visa wallet website window
word account symptom library actor museum beach hospital pharmacy dividend stock bond keyboard driver""".split()
VERBS = """book cancel change check choose clean connect convert delete download enable export file find fix get
install join learn make move open order pay print read reinstall renew reset restore return save send set share
sign start stop transfer update upgrade use visit watch apply borrow claim compare""".split()
ADJS = """best cheap cheapest fast free good large latest local new old online private public quick safe simple
small standard annual monthly daily main first last current direct basic""".split()
TEMPLATES = [
    "what is the {a} {n} for {n}?", "what is the {n} of {P}?", "what is the difference between {n} and {n}?",
    "what are the {n} {n}s in {P}?", "what about its {n}?", "what does {n} mean?",
    "how do i {v} my {n}?", "how do i {v} a {n} in {P}?", "how do i {v} the {a} {n} without a {n}?",
    "how can i {v} {n} on my {n}?", "how much does a {a} {n} cost in {P}?", "how long does it take to {v} a {n}?",
    "can i {v} my {n} with a {n}?", "can you {v} the {n} for {P}?", "is it {a} to {v} {n} before {n}?",
    "where can i {v} a {a} {n} near {P}?", "where is the {n} in {P}?", "why does my {n} {v} after the {n}?",
    "why is the {n} so {a}?", "when does the {n} {v} in {P}?", "which {n} is {a} for {n}?",
    "who can {v} the {n} at {P}?", "tell me about {P} {n}", "{n} {n} {P}", "do i need a {n} to {v} {n} in {P}?",
    "should i {v} the {n} or the {n}?", "are there {a} {n}s for {n} in {P}?", "what time does the {P} {n} open?",
]


def make_words(rng: np.random.Generator, count: int) -> list[str]:
    """Pronounceable made-up words (names, places, products), distinct and deterministic by rng."""
    onsets = "b c d f g h j k l m n p r s t v w z b d k l m n p r s t br cr dr fr gr pl pr st tr sh ch th".split()
    vowels = "a e i o u a e i o u ai ea oo ou".split()
    codas = ["", "", "", "", "n", "r", "s", "l", "t", "m", "nd", "rk", "st"]
    out, seen = [], set()
    while len(out) < count:
        k = 4 * count
        syl = rng.choice([1, 2, 2, 3], size=k)
        parts = [rng.integers(len(x), size=(k, 3)) for x in (onsets, vowels, codas)]
        for w_i in range(k):
            w = "".join(onsets[parts[0][w_i, j]] + vowels[parts[1][w_i, j]] + codas[parts[2][w_i, j]]
                        for j in range(syl[w_i]))
            if len(w) > 2 and w not in seen:
                seen.add(w)
                out.append(w)
                if len(out) == count:
                    break
    return out


def zipf_picker(rng: np.random.Generator, words: list[str], size: int) -> list[str]:
    p = 1.0 / np.arange(1, len(words) + 1) ** 0.9
    return [words[i] for i in rng.choice(len(words), size=size, p=p / p.sum())]


def _edit(rng: np.random.Generator, s: str) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    kind = rng.integers(4)
    if kind == 0:  # 1-3 character edits
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(len(s)))
            op = rng.integers(3)
            c = letters[rng.integers(26)]
            s = s[:i] + c + s[i + 1:] if op == 0 else s[:i] + c + s[i:] if op == 1 else s[:i] + s[i + 1:]
        return s
    if kind == 1:  # swap two neighbouring words
        w = s.split()
        if len(w) > 2:
            i = int(rng.integers(len(w) - 1))
            w[i], w[i + 1] = w[i + 1], w[i]
        return " ".join(w)
    if kind == 2:  # punctuation and case
        s = s.rstrip("?") if s.endswith("?") else s + "?"
        return s.capitalize() if rng.integers(2) else s.replace(" ", ", ", 1)
    i = int(rng.integers(len(s)))  # a single typo
    return s[:i] + letters[rng.integers(26)] + s[i + 1:]


def synthetic_queries(n: int, seed: int = 0, planted_share: float = 0.1) -> tuple[list[str], np.ndarray]:
    """`n` queries and the (i, j) index pairs of planted near-duplicates (i < j), in shuffled order."""
    rng = np.random.default_rng(seed)
    made = make_words(rng, 30_000)
    nouns = NOUNS + made[:20_000]
    places = made[20_000:]
    verbs, adjs = VERBS + made[20_000:21_000], ADJS
    n_planted = int(n * planted_share)
    n_base = n - n_planted
    slots = {"n": 3 * n_base, "P": n_base, "v": n_base, "a": n_base}
    pools = {"n": iter(zipf_picker(rng, nouns, slots["n"])), "P": iter(zipf_picker(rng, places, slots["P"])),
             "v": iter(zipf_picker(rng, verbs, slots["v"])), "a": iter(zipf_picker(rng, adjs, slots["a"]))}
    tpl = rng.integers(len(TEMPLATES), size=n_base)
    base = []
    for t in tpl:
        out, parts = [], TEMPLATES[t].split("{")
        out.append(parts[0])
        for part in parts[1:]:
            out.append(next(pools[part[0]]) + part[2:])
        base.append("".join(out))
    src = rng.choice(n_base, size=n_planted, replace=False)
    texts = base + [_edit(rng, base[i]) for i in src]
    order = rng.permutation(n)
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n)
    texts = [texts[i] for i in order]
    a, b = pos[src], pos[n_base + np.arange(n_planted)]
    return texts, np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)


def all_pairs(strings: list[str], threshold: float, block: int = 2000) -> np.ndarray:
    """TRUE near-duplicate pairs (i < j) by rapidfuzz cdist, in row blocks to keep memory small."""
    from rapidfuzz import fuzz, process

    found = []
    for lo in range(0, len(strings), block):
        m = process.cdist(strings[lo:lo + block], strings, scorer=fuzz.ratio, score_cutoff=threshold,
                          dtype=np.uint8, workers=-1)
        i, j = np.nonzero(m)
        i = i + lo
        keep = i < j
        found.append(np.stack([i[keep], j[keep]], axis=1))
    return np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)


def _codes(pairs: np.ndarray, n: int) -> np.ndarray:
    return pairs[:, 0].astype(np.int64) * n + pairs[:, 1]


def worker(n: int, threshold: float, seed: int, truth: bool, params: dict) -> dict:
    from rapidfuzz import fuzz, process

    from builder import neardup

    texts, planted = synthetic_queries(n, seed)
    data_rss = int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    # The steps of neardup.near_duplicate_pairs, one by one to count candidates.
    strings = [neardup.normalize(t) for t in texts]
    uniq, inverse = neardup.distinct(strings)
    cand = neardup.candidate_pairs(uniq, neardup.LshParams(**params), threshold)
    t1 = time.perf_counter()
    upairs, uscores = neardup.verified_pairs(uniq, cand, threshold)
    pairs, _ = neardup.expand(inverse, upairs, uscores)
    t2 = time.perf_counter()
    labels = neardup.clusters(n, pairs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    arr = np.asarray(strings, dtype=object)
    planted_score = process.cpdist(arr[planted[:, 0]], arr[planted[:, 1]], scorer=fuzz.ratio, workers=-1)
    qual = planted[planted_score >= threshold]
    found = np.isin(_codes(qual, n), _codes(pairs, n))
    out = {"n": n, "wall": wall, "cpu": cpu, "distinct": len(uniq), "lsh_s": t1 - t0, "verify_s": t2 - t1, "peak_mb": peak, "data_mb": data_rss,
           "candidates": len(cand), "verified": len(pairs), "planted": len(planted), "planted_qual": len(qual),
           "planted_recall": float(found.mean()) if len(qual) else float("nan")}
    if truth:
        t3 = time.perf_counter()
        true = all_pairs(strings, threshold)
        out["truth_s"] = time.perf_counter() - t3
        hit = np.isin(_codes(true, n), _codes(pairs, n))
        differ = np.fromiter((strings[i] != strings[j] for i, j in true), dtype=bool, count=len(true))
        out.update(true_pairs=len(true), recall=float(hit.mean()) if len(true) else float("nan"),
                   true_differ=int(differ.sum()), recall_differ=float(hit[differ].mean()) if differ.any() else float("nan"),
                   precision=float(np.isin(_codes(pairs, n), _codes(true, n)).mean()) if len(pairs) else float("nan"),
                   cluster_recall=float((labels[true[:, 0]] == labels[true[:, 1]]).mean()) if len(true) else float("nan"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--threshold", type=float, default=92.0)
    ap.add_argument("--seed", type=int, default=0)
    for name in ("bands", "rows", "drop-common", "window"):
        ap.add_argument(f"--{name}", type=int, help="override the LshParams default")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--truth", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    params = {k: v for k, v in (("bands", args.bands), ("rows", args.rows), ("drop_common", args.drop_common),
                                ("window", args.window)) if v is not None}
    if args.worker:
        print(json.dumps(worker(args.worker, args.threshold, args.seed, args.truth, params)))
        return

    from builder.neardup import LshParams

    print(f"threshold={args.threshold:g}  seed={args.seed}  cpus={os.cpu_count()}  params={LshParams(**params)}")
    header = ("n", "distinct", "wall s", "cpu s", "lsh s", "verify s", "peak RSS MB", "data RSS MB", "candidates (len ok)",
              "verified", "planted recall", "true pairs", "recall", "true non-identical", "recall non-identical",
              "cluster recall", "precision", "load avg")
    print(" | ".join(header))
    print(" | ".join("-" * len(h) for h in header))
    smallest = min(args.sizes)
    for n in args.sizes:
        cmd = [sys.executable, __file__, "--worker", str(n), "--threshold", str(args.threshold), "--seed", str(args.seed)]
        cmd += [f"--{k.replace('_', '-')}={v}" for k, v in params.items()]
        if n == smallest and n <= 20_000:
            cmd.append("--truth")
        load = os.getloadavg()[0]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            sys.exit(f"error: worker n={n} failed:\n{proc.stderr[-3000:]}")
        r = json.loads(proc.stdout)
        extra = ([f"{r['true_pairs']:,}", f"{r['recall']:.4f}", f"{r['true_differ']:,}", f"{r['recall_differ']:.4f}",
                  f"{r['cluster_recall']:.4f}", f"{r['precision']:.4f}"] if "recall" in r else ["-"] * 6)
        extra.append(f"{load:.1f}")
        print(" | ".join([f"{n:,}", f"{r['distinct']:,}", f"{r['wall']:.1f}", f"{r['cpu']:.1f}", f"{r['lsh_s']:.1f}",
                          f"{r['verify_s']:.1f}",
                          f"{r['peak_mb']:.0f}", f"{r['data_mb']:.0f}", f"{r['candidates']:,}", f"{r['verified']:,}",
                          f"{r['planted_recall']:.4f} of {r['planted_qual']:,}"] + extra), flush=True)


if __name__ == "__main__":
    main()
