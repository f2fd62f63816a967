"""Bench the near-duplicate detector (builder/neardup.py) on a corpus of short queries.

    python bench/neardup.py --sizes 30000 1000000          # corpora made by ../shared/bench/gen_queries.py
    python bench/neardup.py --corpus /tmp/q.tsv --threshold 90
    python bench/neardup.py --sizes 1000000 --sample 500    # also recall on all partners of 500 sampled strings

The corpus is a TSV with the columns `id, cluster, op, text` (what gen_queries.py writes: seeded, with planted
near-duplicates sharing a `cluster` >= 0). Without --corpus, each size is generated into a temporary folder with
`gen_queries.py --n N --seed SEED`; when ../shared is absent the bench says so and exits 0.

Each run is a fresh subprocess doing only what dedup and split do (`near_duplicate_pairs`, then `clusters`), so
its peak RSS (ru_maxrss from os.wait4, the corpus strings included) is its own; wall and cpu time count
detection only, not reading the TSV. Its pairs are then scored in this process, on the
same normalization (`neardup.normalize`), and only over pairs of DIFFERENT normalized strings: identical strings
are always paired and would pad the figure.
- recall vs all-pairs: against exact rapidfuzz `cdist(fuzz.ratio, score_cutoff=threshold)` over all distinct
  strings, itself run as a reference subprocess (its wall and peak RSS are printed too), for n <= --truth-max.
- planted recall: the planted pairs (same cluster) whose ratio reaches the threshold.
- sampled recall (--sample K): all true partners of K random distinct strings, by cdist against all strings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
GEN = ROOT.parent / "shared" / "bench" / "gen_queries.py"
sys.path.insert(0, str(ROOT))  # this checkout's builder, not an installed one


def check_corpus(path: Path) -> None:
    """Stop with exit code 2 and a message naming the file and line when it is no gen_queries TSV."""
    try:
        with open(path, encoding="utf-8") as f:
            header = f.readline().rstrip("\n").split("\t")
            for no, line in enumerate(f, start=2):
                cols = line.rstrip("\n").split("\t", 3)
                if len(cols) != 4 or not cols[1].lstrip("-").isdigit():
                    raise ValueError(f"line {no}: expected 4 tab-separated columns with an integer cluster")
    except (OSError, UnicodeDecodeError, ValueError) as e:
        print(f"error: {path}: {e}", file=sys.stderr)
        sys.exit(2)
    if header[:4] != ["id", "cluster", "op", "text"]:
        print(f"error: {path}: line 1: expected the columns id, cluster, op, text; got {header}", file=sys.stderr)
        sys.exit(2)


def read_corpus(path: Path) -> tuple[list[str], np.ndarray]:
    """Texts and planted cluster ids (-1: none) of a gen_queries TSV."""
    texts, cluster = [], []
    with open(path, encoding="utf-8") as f:
        f.readline()  # the header, checked by check_corpus
        for line in f:
            _, c, _, t = line.rstrip("\n").split("\t", 3)
            texts.append(t)
            cluster.append(int(c))
    return texts, np.asarray(cluster, dtype=np.int64)


def detect(path: str, threshold: float, out: str) -> dict:
    """Worker: what dedup and split run, `near_duplicate_pairs` then `clusters`; the item pairs go to `out`."""
    from builder import neardup

    texts, _ = read_corpus(Path(path))
    t0, cpu0 = time.perf_counter(), time.process_time()
    pairs, _ = neardup.near_duplicate_pairs(texts, threshold)
    neardup.clusters(len(texts), pairs)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    np.save(out, pairs)
    return {"wall": wall, "cpu": cpu, "pairs": len(pairs)}


def cdist_pairs(rows: list[str], strings: list[str], threshold: float, offset: int = 0) -> np.ndarray:
    """Exact (row index into strings, j) pairs with ratio >= threshold, rows against all strings, in blocks."""
    from rapidfuzz import fuzz, process

    found = []
    for lo in range(0, len(rows), 2000):
        m = process.cdist(rows[lo:lo + 2000], strings, scorer=fuzz.ratio, score_cutoff=threshold,
                          dtype=np.uint8, workers=-1)
        i, j = np.nonzero(m)
        found.append(np.stack([i + lo + offset, j], axis=1))
    return np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)


def reference(path: str, threshold: float, out: str) -> dict:
    """Worker: exact all-pairs over the distinct normalized strings (the reference the recall is measured on)."""
    from builder import neardup

    texts, _ = read_corpus(Path(path))
    t0 = time.perf_counter()
    uniq, _ = neardup.distinct([neardup.normalize(t) for t in texts])
    p = cdist_pairs(uniq, uniq, threshold)
    p = p[p[:, 0] < p[:, 1]]
    wall = time.perf_counter() - t0
    np.save(out, p)
    return {"wall": wall}


def run_worker(args: list[str]) -> tuple[dict, float, float, float]:
    """Run this file as a fresh subprocess; its JSON result, its own peak RSS (MB, from wait4), and the load
    average before and after."""
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([sys.executable, __file__, *args], cwd=ROOT, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode:
            sys.exit(f"error: worker {args[:2]} failed:\n{err.read()[-3000:]}")
        return json.loads(out.read()), usage.ru_maxrss / 1024, load0, os.getloadavg()[0]


def codes(pairs: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(pairs[:, 0], pairs[:, 1]).astype(np.int64) * n + np.maximum(pairs[:, 0], pairs[:, 1])


def planted_pairs(cluster: np.ndarray, inverse: np.ndarray, strings: list[str], threshold: float) -> np.ndarray:
    """Distinct-string pairs (u < v) of planted near-duplicates whose ratio reaches the threshold."""
    from rapidfuzz import fuzz, process

    items = np.flatnonzero(cluster >= 0)
    items = items[np.argsort(cluster[items], kind="stable")]
    c = cluster[items]
    start = np.flatnonzero(np.concatenate([[True], c[1:] != c[:-1]]))
    size = np.diff(np.append(start, len(c)))
    a, b = [], []
    for k in range(2, size.max(initial=0) + 1):  # clusters hold 2-4 queries: loop over sizes, not clusters
        st = start[size == k]
        for x in range(k):
            for y in range(x + 1, k):
                a.append(inverse[items[st + x]])
                b.append(inverse[items[st + y]])
    if not a:
        return np.zeros((0, 2), dtype=np.int64)
    p = np.stack([np.concatenate(a), np.concatenate(b)], axis=1)
    p = p[p[:, 0] != p[:, 1]]
    p = np.unique(np.sort(p, axis=1), axis=0)
    score = process.cpdist([strings[i] for i in p[:, 0]], [strings[j] for j in p[:, 1]], scorer=fuzz.ratio, workers=-1)
    return p[score >= threshold]


def evaluate(path: Path, found: np.ndarray, truth: np.ndarray | None, threshold: float, sample: int, seed: int) -> dict:
    from builder import neardup

    texts, cluster = read_corpus(path)
    strings, inverse = neardup.distinct([neardup.normalize(t) for t in texts])
    n = len(strings)
    u, v = inverse[found[:, 0]], inverse[found[:, 1]]
    got = np.unique(codes(np.stack([u, v], axis=1)[u != v], n))  # pairs of different strings only
    hit = lambda p: np.isin(codes(p, n), got)  # noqa: E731
    out = {}
    if truth is not None:
        out["truth"] = len(truth)
        out["recall"] = float(hit(truth).mean()) if len(truth) else float("nan")
        out["precision"] = float(np.isin(got, codes(truth, n)).mean()) if len(got) else float("nan")
    planted = planted_pairs(cluster, inverse, strings, threshold)
    out["planted"] = len(planted)
    out["planted_recall"] = float(hit(planted).mean()) if len(planted) else float("nan")
    if sample:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=min(sample, n), replace=False))
        p = cdist_pairs([strings[i] for i in rows], strings, threshold)
        p[:, 0] = rows[p[:, 0]]
        p = p[p[:, 0] != p[:, 1]]
        out["sampled"] = len(p)
        out["sampled_recall"] = float(hit(p).mean()) if len(p) else float("nan")
    return out


def corpora(args: argparse.Namespace, tmp: Path) -> list[Path]:
    if args.corpus:
        return [Path(c) for c in args.corpus]
    paths = []
    for n in args.sizes:
        p = tmp / f"queries_{n}_{args.seed}.tsv"
        subprocess.run([sys.executable, str(GEN), "--n", str(n), "--seed", str(args.seed), "--out", str(p)],
                       check=True, capture_output=True)
        paths.append(p)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", nargs="+", help="TSV files with columns id, cluster, op, text")
    ap.add_argument("--sizes", type=int, nargs="+", default=[30_000, 1_000_000], help="corpus sizes to generate")
    ap.add_argument("--seed", type=int, default=13, help="gen_queries.py seed")
    ap.add_argument("--threshold", type=float, default=90.0)
    ap.add_argument("--truth-max", type=int, default=50_000, help="exact all-pairs reference up to this many rows")
    ap.add_argument("--sample", type=int, default=0, help="sampled recall on this many strings (sizes above truth-max)")
    ap.add_argument("--worker", choices=["detect", "reference"], help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        fn = detect if args.worker == "detect" else reference
        print(json.dumps(fn(args.corpus[0], args.threshold, args.out)))
        return

    from builder.neardup import LshParams

    if not args.corpus and not GEN.exists():
        print(f"skipped: {GEN} is absent (pass --corpus PATH to bench a TSV of your own)")
        return
    header = ("n", "wall s", "cpu s", "peak RSS MB", "pairs found", "recall vs all-pairs (non-identical)",
              "all-pairs wall s / peak MB", "speedup", "planted recall", "sampled recall", "load before/after")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        paths = corpora(args, tmp)
        for path in paths:
            check_corpus(path)
        print(f"threshold={args.threshold:g}  cpus={os.cpu_count()}  params={LshParams()}")
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for path in paths:
            n = sum(1 for _ in open(path, encoding="utf-8")) - 1
            base = ["--corpus", str(path), "--threshold", str(args.threshold)]
            r, peak, l0, l1 = run_worker(["--worker", "detect", *base, "--out", str(tmp / "found.npy")])
            found = np.load(tmp / "found.npy")
            truth, ref = None, "-"
            speed = "-"
            if n <= args.truth_max:
                rr, rpeak, _, l1 = run_worker(["--worker", "reference", *base, "--out", str(tmp / "truth.npy")])
                truth = np.load(tmp / "truth.npy")
                ref, speed = f"{rr['wall']:.1f} / {rpeak:.0f}", f"{rr['wall'] / r['wall']:.1f}x"
            e = evaluate(path, found, truth, args.threshold, args.sample if truth is None else 0, args.seed)
            rec = f"{e['recall']:.4f} of {e['truth']:,} (precision {e['precision']:.4f})" if truth is not None else "-"
            samp = f"{e['sampled_recall']:.4f} of {e['sampled']:,}" if "sampled" in e else "-"
            print("| " + " | ".join([f"{n:,}", f"{r['wall']:.1f}", f"{r['cpu']:.1f}", f"{peak:.0f}", f"{r['pairs']:,}", rec, ref, speed,
                                     f"{e['planted_recall']:.4f} of {e['planted']:,}", samp, f"{l0:.1f} / {l1:.1f}"]) + " |",
                  flush=True)


if __name__ == "__main__":
    main()
