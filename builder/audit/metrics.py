"""Generated labels against human labels: accuracy, confusion, agreement, acceptability, per category."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from builder.audit.agreement import agreement, ratings_by_item
from builder.audit.annotations import CATEGORIES, Annotation
from builder.audit.release import AuditRelease


@dataclass
class Consensus:
    """The humans' verdict on one record: majority vote, None on a tie."""

    record_id: str
    annotators: list[str]
    needs_clarification: bool | None
    category: str | None
    acceptable: bool | None
    suggestion: str | None  # the most common suggested clarification, if any
    votes: dict[str, dict[str, int]]
    interpretations: list[str]  # from the first annotator (by name) who listed two or more


def majority(values: list[Any]) -> Any:
    values = [v for v in values if v is not None]
    if not values:
        return None
    counts = Counter(values).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def consensus(annotations: list[Annotation]) -> dict[str, Consensus]:
    by_record: dict[str, list[Annotation]] = defaultdict(list)
    for a in annotations:
        by_record[a.record_id].append(a)
    out = {}
    for rid, items in sorted(by_record.items()):
        items = sorted(items, key=lambda a: a.annotator)
        suggestions = [a.suggested_clarification for a in items if a.suggested_clarification]
        readings = next((a.interpretations for a in items if len(a.interpretations) >= 2), [])
        out[rid] = Consensus(
            rid,
            sorted(a.annotator for a in items),
            majority([a.needs_clarification for a in items]),
            majority([a.category for a in items]),
            majority([a.clarification_acceptable for a in items]),
            Counter(suggestions).most_common(1)[0][0] if suggestions else None,
            {
                "needs_clarification": dict(Counter("yes" if a.needs_clarification else "no" for a in items)),
                "category": dict(Counter(a.category or "(blank)" for a in items)),
                "clarification_acceptable": dict(Counter({True: "yes", False: "no", None: "n/a"}[a.clarification_acceptable] for a in items)),
            },
            list(readings),
        )
    return out


def _rate(hits: int, n: int) -> float | None:
    return hits / n if n else None


def _group_metrics(rids: list[str], release: AuditRelease, verdicts: dict[str, Consensus],
                   annotations: list[Annotation]) -> dict[str, Any]:
    ids = set(rids)
    mine = [a for a in annotations if a.record_id in ids]
    binary = [(release.records[r]["needs_clarification"], verdicts[r].needs_clarification) for r in rids
              if verdicts[r].needs_clarification is not None]
    category = [(release.records[r]["category"], verdicts[r].category) for r in rids if verdicts[r].category is not None]
    judged = [a.clarification_acceptable for a in mine if a.clarification_acceptable is not None]
    return {
        "records": len(rids),
        "annotations": len(mine),
        "label_accuracy": _rate(sum(g == h for g, h in binary), len(binary)),
        "label_decided": len(binary),
        "category_accuracy": _rate(sum(g == h for g, h in category), len(category)),
        "category_decided": len(category),
        "acceptability_rate": _rate(sum(judged), len(judged)),
        "acceptability_judged": len(judged),
        "agreement_label": agreement(ratings_by_item([(a.record_id, a.annotator, a.needs_clarification) for a in mine])),
        "agreement_category": agreement(ratings_by_item([(a.record_id, a.annotator, a.category) for a in mine
                                                         if a.category is not None])),
    }


def confusion(release: AuditRelease, verdicts: dict[str, Consensus]) -> dict[str, dict[str, int]]:
    """generated category -> human majority category (or 'tie') -> count."""
    table: dict[str, dict[str, int]] = {g: {h: 0 for h in (*CATEGORIES, "tie")} for g in CATEGORIES}
    for rid, v in verdicts.items():
        table[release.records[rid]["category"]][v.category or "tie"] += 1
    return table


def compute_metrics(release: AuditRelease, annotations: list[Annotation]) -> dict[str, Any]:
    verdicts = consensus(annotations)
    by_category: dict[str, list[str]] = defaultdict(list)
    for rid in verdicts:
        by_category[release.records[rid]["category"]].append(rid)
    return {
        "dataset": {"name": release.name, "version": release.version, "records": len(release)},
        "annotators": sorted({a.annotator for a in annotations}),
        "overall": _group_metrics(list(verdicts), release, verdicts, annotations),
        "per_category": {c: _group_metrics(by_category[c], release, verdicts, annotations)
                         for c in CATEGORIES if by_category.get(c)},
        "confusion": confusion(release, verdicts),
        "disagreements": [
            {
                "record_id": rid,
                "generated": {"needs_clarification": release.records[rid]["needs_clarification"],
                              "category": release.records[rid]["category"]},
                "human": {"needs_clarification": v.needs_clarification, "category": v.category},
                "votes": v.votes,
            }
            for rid, v in verdicts.items()
            if (v.needs_clarification is not None and v.needs_clarification != release.records[rid]["needs_clarification"])
            or (v.category is not None and v.category != release.records[rid]["category"])
        ],
    }
