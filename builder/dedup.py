"""Dedup stage. A duplicate is the same example twice: near-identical query AND the same context
(history and documents) AND the same label. The same query in another context is a contrastive
pair instead: both are kept and linked by `pair_id`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from builder.io import dumps
from builder.neardup import clusters, near_duplicate_pairs, normalize
from builder.rows import Duplicate


@dataclass
class DedupResult:
    kept: list[dict[str, Any]]
    dropped: list[Duplicate]


def context_key(record: dict[str, Any]) -> str:
    """History, documents, setting and label: what must match for two records to be one example."""
    key = {
        "history": [[h["role"], normalize(h["content"])] for h in record["history"]],
        "documents": sorted(d["id"] for d in record["documents"]),
        "setting": record["setting"],
        "label": record["needs_clarification"],
    }
    return hashlib.sha256(dumps(key).encode()).hexdigest()


def dedup(records: list[dict[str, Any]], threshold: float = 92.0) -> DedupResult:
    """Drop exact and near duplicates (keeping the smallest id of each cluster); link contrastive pairs."""
    records = sorted(records, key=lambda r: r["id"])
    contexts = [context_key(r) for r in records]
    pairs, scores = near_duplicate_pairs([r["query"] for r in records], threshold)
    same_context = np.array([contexts[i] == contexts[j] for i, j in pairs], dtype=bool) if len(pairs) else np.zeros(0, bool)
    pairs, scores = pairs[same_context], scores[same_context]
    # Exact duplicates (same normalized query and context) are pairs too, with score 100.
    first_of: dict[tuple[str, str], int] = {}
    exact = []
    for i, r in enumerate(records):
        key = (normalize(r["query"]), contexts[i])
        if key in first_of:
            exact.append((first_of[key], i))
        else:
            first_of[key] = i
    if exact:
        pairs = np.concatenate([pairs, np.array(exact, dtype=np.int64)])
        scores = np.concatenate([scores, np.full(len(exact), 100.0, dtype=np.float32)])
    labels = clusters(len(records), pairs)
    best_score: dict[int, float] = {}
    for (i, j), s in zip(pairs.tolist(), scores.tolist()):
        for k in (i, j):
            best_score[k] = max(best_score.get(k, 0.0), float(s))
    keeper: dict[int, int] = {}
    kept, dropped = [], []
    for i, r in enumerate(records):
        c = int(labels[i])
        if c not in keeper:
            keeper[c] = i
            kept.append(r)
        else:
            k = keeper[c]
            same = normalize(r["query"]) == normalize(records[k]["query"])
            dropped.append(Duplicate(id=r["id"], kept_id=records[k]["id"], score=round(best_score.get(i, 100.0), 2),
                                     reason="exact duplicate" if same else "near duplicate"))
    link_contrastive(kept)
    return DedupResult(kept, dropped)


def link_contrastive(records: list[dict[str, Any]]) -> None:
    """Same query, different labels, no pair yet: give them a shared `pair_id`."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(normalize(r["query"]), []).append(r)
    for query, members in groups.items():
        if len({m["needs_clarification"] for m in members}) < 2:
            continue
        pair = "pair-q-" + hashlib.sha256(query.encode()).hexdigest()[:12]
        for m in members:
            if m.get("pair_id") is None:
                m["pair_id"] = pair
