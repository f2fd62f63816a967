"""Split stage: grouped, stratified, seeded train / validation / test.

Records that share a source conversation (query, history or documents), a contrastive pair, or a
near-duplicate query form one group, and a group never crosses splits.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from builder.neardup import clusters, near_duplicate_pairs, normalize
from builder.record import SPLITS


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def conversations_of(record: dict[str, Any]) -> set[str]:
    prov = record["provenance"]
    convs = {prov["conversation_id"]}
    hs = prov.get("history_source") or {}
    if hs.get("conversation_id"):
        convs.add(hs["conversation_id"])
    convs.update(prov.get("document_sources") or [])
    return convs


def stratum(record: dict[str, Any]) -> tuple:
    return (record["needs_clarification"], record["setting"], record["domain"])


@dataclass
class SplitResult:
    splits: dict[str, list[dict[str, Any]]]
    groups: int
    leakage: dict[str, Any]


def group_records(records: list[dict[str, Any]], threshold: float) -> list[str]:
    uf = _UnionFind()
    for i, r in enumerate(records):
        node = f"r:{i}"
        for conv in conversations_of(r):
            uf.union(node, f"c:{conv}")
        if r.get("pair_id"):
            uf.union(node, f"p:{r['pair_id']}")
    pairs, _ = near_duplicate_pairs([r["query"] for r in records], threshold)
    for c, members in _by_label(clusters(len(records), pairs)).items():
        for m in members[1:]:
            uf.union(f"r:{members[0]}", f"r:{m}")
    return [uf.find(f"r:{i}") for i in range(len(records))]


def _by_label(labels: np.ndarray) -> dict[int, list[int]]:
    out: dict[int, list[int]] = defaultdict(list)
    for i, c in enumerate(labels.tolist()):
        out[c].append(i)
    return out


def split(records: list[dict[str, Any]], ratios: dict[str, float], seed: int, threshold: float = 92.0) -> SplitResult:
    """Assign whole groups to splits, largest first, each to the split whose strata lag most behind target."""
    roots = group_records(records, threshold)
    groups: dict[str, list[int]] = defaultdict(list)
    for i, root in enumerate(roots):
        groups[root].append(i)
    total = Counter(stratum(r) for r in records)
    target = {s: {k: v * ratios[s] for k, v in total.items()} for s in SPLITS}
    have = {s: Counter() for s in SPLITS}
    size = Counter()
    order = sorted(groups, key=lambda g: (-len(groups[g]), hashlib.sha256(f"{seed}|{g}".encode()).hexdigest()))
    assignment: dict[str, str] = {}
    n = len(records)
    for position, g in enumerate(order):
        comp = Counter(stratum(records[i]) for i in groups[g])
        empty = [s for s in SPLITS if ratios[s] > 0 and size[s] == 0]
        if empty and len(order) - position <= len(empty):
            # Just enough groups left to give every split at least one.
            best = max(empty, key=lambda s: (ratios[s], -SPLITS.index(s)))
            assignment[g] = best
            have[best].update(comp)
            size[best] += len(groups[g])
            continue

        def cost(s: str) -> float:
            # Squared shortfall of every stratum after adding the group, plus overall size balance.
            c = 0.0
            for k in total:
                c += sum(((have[t][k] + (comp.get(k, 0) if t == s else 0)) - target[t][k]) ** 2 for t in SPLITS)
            c += sum(((size[t] + (len(groups[g]) if t == s else 0)) - n * ratios[t]) ** 2 for t in SPLITS) * 4
            return c

        best = min(SPLITS, key=lambda s: (cost(s), SPLITS.index(s)))
        assignment[g] = best
        have[best].update(comp)
        size[best] += len(groups[g])
    splits = {s: [] for s in SPLITS}
    for i, r in enumerate(records):
        splits[assignment[roots[i]]].append(r)
    for s in SPLITS:
        splits[s].sort(key=lambda r: r["id"])
    return SplitResult(splits, len(groups), leakage_report(splits, threshold))


def leakage_report(splits: dict[str, list[dict[str, Any]]], threshold: float) -> dict[str, Any]:
    """Conversations and near-duplicate queries found in more than one split (both must be zero)."""
    conv_splits: dict[str, set[str]] = defaultdict(set)
    flat: list[tuple[str, dict]] = []
    for s, rows in splits.items():
        for r in rows:
            for c in conversations_of(r):
                conv_splits[c].add(s)
            flat.append((s, r))
    shared_convs = sorted(c for c, ss in conv_splits.items() if len(ss) > 1)
    pairs, _ = near_duplicate_pairs([r["query"] for _, r in flat], threshold)
    crossing = [(int(i), int(j)) for i, j in pairs.tolist() if flat[i][0] != flat[j][0]]
    return {
        "conversations_in_several_splits": len(shared_convs),
        "near_duplicate_queries_across_splits": len(crossing),
        "threshold": threshold,
        "examples": {
            "conversations": shared_convs[:5],
            "queries": [[flat[i][1]["id"], flat[j][1]["id"]] for i, j in crossing[:5]],
        },
        "passed": not shared_convs and not crossing,
    }
