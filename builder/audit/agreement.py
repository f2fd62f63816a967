"""Inter-annotator agreement: Cohen's kappa for two annotators, Fleiss' kappa for more."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Hashable, Sequence


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters over the same items; None when undefined (chance agreement is 1)."""
    if len(a) != len(b):
        raise ValueError("both raters must rate the same items")
    if not a:
        return None
    labels = sorted(set(a) | set(b), key=str)
    if len(labels) < 2:
        return None  # one label used by both: expected agreement is 1, kappa is 0/0
    from sklearn.metrics import cohen_kappa_score

    value = float(cohen_kappa_score([str(x) for x in a], [str(x) for x in b], labels=[str(x) for x in labels]))
    return None if math.isnan(value) else value


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from an items x categories table of rating counts.

    Items may have different numbers of raters (at least 2 each): per-item agreement uses its own
    n_i, which is Fleiss' formula exactly when every item has the same number of raters.
    """
    rows = [list(r) for r in counts if sum(r) >= 2]
    if not rows:
        return None
    total = sum(sum(r) for r in rows)
    k = len(rows[0])
    p = [sum(r[j] for r in rows) / total for j in range(k)]
    agreement = [(sum(x * x for x in r) - sum(r)) / (sum(r) * (sum(r) - 1)) for r in rows]
    p_bar = sum(agreement) / len(rows)
    p_e = sum(x * x for x in p)
    if math.isclose(p_e, 1.0):
        return None
    return (p_bar - p_e) / (1 - p_e)


def percent_agreement(ratings: dict[str, dict[str, Hashable]]) -> float | None:
    """Share of agreeing annotator pairs, over items with two or more ratings."""
    agree = pairs = 0
    for by_rater in ratings.values():
        values = list(by_rater.values())
        for i in range(len(values)):
            for j in range(i + 1, len(values)):
                pairs += 1
                agree += values[i] == values[j]
    return agree / pairs if pairs else None


def agreement(ratings: dict[str, dict[str, Hashable]]) -> dict:
    """ratings: item -> {annotator -> label}. Cohen when exactly two annotators rated the items
    (over the items both rated); Fleiss when more."""
    multi = {item: r for item, r in ratings.items() if len(r) >= 2}
    annotators = sorted({a for r in multi.values() for a in r})
    out = {"items": len(multi), "annotators": len(annotators), "method": None, "kappa": None,
           "percent_agreement": percent_agreement(multi)}
    if not multi:
        return out
    if len(annotators) == 2:
        first, second = annotators
        a = [r[first] for r in multi.values()]
        b = [r[second] for r in multi.values()]
        out.update(method="cohen", kappa=cohen_kappa(a, b))
        return out
    labels = sorted({v for r in multi.values() for v in r.values()}, key=str)
    table = []
    for r in multi.values():
        c = Counter(r.values())
        table.append([c[label] for label in labels])
    out.update(method="fleiss", kappa=fleiss_kappa(table))
    return out


def ratings_by_item(pairs: Sequence[tuple[str, str, Hashable]]) -> dict[str, dict[str, Hashable]]:
    """(item, annotator, label) triples -> item -> {annotator -> label}."""
    out: dict[str, dict[str, Hashable]] = defaultdict(dict)
    for item, annotator, label in pairs:
        out[item][annotator] = label
    return dict(out)
