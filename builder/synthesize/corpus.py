"""The build input's passages, pooled per domain, with a BM25 index: what a RAG system would retrieve.

Post-retrieval generators retrieve for the query they write (the generic "When was the university
founded?"), not for the original named one, so the passages they show were found the way a real
system would find them, and do not leak the answer the original query retrieved.

Retrieval is deterministic: the index is built over passages sorted by id, scores are exact BM25
(bm25s, Lucene variant) and ties are broken by passage id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from builder.conversation import Conversation, Passage
from builder.synthesize import text as tx

METHOD = "bm25s"
K1, B = 1.5, 0.75


def tokens(text: str) -> list[str]:
    """Lowercased, stop words dropped, crude plural folding (the generators' own `text.stem`)."""
    stops = tx.stopwords()
    return [tx.stem(w) for w in tx.words(text) if w.lower() not in stops and len(w) > 1]


@dataclass
class _Pool:
    passages: list[Passage]
    index: Any  # bm25s.BM25


@dataclass
class Corpus:
    """Distinct passages per domain (first occurrence of an id wins) and one BM25 index per domain."""

    pools: dict[str, _Pool] = field(default_factory=dict)
    _named: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_conversations(cls, conversations: Iterable[Conversation]) -> "Corpus":
        by_domain: dict[str, dict[str, Passage]] = {}
        for conv in conversations:
            pool = by_domain.setdefault(conv.domain, {})
            for turn in conv.turns:
                for p in turn.passages:
                    pool.setdefault(p.id, p)
        return cls({d: _build(sorted(ps.values(), key=lambda p: p.id)) for d, ps in sorted(by_domain.items())})

    def domains(self) -> list[str]:
        return sorted(self.pools)

    def size(self, domain: str) -> int:
        pool = self.pools.get(domain)
        return len(pool.passages) if pool else 0

    def search(self, domain: str, query: str, k: int, exclude: Iterable[str] = ()) -> list[Passage]:
        """The top-k passages of `domain` for `query` (score > 0), best first; `exclude` lists ids to skip."""
        pool = self.pools.get(domain)
        q = tokens(query)
        if pool is None or not q:
            return []
        scores = pool.index.get_scores(q)
        skip = set(exclude)
        # Sort by (-score, position); positions follow passage ids, so ties are broken by id.
        order = np.lexsort((np.arange(len(scores)), -scores))
        out: list[Passage] = []
        for i in order:
            if scores[i] <= 0 or len(out) == k:
                break
            p = pool.passages[i]
            if p.id not in skip:
                out.append(p)
        return out

    def names(self, domain: str, name: str) -> bool:
        """Some passage of `domain` names `name` (whole words, any case): among the top 5 BM25 hits for it."""
        key = (domain, name)
        if key not in self._named:
            self._named[key] = any(tx.mentions(p.title + "\n" + p.text, name) for p in self.search(domain, name, 5))
        return self._named[key]

    def describe(self) -> dict:
        """What provenance and the manifest record about the index."""
        return {"method": METHOD, "k1": K1, "b": B, "passages": {d: self.size(d) for d in self.domains()}}


def _build(passages: list[Passage]) -> _Pool:
    import bm25s  # imported here: loading the generator registry (every config load) should not pay for it

    index = bm25s.BM25(k1=K1, b=B)
    # An empty token list would break the index; a passage with no content words gets a dummy token.
    index.index([tokens(p.title + "\n" + p.text) or ["\0"] for p in passages], show_progress=False)
    return _Pool(passages, index)
