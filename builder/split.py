"""Split stage: grouped, stratified, seeded train / validation / test.

Hard groups never cross splits: records that share a source conversation (the query's, the history's or the
documents') or a synthesis block; a generator's contrastive pair lives in one conversation, so in one group.
Soft links join hard groups without merging them: a near-duplicate query found in two groups (a pair id that
spans groups comes from `dedup` linking identical queries, so it is one of these). Merging on them let chains of short generic queries
("solutions?", "benefits?") swallow the set. Instead the assignment keeps linked groups together where that
costs little, and a record whose near-duplicate went to another split is dropped, with its reason.

A group over MAX_GROUP_SHARE of the release goes whole to train, where it cannot skew the evaluation splits; one
over MAX_TRAIN_GROUP_SHARE is cut at a conversation boundary (or trimmed of repeated queries) first.

Groups are assigned greedily, largest first, then improved by moving and swapping groups. The cost counts
every stratum (label x setting x domain) against its target in each split, the split sizes, each domain's
share of each split, the records that soft links would drop, and, far above the rest, a stratum of at least
`min_stratum` records or a domain missing from a split. A split that comes out empty, or without one of the
domains, raises SplitError: no release is written.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from rapidfuzz import fuzz, process

from builder.errors import InputError
from builder.neardup import near_duplicate_pairs, normalize
from builder.record import SPLITS, conversations_of
from builder.rows import SplitDrop

MIN_STRATUM = 10  # a stratum this large must reach every split
MAX_GROUP_SHARE = 0.05  # a larger group goes whole to train, so one block cannot skew validation or test
MAX_TRAIN_GROUP_SHARE = 0.10  # a group larger still is cut at a conversation boundary (train cannot hold it whole)
SHARE_TOLERANCE = 0.05  # a domain's share of each split stays within this of its share of the set
MAX_SWAP_GROUPS = 600  # above this many groups only moves are tried (swaps are quadratic)
EXACT_CROSS_CHECK = 50_000_000  # cross-split query comparisons up to which leakage is checked all-pairs, not by LSH


class SplitError(InputError):
    """The records cannot make a sound split (the message names the cause); the build stops."""


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


def stratum(record: dict[str, Any]) -> tuple:
    return (record["needs_clarification"], record["setting"], record["domain"])


def _h(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


@dataclass
class SplitResult:
    splits: dict[str, list[dict[str, Any]]]
    groups: int
    leakage: dict[str, Any]
    dropped: list[SplitDrop] = field(default_factory=list)
    quality: dict[str, Any] = field(default_factory=dict)


# --- hard groups --------------------------------------------------------------------------------------


def group_records(records: list[dict[str, Any]], blocks: dict[str, str] | None = None) -> list[str]:
    """Hard group of each record: union of its conversations and their blocks."""
    uf = _UnionFind()
    for i, r in enumerate(records):
        node = f"r:{i}"
        for conv in conversations_of(r):
            uf.union(node, f"c:{conv}")
            if blocks and conv in blocks:
                uf.union(f"c:{conv}", f"b:{blocks[conv]}")
    return [uf.find(f"r:{i}") for i in range(len(records))]


def _halves(convs: list[str], exhaustive: int = 10) -> list[set[str]]:
    """Ways to cut a group's conversations in two: every cut of a small group (the first conversation on one
    side, so each cut appears once), balanced ones first; a large group is cut in the middle of its seeded order."""
    if len(convs) > exhaustive:
        return [set(convs[: len(convs) // 2])]
    rest = convs[1:]
    cuts = [{convs[0], *(c for j, c in enumerate(rest) if mask >> j & 1)} for mask in range(2 ** len(rest) - 1)]
    return sorted(cuts, key=lambda h: (abs(2 * len(h) - len(convs)), sorted(h)))


def _sever(records: list[dict[str, Any]], roots: list[str], blocks: dict[str, str], groups: set[str], seed: int,
           alive: list[bool]) -> list[int] | None:
    """Cut one of `groups` in two halves (`_cheapest_cut`): the blocks are relabelled so the halves are groups of
    their own. Returns the records joining the halves (to drop), or None when no group can be cut."""
    best = _cheapest_cut(records, roots, groups, seed, alive)
    return None if best is None else _apply_cut(blocks, seed, *best)


def _apply_cut(blocks: dict[str, str], seed: int, cut: list[int], convs: list[str], half: set[str]) -> list[int]:
    tag = _h(seed, "half", *sorted(half))[:8]
    for c in convs:
        blocks[c] = f"{blocks.get(c, c)}/{tag if c in half else 'rest'}"
    return cut


def _cheapest_cut(records: list[dict[str, Any]], roots: list[str], groups: set[str], seed: int,
                  alive: list[bool]) -> tuple[list[int], list[str], set[str]] | None:
    """Of the ways to cut one of `groups` (multi-conversation groups) in two halves, the one that costs fewest
    records: (the records joining the halves, the group's conversations, one half); None when every group is a
    single conversation."""
    members: dict[str, list[int]] = defaultdict(list)
    for i in range(len(records)):
        if alive[i] and roots[i] in groups:
            members[roots[i]].append(i)
    best = None
    for g, idx in sorted(members.items()):
        convs = sorted({c for i in idx for c in conversations_of(records[i])}, key=lambda c: _h(seed, "sever", c))
        if len(convs) < 2:
            continue
        for half in _halves(convs):
            cut = [i for i in idx if conversations_of(records[i]) & half and conversations_of(records[i]) - half]
            if best is None or len(cut) < len(best[0]):
                best = (cut, convs, half)
    return best


def _drop(records: list[dict[str, Any]], roots: list[str], blocks: dict[str, str], alive: list[bool],
          cut: list[int], dropped: list[SplitDrop], reason: str) -> list[str]:
    """Drop the `cut` records (accounted with `reason`) and regroup the live ones under the severed blocks."""
    for i in cut:
        alive[i] = False
        dropped.append(SplitDrop(id=records[i]["id"], split=None, kept_id=None, reason=reason))
    live = [i for i in range(len(records)) if alive[i]]
    roots = [""] * len(records)
    for i, root in zip(live, group_records([records[i] for i in live], blocks)):
        roots[i] = root
    return roots


# --- soft links ---------------------------------------------------------------------------------------


def soft_links(records: list[dict[str, Any]], roots: list[str], group_index: dict[str, int],
               threshold: float) -> np.ndarray:
    """(G, G) matrix: [g, h] = records of group g with a near-duplicate query in group h (a pair id across groups
    always comes with one: `dedup` links identical queries only)."""
    pairs, _ = near_duplicate_pairs([r["query"] for r in records], threshold)
    G = len(group_index)
    seen: set[tuple[int, int]] = set()
    for i, j in pairs.tolist():
        gi, gj = group_index[roots[i]], group_index[roots[j]]
        if gi != gj:
            seen.add((i, gj))
            seen.add((j, gi))
    links = np.zeros((G, G))
    for i, h in seen:
        links[group_index[roots[i]], h] += 1
    return links


# --- assignment ---------------------------------------------------------------------------------------


@dataclass
class _Problem:
    """Plain arrays for the assignment search: groups x strata counts, groups x domains, soft components."""

    counts: np.ndarray  # (G, K)
    strata: list[tuple]
    domain_of_stratum: np.ndarray  # (K,) domain index
    domains: list[str]
    ratios: np.ndarray  # (S,)
    links: np.ndarray  # (G, G) records of group g with a near-duplicate in group h
    eligible: np.ndarray  # (K,) bool: stratum large enough to be required in every split
    pinned: np.ndarray  # (G,) bool: group too large for validation or test, placed in train and never moved

    @property
    def n(self) -> int:
        return int(self.counts.sum())


def _cost(p: _Problem, assign: np.ndarray, complete: bool = True) -> float:
    """Cost of an assignment (group -> split index, -1 = not placed yet). The balance terms are chi-square-like,
    in records; a domain share past the tolerance, a missing stratum or a missing domain weigh far more."""
    S = len(p.ratios)
    onehot = np.zeros((len(assign), S))
    placed = assign >= 0
    onehot[np.flatnonzero(placed), assign[placed]] = 1.0
    have = onehot.T @ p.counts  # (S, K)
    total = p.counts.sum(0)
    target = p.ratios[:, None] * total[None, :]
    cost = float((((have - target) ** 2) / (target + 1.0)).sum())
    size = have.sum(1)
    tsize = p.ratios * p.n
    cost += 4.0 * float((((size - tsize) ** 2) / (tsize + 1.0)).sum())
    by_domain = np.zeros((S, len(p.domains)))
    np.add.at(by_domain.T, p.domain_of_stratum, have.T)
    share = by_domain / np.maximum(size, 1.0)[:, None]
    global_share = by_domain.sum(0) / max(size.sum(), 1.0)
    active = p.ratios > 0
    if complete:  # a partial split's shares mean nothing yet (its first group is one domain)
        dev = np.abs(share - global_share[None, :])[active & (size > 0)]
        cost += 1e6 * float((np.maximum(dev - (SHARE_TOLERANCE - 0.01), 0.0) ** 2).sum())
    if p.links.any():
        # Records to drop when two linked groups go apart: about the smaller side of their links.
        apart = (assign[:, None] != assign[None, :]) & placed[:, None] & placed[None, :]
        cost += 2.0 * float((np.minimum(p.links, p.links.T) * apart).sum() / 2)
    if complete:
        cost += 1e5 * float(((have[active][:, p.eligible]) == 0).sum())
        cost += 1e6 * float((by_domain[active] == 0).sum())
    return cost


def assign_groups(p: _Problem, seed: int, keys: list[str]) -> np.ndarray:
    """Greedy largest-first placement, then the best single move (or, failing that, swap) until none helps."""
    G, S = len(keys), len(p.ratios)
    sizes = p.counts.sum(1)
    assign = np.full(G, -1)
    assign[p.pinned] = SPLITS.index("train")
    order = sorted((g for g in range(G) if not p.pinned[g]), key=lambda g: (-sizes[g], _h(seed, keys[g])))
    active = [s for s in range(S) if p.ratios[s] > 0]
    for g in order:
        best, best_cost = active[0], None
        for s in active:
            assign[g] = s
            c = _cost(p, assign, complete=False)
            if best_cost is None or c < best_cost:
                best, best_cost = s, c
        assign[g] = best
    current = _cost(p, assign)
    # Best improvement: the cheapest fix first (from an all-train start, the smallest group moves, not the largest).
    for _ in range(10 * G + 100):
        best = None
        for g in order:
            old = assign[g]
            for s in active:
                if s != old:
                    assign[g] = s
                    c = _cost(p, assign)
                    if c < current - 1e-9 and (best is None or c < best[0]):
                        best = (c, g, s)
            assign[g] = old
        if best is None and G <= MAX_SWAP_GROUPS:
            for a_i, a in enumerate(order):
                for b in order[a_i + 1 :]:
                    if assign[a] != assign[b]:
                        assign[a], assign[b] = assign[b], assign[a]
                        c = _cost(p, assign)
                        if c < current - 1e-9 and (best is None or c < best[0]):
                            best = (c, a, assign[a], b, assign[b])
                        assign[a], assign[b] = assign[b], assign[a]
        if best is None:
            break
        current = best[0]
        for g, s in zip(best[1::2], best[2::2]):
            assign[g] = s
    return assign


def _problem(records: list[dict[str, Any]], group_keys: list[str], group_index: dict[str, int],
             roots: list[str], links: np.ndarray, ratios: dict[str, float], min_stratum: int,
             pinned: set[str]) -> _Problem:
    strata = sorted({stratum(r) for r in records}, key=str)
    k_of = {k: i for i, k in enumerate(strata)}
    domains = sorted({r["domain"] for r in records})
    counts = np.zeros((len(group_keys), len(strata)))
    for i, r in enumerate(records):
        counts[group_index[roots[i]], k_of[stratum(r)]] += 1
    return _Problem(
        counts=counts,
        strata=strata,
        domain_of_stratum=np.array([domains.index(k[2]) for k in strata], dtype=np.int64),
        domains=domains,
        ratios=np.array([ratios[s] for s in SPLITS], dtype=float),
        links=links,
        eligible=counts.sum(0) >= min_stratum,
        pinned=np.array([g in pinned for g in group_keys], dtype=bool),
    )


# --- the stage ----------------------------------------------------------------------------------------


def split(records: list[dict[str, Any]], ratios: dict[str, float], seed: int, threshold: float = 92.0,
          blocks: dict[str, str] | None = None, min_stratum: int = MIN_STRATUM,
          max_group_share: float = MAX_GROUP_SHARE, max_train_group_share: float = MAX_TRAIN_GROUP_SHARE) -> SplitResult:
    """Assign whole hard groups to splits; drop (with a reason) the few records soft links would leak."""
    records = sorted(records, key=lambda r: r["id"])
    blocks = dict(blocks or {})
    active = [s for s in SPLITS if ratios.get(s, 0) > 0]
    if not records:
        raise SplitError("no record reached the split stage: every split would be empty")
    alive = [True] * len(records)
    dropped: list[SplitDrop] = []

    # A domain needs a group per split: sever one of its blocks at a conversation boundary when it has fewer.
    roots = group_records(records, blocks)
    for domain in sorted({r["domain"] for r in records}):
        while len(groups := {roots[i] for i, r in enumerate(records) if alive[i] and r["domain"] == domain}) < len(active):
            cut = _sever(records, roots, blocks, groups, seed, alive)
            if cut is None:
                n_conv = len({c for i, r in enumerate(records) if alive[i] and r["domain"] == domain
                              for c in conversations_of(r)})
                raise SplitError(
                    f"domain '{domain}' cannot reach every split: its records come from {n_conv} conversation(s), "
                    f"fewer than the {len(active)} splits ({', '.join(active)}); add conversations of that domain "
                    "or drop a split")
            roots = _drop(records, roots, blocks, alive, cut, dropped,
                          f"block severed: joins the two halves of a block of domain '{domain}', "
                          "cut so that the domain reaches every split")
    # No group may outweigh a split's balance. A group over `max_group_share` of the records released goes whole to
    # train; one over `max_train_group_share` is cut. The near-duplicate drops come after the assignment and shrink
    # the release, so both are checked again then.
    train_share = max_train_group_share if "train" in active else max_group_share
    reserve = 0
    while True:
        roots = _cap_groups(records, roots, blocks, alive, dropped, seed, train_share, reserve)
        pinned = _to_train(records, roots, alive, active, max_group_share, reserve) if train_share > max_group_share else set()
        if pinned is None:  # a domain would keep too few groups for validation and test: cut at the lower cap
            roots = _cap_groups(records, roots, blocks, alive, dropped, seed, max_group_share, reserve)
            pinned = set()
        live = [i for i in range(len(records)) if alive[i]]
        kept = [records[i] for i in live]
        kept_roots = [roots[i] for i in live]
        group_keys = sorted(set(kept_roots))
        group_index = {g: i for i, g in enumerate(group_keys)}
        problem = _problem(kept, group_keys, group_index, kept_roots,
                           soft_links(kept, kept_roots, group_index, threshold), ratios, min_stratum, pinned)
        assign = assign_groups(problem, seed, group_keys)
        splits = {s: [] for s in SPLITS}
        for r, root in zip(kept, kept_roots):
            splits[SPLITS[assign[group_index[root]]]].append(r)
        before = len(dropped)
        leakage = _drop_crossings(splits, threshold, dropped)
        released = {r["id"] for rows in splits.values() for r in rows}
        sizes = Counter(root for r, root in zip(kept, kept_roots) if r["id"] in released)
        outside = [n for g, n in sizes.items() if g not in pinned]
        shrink = len(kept) - len(released)
        if (max(sizes.values()) <= train_share * len(released) and max(outside, default=0) <= max_group_share * len(released)) \
                or shrink <= reserve:
            break
        reserve = shrink  # cap against what will be released; the crossing drops are redone on the new groups
        del dropped[before:]
    for s in SPLITS:
        splits[s].sort(key=lambda r: r["id"])
    check_split(splits, active, dropped)
    quality = split_quality(splits, min_stratum)
    quality["largest_group"] = max(sizes.values())
    quality["largest_group_share"] = round(max(sizes.values()) / len(released), 4)
    quality["groups_kept_whole_in_train"] = len(pinned)
    quality["dropped"] = dict(sorted(Counter(d.reason.split(":")[0] for d in dropped).items()))
    dropped.sort(key=lambda d: d.id)
    return SplitResult(splits, len(group_keys), leakage, dropped, quality)


def _cap_groups(records: list[dict[str, Any]], roots: list[str], blocks: dict[str, str], alive: list[bool],
                dropped: list[SplitDrop], seed: int, max_group_share: float, reserve: int) -> list[str]:
    """Sever every group over `max_group_share` of the live records less `reserve`, where attainable: with fewer
    than 2 / max_group_share conversations one conversation alone is that big."""
    n_conversations = len({c for r in records for c in conversations_of(r)})
    while n_conversations * max_group_share >= 2:
        sizes = Counter(roots[i] for i in range(len(records)) if alive[i])
        limit = max_group_share * (sum(sizes.values()) - reserve)
        big = sorted((g for g, n in sizes.items() if n > limit), key=lambda g: (-sizes[g], g))
        if not big:
            break
        g = big[0]
        # Two ways under the cap: trim the group's most repeated queries, or sever it at a conversation boundary
        # (dropping the records that join the halves). The one that loses fewer records is taken.
        trim = _trim(records, roots, alive, g, sizes[g] - int(limit), seed)
        best = _cheapest_cut(records, roots, {g}, seed, alive)
        if best is not None and (not trim or len(best[0]) < len(trim)):
            roots = _drop(records, roots, blocks, alive, _apply_cut(blocks, seed, *best), dropped,
                          f"block severed: joins the two halves of a block over {max_group_share:.0%} of the records, "
                          "cut so that no group skews a split")
        elif trim:
            roots = _drop(records, roots, blocks, alive, trim, dropped,
                          f"group trimmed: a variant of a query its group over {max_group_share:.0%} of the records "
                          "asks most often, dropped so that no group skews a split")
        else:
            break
    return roots


def _to_train(records: list[dict[str, Any]], roots: list[str], alive: list[bool], active: list[str],
              max_group_share: float, reserve: int) -> set[str] | None:
    """The groups over `max_group_share` of the live records less `reserve`, to be kept whole in train (where
    attainable, as in `_cap_groups`); None when that leaves a domain fewer other groups than validation and test."""
    if len({c for r in records for c in conversations_of(r)}) * max_group_share < 2:
        return set()
    sizes = Counter(roots[i] for i in range(len(records)) if alive[i])
    limit = max_group_share * (sum(sizes.values()) - reserve)
    big = {g for g, n in sizes.items() if n > limit}
    domain_groups: dict[str, set[str]] = defaultdict(set)
    for i, r in enumerate(records):
        if alive[i] and roots[i] not in big:
            domain_groups[r["domain"]].add(roots[i])
    domains = {r["domain"] for i, r in enumerate(records) if alive[i]}
    if any(len(domain_groups[d]) < len(active) - 1 for d in domains):
        return None
    return big


def _trim(records: list[dict[str, Any]], roots: list[str], alive: list[bool], group: str, excess: int,
          seed: int) -> list[int]:
    """`excess` records of `group`, from its most repeated queries first (the same words asked after several
    histories or over several passage sets): what the group can lose at least cost to its variety."""
    by_query: dict[str, list[int]] = defaultdict(list)
    for i in sorted((i for i in range(len(records)) if alive[i] and roots[i] == group),
                    key=lambda i: _h(seed, "trim", records[i]["id"])):
        by_query[records[i]["query"].strip().lower()].append(i)
    out: list[int] = []
    while len(out) < excess:
        q = max(by_query, key=lambda q: (len(by_query[q]), q))
        if len(by_query[q]) < 2:  # a query asked once in its group stays: trimming never removes a question
            return []
        out.append(by_query[q].pop())
    return out


def _drop_crossings(splits: dict[str, list[dict[str, Any]]], threshold: float,
                    dropped: list[SplitDrop]) -> dict[str, Any]:
    """Drop a small cover of the near-duplicate pairs that cross splits: the record with the most crossing pairs
    first, from the larger split on a tie (the smaller ones are the scarce evaluation data). The search runs again
    on what is kept, since it can surface pairs the search on the full set did not."""
    for _ in range(20):
        found = _crossings(splits, threshold)
        crossing = found[1]
        if not crossing:
            return _report(*found, threshold)
        where = {r["id"]: s for s in SPLITS for r in splits[s]}
        size = {s: len(rows) for s, rows in splits.items()}
        adj: dict[str, set[str]] = defaultdict(set)
        for a, b in crossing:
            adj[a].add(b)
            adj[b].add(a)
        lose: set[str] = set()
        while adj:
            rid = max(adj, key=lambda x: (len(adj[x]), size[where[x]], -SPLITS.index(where[x]), x))
            other = min(adj[rid])
            lose.add(rid)
            dropped.append(SplitDrop(id=rid, split=where[rid], kept_id=other,
                                     reason=f"near-duplicate across splits: its query matches {other}, kept in {where[other]}"))
            for y in adj.pop(rid):
                adj[y].discard(rid)
                if not adj[y]:
                    del adj[y]
        for s in SPLITS:
            splits[s] = [r for r in splits[s] if r["id"] not in lose]
    return leakage_report(splits, threshold)


def check_split(splits: dict[str, list[dict[str, Any]]], active: list[str], dropped: list[SplitDrop]) -> None:
    """Raise SplitError, naming the cause, for an empty split or a domain missing from a split."""
    domains = sorted({r["domain"] for rows in splits.values() for r in rows})
    lost = Counter(d.split for d in dropped if d.split)
    for s in active:
        if not splits[s]:
            cause = (f"all {lost[s]} of its records were near-duplicates of queries kept in other splits"
                     if lost[s] else "the records form too few groups (shared conversations, blocks or pairs)")
            raise SplitError(f"split '{s}' would be empty: {cause}")
        present = {r["domain"] for r in splits[s]}
        missing = [d for d in domains if d not in present]
        if missing:
            raise SplitError(
                f"split '{s}' would have no record of domain(s) {', '.join(missing)}: the groups of that domain "
                "(conversations sharing a block) all went to other splits, or their records were dropped as "
                "near-duplicates; lower synthesize.block_size or add conversations of that domain")


def split_quality(splits: dict[str, list[dict[str, Any]]], min_stratum: int = MIN_STRATUM) -> dict[str, Any]:
    """Strata of `min_stratum`+ records missing from a split, and each domain's share deviation per split."""
    records = [r for rows in splits.values() for r in rows]
    total = Counter(stratum(r) for r in records)
    missing = []
    for s, rows in splits.items():
        have = Counter(stratum(r) for r in rows)
        missing += [{"split": s, "stratum": list(k)} for k, v in sorted(total.items(), key=str)
                    if v >= min_stratum and rows and not have[k]]
    share = Counter(r["domain"] for r in records)
    deviation = {}
    for s, rows in splits.items():
        here = Counter(r["domain"] for r in rows)
        deviation[s] = {d: round(here[d] / max(len(rows), 1) - share[d] / max(len(records), 1), 4) for d in sorted(share)}
    worst = max((abs(v) for dev in deviation.values() for v in dev.values()), default=0.0)
    return {"strata_missing": missing, "domain_share_deviation": deviation, "max_domain_share_deviation": worst}


def _crossings(splits: dict[str, list[dict[str, Any]]], threshold: float) -> tuple[list[str], list[tuple[str, str]], str]:
    """Conversations in several splits, near-duplicate query pairs (ids) across splits, and how pairs were found:
    exact all-pairs rapidfuzz between splits when that is cheap, the LSH search otherwise."""
    conv_splits: dict[str, set[str]] = defaultdict(set)
    for s, rows in splits.items():
        for r in rows:
            for c in conversations_of(r):
                conv_splits[c].add(s)
    shared_convs = sorted(c for c, ss in conv_splits.items() if len(ss) > 1)
    names = [s for s in SPLITS if splits.get(s)]
    work = sum(len(splits[a]) * len(splits[b]) for i, a in enumerate(names) for b in names[i + 1 :])
    crossing: list[tuple[str, str]] = []
    if work <= EXACT_CROSS_CHECK:
        for i, a in enumerate(names):
            qa = [normalize(r["query"]) for r in splits[a]]
            for b in names[i + 1 :]:
                qb = [normalize(r["query"]) for r in splits[b]]
                hits = process.cdist(qa, qb, scorer=fuzz.ratio, score_cutoff=threshold, dtype=np.uint8, workers=-1)
                crossing += [(splits[a][x]["id"], splits[b][y]["id"]) for x, y in zip(*np.nonzero(hits))]
        return shared_convs, sorted(crossing), "exact"
    flat = [(s, r) for s in SPLITS for r in splits.get(s, [])]
    pairs, _ = near_duplicate_pairs([r["query"] for _, r in flat], threshold)
    crossing = [(flat[i][1]["id"], flat[j][1]["id"]) for i, j in pairs.tolist() if flat[i][0] != flat[j][0]]
    return shared_convs, crossing, "lsh"


def leakage_report(splits: dict[str, list[dict[str, Any]]], threshold: float) -> dict[str, Any]:
    """Conversations and near-duplicate queries found in more than one split (both must be zero)."""
    return _report(*_crossings(splits, threshold), threshold)


def _report(shared_convs: list[str], crossing: list[tuple[str, str]], method: str, threshold: float) -> dict[str, Any]:
    return {
        "conversations_in_several_splits": len(shared_convs),
        "near_duplicate_queries_across_splits": len(crossing),
        "threshold": threshold,
        "method": method,
        "examples": {"conversations": shared_convs[:5], "queries": [list(p) for p in crossing[:5]]},
        "passed": not shared_convs and not crossing,
    }
