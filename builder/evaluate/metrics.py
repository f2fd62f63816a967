"""Classification metrics for `needs_clarification` (positive class = needs clarification).

An unparseable prediction (None) counts as wrong: a false negative on a positive record,
a false positive on a negative one. It is also counted separately as `invalid`.
Undefined ratios (precision with no predicted positives; recall and F1 with no gold positives)
are None, never a made-up 0 or 1.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Sequence

import numpy as np

METRICS = ("accuracy", "precision", "recall", "f1")


def confusion(gold: Sequence[bool], pred: Sequence[bool | None]) -> dict[str, int]:
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold labels but {len(pred)} predictions")
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "invalid": 0}
    for g, p in zip(gold, pred):
        if p is None:
            counts["invalid"] += 1
            p = not g  # wrong by construction
        if g and p:
            counts["tp"] += 1
        elif g:
            counts["fn"] += 1
        elif p:
            counts["fp"] += 1
        else:
            counts["tn"] += 1
    return counts


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def scores(c: dict[str, int]) -> dict[str, float | None]:
    n = c["tp"] + c["fp"] + c["fn"] + c["tn"]
    return {
        "accuracy": _ratio(c["tp"] + c["tn"], n),
        "precision": _ratio(c["tp"], c["tp"] + c["fp"]),
        "recall": _ratio(c["tp"], c["tp"] + c["fn"]),
        # Positive-class F1 means nothing on a group with no gold positives (e.g. hard negatives alone).
        "f1": _ratio(2 * c["tp"], 2 * c["tp"] + c["fp"] + c["fn"]) if c["tp"] + c["fn"] else None,
    }


def bootstrap_ci(
    gold: Sequence[bool], pred: Sequence[bool | None], *, samples: int = 1000, seed: int = 0, level: float = 0.95
) -> dict[str, list[float] | None]:
    """Percentile bootstrap over records: [low, high] per metric, None where undefined in >half the resamples."""
    n = len(gold)
    if n == 0 or samples <= 0:
        return {m: None for m in METRICS}
    g = np.asarray(gold, dtype=bool)
    p = np.array([(not gi) if pi is None else pi for gi, pi in zip(gold, pred)], dtype=bool)
    tp, fp, fn = g & p, ~g & p, g & ~p
    idx = np.random.default_rng(seed).integers(0, n, size=(samples, n))
    TP, FP, FN = tp[idx].sum(1).astype(float), fp[idx].sum(1).astype(float), fn[idx].sum(1).astype(float)
    TN = n - TP - FP - FN
    with np.errstate(divide="ignore", invalid="ignore"):
        values = {
            "accuracy": (TP + TN) / n,
            "precision": TP / (TP + FP),
            "recall": TP / (TP + FN),
            "f1": np.where(TP + FN > 0, 2 * TP / (2 * TP + FP + FN), np.nan),
        }
    alpha = (1 - level) / 2
    out: dict[str, list[float] | None] = {}
    for name, v in values.items():
        v = v[np.isfinite(v)]
        if len(v) * 2 < samples:
            out[name] = None
            continue
        out[name] = [float(np.quantile(v, alpha)), float(np.quantile(v, 1 - alpha))]
    return out


def classification(
    gold: Sequence[bool], pred: Sequence[bool | None], *, samples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    c = confusion(gold, pred)
    return {
        "n": len(gold),
        **scores(c),
        "confusion": c,
        "gold_positive": int(sum(bool(g) for g in gold)),
        "ci95": bootstrap_ci(gold, pred, samples=samples, seed=seed),
    }


def breakdown(
    records: Sequence[dict],
    pred: Sequence[bool | None],
    key: Callable[[dict], str],
    *,
    samples: int = 1000,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """The same metrics per group (setting, category, domain), groups sorted by name."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, record in enumerate(records):
        groups[key(record)].append(i)
    return {
        name: classification(
            [records[i]["needs_clarification"] for i in idx], [pred[i] for i in idx], samples=samples, seed=seed
        )
        for name, idx in sorted(groups.items())
    }
