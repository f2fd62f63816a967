"""Near-duplicate short strings at scale: char 3-gram MinHash LSH, verified with rapidfuzz.

Never all-pairs (but among the few strings of at most `short` characters, where one edit changes most grams
and exact cdist is cheap). Identical normalized strings are grouped first; the distinct strings are blocked by
MinHash band keys (the most common grams, which every English question shares, never win a min). Inside
each band the smallest buckets give all their pairs, up to a budget of `pair_budget` pairs per string, so a
family of mutual near-duplicates ("... one bedroom in boston", "... in denver", ...) is found whole; the
bigger buckets, at large n mostly template-mates that are not near-duplicates, pair each string with its next
`window` bucket-mates (ordered by the string, or the reversed string, so strings sharing a prefix or suffix
sit side by side). The cost is thus linear in n per band, whatever the bucket sizes. Candidates failing two
exact bounds (length, character counts) are dropped, the rest are checked with `fuzz.ratio`, and verified
pairs are joined into clusters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

_NON_WORD = re.compile(r"[^0-9a-z]+")
_ALPHABET = b"abcdefghijklmnopqrstuvwxyz0123456789 "
_SYMBOLS = len(_ALPHABET) + 1  # the last one stands for any other byte (and pads strings under 3 chars)
_LUT = np.full(256, _SYMBOLS - 1, dtype=np.intp)
_LUT[np.frombuffer(_ALPHABET, dtype=np.uint8)] = np.arange(len(_ALPHABET))
_GRAMS = _SYMBOLS**3  # 54,872 possible grams: ranks fit in uint16


# a-z and 0-9 stay (A-Z lowered), every other byte becomes a space: the ASCII fast path of `normalize`.
_ASCII_TABLE = bytes(c | 0x20 if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256))


def normalize(text: str) -> str:
    """Lower case; every run of characters other than a-z and 0-9 becomes one space; no outer spaces."""
    if text.isascii():  # the same result as the regex below, about three times faster
        return b" ".join(text.encode().translate(_ASCII_TABLE).split()).decode()
    return _NON_WORD.sub(" ", text.lower()).strip()


@dataclass(frozen=True)
class LshParams:
    bands: int = 30
    rows: int = 4
    drop_common: int = 32  # grams this frequent carry no signal ("wha", "the")
    pair_budget: float = 2.0  # all-pairs in the smallest buckets of a band, up to this many pairs per string
    window: int = 2  # in the other buckets: each string with its next `window` bucket-mates
    short: int = 16  # strings this short have few grams, and one edit changes most: they are compared exactly
    chunk: int = 50_000  # strings per signature chunk (bounds the gram arrays' memory)
    seed: int = 1


def _symbols(strings: list[str], pad: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Symbol codes of all strings joined (each padded to >= 3 if `pad`), and each string's start offset."""
    raw = [s.encode("utf-8") for s in strings]
    if pad:
        raw = [b if len(b) >= 3 else b.ljust(3, b"\xff") for b in raw]
    lengths = np.fromiter((len(b) for b in raw), dtype=np.int64, count=len(raw))
    return _LUT[np.frombuffer(b"".join(raw), dtype=np.uint8)], np.cumsum(lengths) - lengths


def _gram_ids(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Every char 3-gram as an id below `_GRAMS`, and the offset of each string's first gram."""
    sym, starts = _symbols(strings)
    ids = sym[:-2] * (_SYMBOLS * _SYMBOLS) + sym[1:-1] * _SYMBOLS + sym[2:]
    # Drop the two grams that straddle each boundary between strings.
    ends = np.append(starts[1:], len(sym))
    straddle = np.concatenate([ends[:-1] - 2, ends[:-1] - 1])
    ids = np.delete(ids, straddle)
    return ids, starts - 2 * np.arange(len(starts))


def _rank_tables(common: np.ndarray, params: LshParams) -> np.ndarray:
    """(bands*rows, _GRAMS) uint16 random ranks; the common grams rank last, so they win no min but a string
    made only of them still gets a signature."""
    rng = np.random.default_rng(params.seed)
    k = params.bands * params.rows
    tables = np.empty((k, _GRAMS), dtype=np.uint16)
    for i in range(k):
        tables[i, np.argsort(rng.random(_GRAMS) + common)] = np.arange(_GRAMS, dtype=np.uint16)
    return tables


def _band_keys(strings: list[str], params: LshParams) -> np.ndarray:
    """(bands, n_strings) uint64 band keys: each mixes `rows` MinHash values."""
    n = len(strings)
    step = max(1, n // 50_000)
    sample, _ = _gram_ids(strings[::step])
    counts = np.bincount(sample, minlength=_GRAMS)
    common = np.zeros(_GRAMS, dtype=bool)
    if params.drop_common > 0:
        top = np.argsort(-counts, kind="stable")[: params.drop_common]
        # Only grams in a good share of all strings count as common: in a small set the most frequent grams are
        # the ones near-duplicates share, the very signal we need.
        common[top[counts[top] >= max(20, 0.01 * len(range(0, n, step)))]] = True
    tables = _rank_tables(common, params)
    keys = np.zeros((params.bands, n), dtype=np.uint64)
    for lo in range(0, n, params.chunk):
        ids, starts = _gram_ids(strings[lo : lo + params.chunk])
        # Common grams rank last, so they only matter in strings made of nothing else: skip them elsewhere.
        rare = ~common[ids]
        per = np.add.reduceat(rare, starts)
        owner = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(ids))))
        keep = rare | (per[owner] == 0)
        ids = ids[keep]
        kept = np.bincount(owner[keep], minlength=len(starts))
        starts = np.cumsum(kept) - kept
        ranks = np.empty(len(ids), dtype=np.uint16)  # reused: a fresh array per table costs page faults
        block = keys[:, lo : lo + params.chunk]
        for i, table in enumerate(tables):
            band = block[i // params.rows]
            np.take(table, ids, out=ranks)
            band *= np.uint64(0x9E3779B97F4A7C15)
            band ^= np.minimum.reduceat(ranks, starts)
    return keys


def _lex_orders(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the strings in sorted order, and in sorted order of the reversed strings."""
    backwards = [s[::-1] for s in strings]
    return (np.array(sorted(range(len(strings)), key=strings.__getitem__), dtype=np.int64),
            np.array(sorted(range(len(strings)), key=backwards.__getitem__), dtype=np.int64))


def _dedup_codes(codes: np.ndarray) -> np.ndarray:
    flat = np.sort(codes)  # a plain sort beats np.unique on big integer arrays
    keep = np.ones(len(flat), dtype=bool)
    keep[1:] = flat[1:] != flat[:-1]
    return flat[keep]


def _all_pairs_limit(size: np.ndarray, budget: float) -> int:
    """The largest bucket size S such that all pairs inside the buckets of size <= S stay within `budget`."""
    cost = np.cumsum(np.bincount(size, weights=size * (size - 1) / 2.0))
    return int(np.searchsorted(cost, budget, side="right")) - 1


def _band_pairs(sk: np.ndarray, budget: float, window: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions (a, b), a < b, of candidate pairs in one band's sorted keys `sk`: every pair inside the
    smallest buckets (within `budget` pairs), and each member of the others with its next `window` mates."""
    n = len(sk)
    start = np.flatnonzero(np.concatenate([[True], sk[1:] != sk[:-1]]))
    size = np.diff(np.append(start, n))
    limit = _all_pairs_limit(size, budget)
    # All pairs: member at offset k of a bucket of size s pairs with the s-1-k members after it.
    whole = (size >= 2) & (size <= limit)
    st, sz = start[whole], size[whole]
    member = np.repeat(st, sz) + (np.arange(sz.sum()) - np.repeat(np.cumsum(sz) - sz, sz))
    after = np.repeat(st + sz, sz) - member - 1
    a = np.repeat(member, after)
    b = a + 1 + (np.arange(after.sum()) - np.repeat(np.cumsum(after) - after, after))
    # Windows: only inside the buckets too big for all pairs.
    big = np.repeat(size > limit, size)
    wa, wb = [a], [b]
    for shift in range(1, window + 1):
        same = (sk[:-shift] == sk[shift:]) & big[:-shift]
        if not same.any():
            break
        pos = np.flatnonzero(same)
        wa.append(pos)
        wb.append(pos + shift)
    return np.concatenate(wa), np.concatenate(wb)


def _candidate_parts(strings: list[str], params: LshParams, threshold: float | None, parts: int = 16) -> list[np.ndarray]:
    """Candidate pair codes i * n + j (i < j) without repeats, sorted, split into `parts` ranges of i (so the
    repeats across bands are dropped one small range at a time, never in one huge sort)."""
    n = len(strings)
    keys = _band_keys(strings, params)
    lengths = np.fromiter((len(s) for s in strings), dtype=np.int64, count=n)
    slack = 1.0 if threshold is None else 1 - threshold / 100
    orders = _lex_orders(strings)
    codes: list[np.ndarray] = [np.zeros(0, dtype=np.int64) for _ in range(parts)]
    pending: list[list[np.ndarray]] = [[] for _ in range(parts)]
    held = np.zeros(parts, dtype=np.int64)
    exact = _short_pairs(strings, lengths, params.short, threshold)
    if len(exact):
        lo = exact // n
        for p in range(parts):
            pending[p].append(exact[lo * parts // n == p])
    for band in range(params.bands):
        # Rows in lexicographic (even bands) or reversed-string (odd bands) order: a stable sort by key then
        # leaves bucket-mates sharing a prefix (or suffix) side by side, where the window reaches them.
        lex = orders[band % 2]
        order = lex[np.argsort(keys[band, lex], kind="stable")]
        a, b = _band_pairs(keys[band, order], params.pair_budget * n, params.window)
        i, j = order[a], order[b]
        li, lj = lengths[i], lengths[j]
        fits = np.abs(li - lj) <= slack * (li + lj) + 1e-9
        i, j = i[fits], j[fits]
        lo = np.minimum(i, j)
        code = lo * n + np.maximum(i, j)
        part = (lo * parts // n).astype(np.uint8)
        by = np.argsort(part, kind="stable")
        bounds = np.searchsorted(part[by], np.arange(parts + 1))
        for p in range(parts):
            chunk = code[by[bounds[p] : bounds[p + 1]]]
            pending[p].append(chunk)
            held[p] += len(chunk)
            if held[p] > max(100_000, len(codes[p])):  # amortized: each flush at least doubles what is held
                codes[p] = _dedup_codes(np.concatenate([codes[p], *pending[p]]))
                pending[p], held[p] = [], 0
    return [_dedup_codes(np.concatenate([c, *rest])) if rest else c for c, rest in zip(codes, pending)]


def _short_pairs(strings: list[str], lengths: np.ndarray, short: int, threshold: float | None) -> np.ndarray:
    """Codes i * n + j (i < j) of every pair with a string of at most `short` characters that reaches the
    threshold, by exact cdist against all strings short enough to match it. Skipped (blocking alone then)
    where those strings are so many that it would cost more than the blocking itself."""
    n = len(strings)
    if threshold is None or threshold <= 0 or short <= 0:
        return np.zeros(0, dtype=np.int64)
    rows = np.flatnonzero(lengths <= short)
    cols = np.flatnonzero(lengths <= short * (200 - threshold) / threshold)  # the length bound of the ratio
    if len(rows) == 0 or len(rows) * len(cols) > 50 * n + 1_000_000:
        return np.zeros(0, dtype=np.int64)
    found, targets = [], [strings[j] for j in cols]
    for lo in range(0, len(rows), 1024):  # row blocks keep the score matrix small
        m = process.cdist([strings[i] for i in rows[lo : lo + 1024]], targets, scorer=fuzz.ratio,
                          score_cutoff=threshold, dtype=np.uint8, workers=-1)
        a, b = np.nonzero(m)
        i, j = rows[lo + a], cols[b]
        keep = i != j
        found.append(np.minimum(i, j)[keep] * n + np.maximum(i, j)[keep])
    return np.concatenate(found)


def candidate_pairs(strings: list[str], params: LshParams = LshParams(), threshold: float | None = None) -> np.ndarray:
    """Candidate (i, j), i < j, from shared band keys, as an (m, 2) int64 array without repeats. With a
    `threshold`, pairs whose lengths alone rule out a ratio that high are left out."""
    n = len(strings)
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    codes = np.concatenate(_candidate_parts(strings, params, threshold))
    return np.stack([codes // n, codes % n], axis=1)


def _char_counts(strings: list[str], chunk: int = 50_000) -> np.ndarray:
    """(n, _SYMBOLS) uint8 character counts (saturating at 255), for the cheap distance bound; by chunks of
    strings, since the per-character arrays of a million strings would take gigabytes."""
    out = np.empty((len(strings), _SYMBOLS), dtype=np.uint8)
    for lo in range(0, len(strings), chunk):
        part = strings[lo : lo + chunk]
        sym, starts = _symbols(part, pad=False)
        owner = np.repeat(np.arange(len(part)), np.diff(np.append(starts, len(sym))))
        counts = np.bincount(owner * _SYMBOLS + sym, minlength=len(part) * _SYMBOLS)
        out[lo : lo + chunk] = np.minimum(counts, 255).reshape(len(part), _SYMBOLS)
    return out


def _may_match(strings: list[str], pairs: np.ndarray, threshold: float, block: int = 65_536,
               lengths: np.ndarray | None = None, counts: np.ndarray | None = None) -> np.ndarray:
    """Exact pre-filter: ratio >= t needs indel distance <= (1 - t/100)(l1 + l2); the length gap and the
    L1 gap of the character counts are both lower bounds of that distance."""
    if lengths is None:
        lengths = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
    if counts is None:
        counts = _char_counts(strings)
    ok = np.zeros(len(pairs), dtype=bool)
    for lo in range(0, len(pairs), block):  # small blocks stay in cache
        i, j = pairs[lo : lo + block, 0], pairs[lo : lo + block, 1]
        total = lengths[i] + lengths[j]
        budget = (1 - threshold / 100) * total + 1e-9
        near = np.abs(lengths[i] - lengths[j]) <= budget
        a, b = counts[i[near]], counts[j[near]]
        gap = (np.maximum(a, b) - np.minimum(a, b)).sum(axis=1, dtype=np.uint16)  # <= 38 * 255
        idx = np.flatnonzero(near)
        ok[lo + idx[gap <= budget[near]]] = True
    return ok


def verified_pairs(strings: list[str], pairs: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Keep the candidate pairs whose rapidfuzz ratio reaches `threshold`; returns (pairs, scores)."""
    if len(pairs) == 0:
        return pairs, np.zeros(0, dtype=np.float32)
    return _verify(strings, pairs, threshold, np.asarray(strings, dtype=object))


def _verify(strings: list[str], pairs: np.ndarray, threshold: float, arr: np.ndarray, lengths: np.ndarray | None = None,
            counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    pairs = pairs[_may_match(strings, pairs, threshold, lengths=lengths, counts=counts)]
    if len(pairs) == 0:
        return pairs, np.zeros(0, dtype=np.float32)
    scores = process.cpdist(arr[pairs[:, 0]], arr[pairs[:, 1]], scorer=fuzz.ratio, workers=-1, score_cutoff=threshold)
    ok = scores >= threshold
    return pairs[ok], scores[ok].astype(np.float32)


def distinct(strings: list[str]) -> tuple[list[str], np.ndarray]:
    """The distinct strings in first-seen order, and for each input the index of its distinct string."""
    first: dict[str, int] = {}
    inverse = np.fromiter((first.setdefault(s, len(first)) for s in strings), dtype=np.int64, count=len(strings))
    return list(first), inverse


def expand(inverse: np.ndarray, pairs: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs over the original items from pairs over distinct strings (`inverse[i]` = item i's distinct
    string), plus every pair of items with the identical string (score 100); sorted, i < j."""
    n = len(inverse)
    if n == 0:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0, dtype=np.float32)
    order = np.argsort(inverse, kind="stable")  # members of each distinct string, in item order
    size = np.bincount(inverse)
    first = np.cumsum(size) - size
    # Identical: all (a, b), a < b, inside each group of 2+.
    groups = np.flatnonzero(size > 1)
    gsize = size[groups] ** 2
    g = np.repeat(np.arange(len(groups)), gsize)
    local = np.arange(gsize.sum()) - np.repeat(np.cumsum(gsize) - gsize, gsize)
    a, b = local // size[groups][g], local % size[groups][g]
    keep = a < b
    base = first[groups][g][keep]
    same_i, same_j = order[base + a[keep]], order[base + b[keep]]
    # Near: every member of one string with every member of the other.
    u, v = pairs[:, 0], pairs[:, 1]
    tot = size[u] * size[v]
    p = np.repeat(np.arange(len(pairs)), tot)
    local = np.arange(tot.sum()) - np.repeat(np.cumsum(tot) - tot, tot)
    near_i, near_j = order[first[u][p] + local // size[v][p]], order[first[v][p] + local % size[v][p]]
    i = np.concatenate([same_i, np.minimum(near_i, near_j)]).astype(np.int64)
    j = np.concatenate([same_j, np.maximum(near_i, near_j)]).astype(np.int64)
    s = np.concatenate([np.full(len(same_i), 100.0, dtype=np.float32), scores[p]])
    code_order = np.argsort(i * n + j, kind="stable")
    return np.stack([i[code_order], j[code_order]], axis=1), s[code_order]


def near_duplicate_pairs(texts: list[str], threshold: float = 92.0, params: LshParams = LshParams()) -> tuple[np.ndarray, np.ndarray]:
    """Verified near-duplicate pairs (i, j), i < j, of `texts` (normalized before comparison) with their
    ratio scores; items with the identical normalized text are all paired with each other (score 100)."""
    strings, inverse = distinct([normalize(t) for t in texts])
    n = len(strings)
    found, scores = [np.zeros((0, 2), dtype=np.int64)], [np.zeros(0, dtype=np.float32)]
    if n >= 2:
        arr = np.asarray(strings, dtype=object)
        lengths = np.fromiter((len(s) for s in strings), dtype=np.int64, count=n)
        counts = _char_counts(strings)
        for codes in _candidate_parts(strings, params, threshold):  # verified one range at a time: less memory
            p, s = _verify(strings, np.stack([codes // n, codes % n], axis=1), threshold, arr, lengths, counts)
            found.append(p)
            scores.append(s)
    return expand(inverse, np.concatenate(found), np.concatenate(scores))


def clusters(n: int, pairs: np.ndarray) -> np.ndarray:
    """Cluster label per item: connected components of the verified-pair graph."""
    if len(pairs) == 0:
        return np.arange(n)
    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1]
