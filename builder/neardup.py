"""Near-duplicate short strings at scale: char 3-gram MinHash LSH, verified with rapidfuzz.

Never all-pairs: strings are blocked by MinHash band keys (after dropping the most common grams,
which every English question shares), each candidate pair is verified with `fuzz.ratio`, and
verified pairs are joined into clusters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

_NON_WORD = re.compile(r"[^0-9a-z]+")
_MERSENNE = np.uint64((1 << 61) - 1)


def normalize(text: str) -> str:
    return _NON_WORD.sub(" ", text.lower()).strip()


@dataclass(frozen=True)
class LshParams:
    bands: int = 24
    rows: int = 4
    drop_common: int = 64  # grams this frequent carry no signal ("wha", "the")
    window: int = 6  # pairs per bucket: each string with its next `window` bucket-mates
    chunk: int = 100_000
    seed: int = 1


def _gram_arrays(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """All char 3-grams as integers, and the start offset of each string's grams."""
    padded = [(s if len(s) >= 3 else s.ljust(3, "_")).encode("utf-8") for s in strings]
    lengths = np.fromiter((len(b) for b in padded), dtype=np.int64, count=len(padded))
    buf = np.frombuffer(b"".join(padded), dtype=np.uint8).astype(np.uint64)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    grams_per = lengths - 2
    # Position p of the joined buffer starts a gram when p + 2 stays inside its own string.
    owner_start = np.repeat(starts, grams_per)
    local = np.arange(grams_per.sum(), dtype=np.int64) - np.repeat(np.cumsum(grams_per) - grams_per, grams_per)
    pos = owner_start + local
    grams = (buf[pos] << np.uint64(16)) | (buf[pos + 1] << np.uint64(8)) | buf[pos + 2]
    gram_starts = np.cumsum(grams_per) - grams_per
    return grams, gram_starts


def _band_keys(grams: np.ndarray, gram_starts: np.ndarray, common: np.ndarray, params: LshParams) -> np.ndarray:
    """(n_strings, bands) uint64 band keys from `bands * rows` multiply-shift MinHashes."""
    rng = np.random.default_rng(params.seed)
    k = params.bands * params.rows
    a = rng.integers(1, 1 << 62, size=k, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 1 << 62, size=k, dtype=np.uint64)
    # Common grams are made the largest possible value so they never win a min unless nothing else is left.
    is_common = np.isin(grams, common) if len(common) else np.zeros(len(grams), dtype=bool)
    keys = np.zeros((len(gram_starts), params.bands), dtype=np.uint64)
    for band in range(params.bands):
        key = np.zeros(len(gram_starts), dtype=np.uint64)
        for r in range(params.rows):
            i = band * params.rows + r
            h = (grams * a[i] + b[i]) >> np.uint64(20)
            h[is_common] = np.uint64(0xFFFFFFFFFFFF) - (grams[is_common] & np.uint64(0xFFFF))
            m = np.minimum.reduceat(h, gram_starts)
            key = (key * np.uint64(0x100000001B3)) ^ m
        keys[:, band] = key
    return keys


def _common_grams(strings: list[str], top: int) -> np.ndarray:
    if top <= 0:
        return np.zeros(0, dtype=np.uint64)
    sample = strings[:: max(1, len(strings) // 50_000)]
    grams, starts = _gram_arrays(sample)
    owners = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(grams))))
    pairs = np.unique(grams * np.uint64(1 << 24) + owners.astype(np.uint64)) >> np.uint64(24)
    values, counts = np.unique(pairs, return_counts=True)
    return np.sort(values[np.argsort(-counts, kind="stable")[:top]])


def candidate_pairs(strings: list[str], params: LshParams = LshParams()) -> np.ndarray:
    """Candidate (i, j), i < j, from shared band keys, as an (m, 2) int64 array without repeats."""
    n = len(strings)
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64)
    common = _common_grams(strings, params.drop_common)
    keys = np.zeros((n, params.bands), dtype=np.uint64)
    for lo in range(0, n, params.chunk):
        grams, starts = _gram_arrays(strings[lo : lo + params.chunk])
        keys[lo : lo + params.chunk] = _band_keys(grams, starts, common, params)
    codes = []
    for band in range(params.bands):
        order = np.argsort(keys[:, band], kind="stable")
        sk = keys[order, band]
        for shift in range(1, params.window + 1):
            same = sk[:-shift] == sk[shift:]
            if not same.any():
                break
            i, j = order[:-shift][same], order[shift:][same]
            lo_, hi_ = np.minimum(i, j), np.maximum(i, j)
            codes.append(lo_.astype(np.int64) * n + hi_)
    if not codes:
        return np.zeros((0, 2), dtype=np.int64)
    flat = np.sort(np.concatenate(codes))  # a plain sort beats np.unique on big integer arrays
    keep = np.ones(len(flat), dtype=bool)
    keep[1:] = flat[1:] != flat[:-1]
    flat = flat[keep]
    return np.stack([flat // n, flat % n], axis=1)


def verified_pairs(strings: list[str], pairs: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Keep the candidate pairs whose rapidfuzz ratio reaches `threshold`; returns (pairs, scores)."""
    if len(pairs) == 0:
        return pairs, np.zeros(0, dtype=np.float32)
    arr = np.asarray(strings, dtype=object)
    scores = process.cpdist(arr[pairs[:, 0]], arr[pairs[:, 1]], scorer=fuzz.ratio, workers=-1, score_cutoff=threshold)
    ok = scores >= threshold
    return pairs[ok], scores[ok]


def near_duplicate_pairs(texts: list[str], threshold: float = 92.0, params: LshParams = LshParams()) -> tuple[np.ndarray, np.ndarray]:
    """Verified near-duplicate pairs of `texts` (normalized before comparison)."""
    strings = [normalize(t) for t in texts]
    return verified_pairs(strings, candidate_pairs(strings, params), threshold)


def clusters(n: int, pairs: np.ndarray) -> np.ndarray:
    """Cluster label per item: connected components of the verified-pair graph."""
    if len(pairs) == 0:
        return np.arange(n)
    graph = coo_matrix((np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return connected_components(graph, directed=False)[1]
