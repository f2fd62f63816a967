"""Transfer: train the baseline on the full MTRAG release alone, score it on human-labelled data.

    python bench/transfer.py                          # build configs/mtrag.yaml, train, score
    python bench/transfer.py --release dist/clariedge-mtrag/1.0.0 --json transfer.json
    python bench/transfer.py --model models/baseline  # reuse a trained baseline too

Rows: the MTRAG-UN dev half (tasks sharing a conversation with the build input dropped), Abg-CoQA val,
and the release's own test split. Columns: n, gold positives, the baseline's F1 (positive class =
needs clarification) with a seeded percentile-bootstrap 95% CI, P, R, accuracy, ROC-AUC and average
precision of its probabilities (threshold-free), and the F1 of always-clarify and of the majority label. Then wall time and peak RSS of each step.
Needs ../shared (MTRAG, MTRAG-UN dev half, Abg-CoQA val); exits 0 with a message when it is absent.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's `builder`, not an installed one

SHARED = ROOT.parent / "shared" / "data"
CONFIG = ROOT / "configs" / "mtrag.yaml"
CONVERSATIONS = SHARED / "mtrag" / "conversations" / "conversations.json"
MTRAGUN = SHARED / "mtragun-dev" / "reference_dev.jsonl"
ABGCOQA = SHARED / "abg-coqa" / "coqa_abg_val.json"

COLUMNS = ("data", "n", "pos", "F1", "95% CI", "P", "R", "acc", "AUC", "AP", "always-clarify F1", "majority F1")


def ranking(gold: list[bool], probabilities: list[float] | None) -> tuple[float | None, float | None]:
    """ROC-AUC and average precision of the probabilities: how well the model ranks, whatever its threshold
    (F1 also moves when only the calibration does)."""
    if probabilities is None or len(set(gold)) < 2:
        return None, None
    from sklearn.metrics import average_precision_score, roc_auc_score

    return float(roc_auc_score(gold, probabilities)), float(average_precision_score(gold, probabilities))


def score_row(name: str, records: list[dict], predicted: list[bool | None], *, samples: int = 1000,
              seed: int = 0, probabilities: list[float] | None = None) -> dict[str, Any]:
    """One table row: the predictor's metrics and the two constant references on the same records."""
    from builder.evaluate import metrics

    gold = [bool(r["needs_clarification"]) for r in records]
    result = metrics.classification(gold, predicted, samples=samples, seed=seed)
    auc, ap = ranking(gold, probabilities)
    always = metrics.scores(metrics.confusion(gold, [True] * len(gold)))
    majority_label = 2 * sum(gold) > len(gold)  # ties: clear
    majority = metrics.scores(metrics.confusion(gold, [majority_label] * len(gold)))
    return {
        "data": name, "n": result["n"], "positives": result["gold_positive"],
        "f1": result["f1"], "f1_ci95": result["ci95"]["f1"], "precision": result["precision"],
        "recall": result["recall"], "accuracy": result["accuracy"], "roc_auc": auc, "average_precision": ap,
        "confusion": result["confusion"],
        "always_clarify_f1": always["f1"], "majority_label": "clarify" if majority_label else "clear",
        "majority_f1": majority["f1"],
    }


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _ci(ci: list[float] | None) -> str:
    return "n/a" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def render_table(rows: list[dict[str, Any]]) -> str:
    """A markdown table of the rows, as the README shows it."""
    cells = [[r["data"], str(r["n"]), str(r["positives"]), _num(r["f1"]), _ci(r["f1_ci95"]), _num(r["precision"]),
              _num(r["recall"]), _num(r["accuracy"]), _num(r.get("roc_auc")), _num(r.get("average_precision")),
              _num(r["always_clarify_f1"]),
              f"{_num(r['majority_f1'])} ({r['majority_label']})"] for r in rows]
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join(["---"] + ["---:"] * (len(COLUMNS) - 1)) + "|"]
    lines += ["| " + " | ".join(c) + " |" for c in cells]
    return "\n".join(lines)


def render_steps(steps: list[dict[str, Any]]) -> str:
    lines = ["| step | wall s | peak RSS MB (process so far) |", "|---|---:|---:|"]
    lines += [f"| {s['step']} | {s['wall_s']:.1f} | {s['peak_rss_mb']:.0f} |" for s in steps]
    return "\n".join(lines)


class Steps:
    """Wall time of each step and the process's peak RSS after it (ru_maxrss only grows)."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def run(self, name: str, fn: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        value = fn()
        wall = time.perf_counter() - start
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.rows.append({"step": name, "wall_s": round(wall, 2), "peak_rss_mb": round(rss, 1)})
        print(f"  {name}: {wall:.1f} s, peak RSS {rss:.0f} MB", file=sys.stderr, flush=True)
        return value


def benchmark_sets(conversations: Path, mtragun: Path, abgcoqa: Path) -> list[tuple[str, list[dict], dict]]:
    """(row name, records, info) of the human-labelled sets that exist."""
    from builder.eval_sets import load_benchmark

    out = []
    if mtragun.exists():
        bench = load_benchmark("mtragun", mtragun, build_input=conversations)
        out.append(("MTRAG-UN dev half", bench.records, bench.describe()))
    if abgcoqa.exists():
        bench = load_benchmark("abgcoqa", abgcoqa)
        out.append(("Abg-CoQA val", bench.records, bench.describe()))
    return out


def evaluate_sets(predictor: Any, sets: list[tuple[str, list[dict], dict]], *, samples: int, seed: int,
                  steps: Steps | None = None, details: list | None = None) -> list[dict[str, Any]]:
    rows = []
    for name, records, _ in sets:
        def predict(records=records):
            return predictor.probabilities(records) if hasattr(predictor, "probabilities") else None

        probs = steps.run(f"predict {name}", predict) if steps else predict()
        if probs is not None:
            threshold = getattr(predictor, "threshold", 0.5)
            predicted = [bool(p >= threshold) for p in probs]
        else:
            predicted = [p.needs_clarification for p in predictor.predict(records)]
        rows.append(score_row(name, records, predicted, samples=samples, seed=seed,
                              probabilities=None if probs is None else [float(p) for p in probs]))
        if details is not None:
            for r, pred, p in zip(records, predicted, probs if probs is not None else [None] * len(records)):
                details.append({"data": name, "id": r["id"], "gold": r["needs_clarification"], "predicted": pred,
                                "probability": None if p is None else round(float(p), 4), "query": r["query"],
                                "history_turns": len(r["history"]), "documents": len(r["documents"])})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", type=Path, help="an already built MTRAG release: skip the build")
    parser.add_argument("--model", type=Path, help="an already trained baseline on that release: skip training")
    parser.add_argument("--embedder", default="auto", help="auto, minilm or tfidf (default: auto)")
    parser.add_argument("--encoder", action="store_true", help="also try the MiniLM cross-encoder candidate")
    parser.add_argument("--json", type=Path, help="write the table (and steps) as JSON here")
    parser.add_argument("--details", type=Path, help="write per-record predictions (JSONL) here, for error analysis")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    args = parser.parse_args(argv)

    if not (CONVERSATIONS.exists() and (MTRAGUN.exists() or ABGCOQA.exists())):
        print(f"skipped: needs {CONVERSATIONS} and the benchmarks under {SHARED} (../shared beside the checkout)")
        return 0
    from builder.config import load_config
    from builder.io import write_json, write_jsonl
    from builder.build import build
    from builder.release import load_release
    from builder.train.baseline import BaselinePredictor, train_baseline

    steps = Steps()
    with tempfile.TemporaryDirectory(prefix="transfer-") as tmp:
        release = args.release
        if release is None:
            release = steps.run("build configs/mtrag.yaml", lambda: build(load_config(CONFIG), Path(tmp) / "dist").release)
        model_dir = args.model
        if model_dir is None:
            model_dir = Path(tmp) / "model"
            meta = steps.run("train baseline", lambda: train_baseline(release, model_dir, embedder=args.embedder,
                                                                      encoder=args.encoder,
                                                                      log=lambda m: print(m, file=sys.stderr)))
            print(f"  chose {meta['classifier']} on validation; threshold {meta['threshold']} "
                  f"({meta.get('threshold_source', 'validation F1')})", file=sys.stderr)
        predictor = BaselinePredictor.load(model_dir)
        sets = benchmark_sets(CONVERSATIONS, MTRAGUN, ABGCOQA)
        test = load_release(Path(release))["test"]
        sets.append(("release test split", test, {}))
        details: list = [] if args.details else None
        rows = evaluate_sets(predictor, sets, samples=args.bootstrap, seed=args.seed, steps=steps, details=details)
        meta = predictor.meta
    load = os.getloadavg()
    print(f"baseline trained on {meta['release'].get('name')} {meta['release'].get('version')} "
          f"({meta['classifier']}, threshold {meta.get('threshold', 0.5)}, {meta['embedder']['name']}); "
          f"positive = needs clarification; "
          f"95% CI: percentile bootstrap, {args.bootstrap} resamples, seed {args.seed}")
    print(render_table(rows))
    print()
    print(render_steps(steps.rows))
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores)")
    if args.json:
        write_json(args.json, {"rows": rows, "steps": steps.rows, "model": {k: meta.get(k) for k in
                               ("classifier", "embedder", "selection", "release", "threshold", "threshold_source")},
                               "sets": [{"data": n, **info} for n, _, info in sets if info],
                               "bootstrap": {"samples": args.bootstrap, "seed": args.seed}})
    if details is not None:
        write_jsonl(args.details, details)
    return 0


if __name__ == "__main__":
    sys.exit(main())
