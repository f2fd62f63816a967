"""How many things of the query's kind the context names: the count the labels turn on.

`resolve.py` reads kinds from the words alone ("AAA bonds", "the Causeway VA Clinic"). This module also
knows what kind a bare name is (the kind lexicon, "Juno is a mission" in the text), so "the mission" after
a talk naming Juno and Galileo counts two candidates, and after one naming only Juno, one. For a pronoun:
how many things of one kind the last exchange names side by side ("it" after two charts were compared).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from builder.synthesize import text as tx
from builder.train.resolve import referring_expressions

_PERSONAL = frozenset("it its they them their theirs".split())

CANDIDATE_FEATURES = (
    "kind_phrase",
    "kind_named_history_0",
    "kind_named_history_1",
    "kind_named_history_2plus",
    "kind_named_last_exchange_0",
    "kind_named_last_exchange_1",
    "kind_named_last_exchange_2plus",
    "kind_named_documents_0",
    "kind_named_documents_1",
    "kind_named_documents_2plus",
    "kind_titles_documents_0",
    "kind_titles_documents_1",
    "kind_titles_documents_2plus",
    "pronoun_rivals_last_exchange_0",
    "pronoun_rivals_last_exchange_1",
    "pronoun_rivals_last_exchange_2plus",
    "pronoun_rivals_documents_2plus",
)


def _bucket(n: int | None) -> list[float]:
    return [0.0] * 3 if n is None else [float(n == 0), float(n == 1), float(n >= 2)]


# 'this kind of transaction', 'these types of stars', 'this huge amount of data': a measure or a sort, not a
# thing to single out.
_NO_KIND = frozenset("kind sort type amount number lot bit couple".split())


def query_kind(query: str) -> str | None:
    """The kind noun of the query's open kind phrase ('this outpatient clinic' -> clinic, 'the famous basketball
    player' -> player, 'the SDK' -> sdk): a kind the lexicon knows first, else a demonstrative's noun."""
    refs = [r for r in referring_expressions(query)
            if not (r.head and (r.head in _NO_KIND or not r.head.isalpha()))]  # '24/7' is no noun
    for ref in refs:
        known = tx.singular(ref.head) if ref.head else None
        acronym = ref.named and not ref.modifiers  # 'the SDK': an upper-case kind noun, not a name
        if known and not ref.restricted and (not ref.named or acronym):
            return known
    demonstrative = next((r.head for r in refs if r.kind == "demonstrative" and not r.named and r.head), None)
    if demonstrative:
        return demonstrative
    phrase = tx.unresolved_kind_phrase(query)  # 'which one', 'similar purposes'
    return tx.singular(tx.words(phrase)[-1]) if phrase and tx.words(phrase) else None


def titles_of_kind(documents: list[dict[str, Any]], kind: str) -> int:
    """Distinct passage titles ('Kobe Bryant', 'LeBron James') whose passage says the kind word: the things of
    the kind the retrieved passages are about."""
    titles = set()
    for d in documents:
        title = re.split(r"\s[-–:|]\s", (d.get("title") or "").strip().lower())[0]
        if title and kind in {tx.stem(w) for w in tx.words(d["text"])}:
            titles.add(title)
    return len(titles)


def _part_of(a: str, b: str, kind: str) -> bool:
    """One of two names of a kind, less the kind noun and the maker's name, is part of the other: one thing
    said short and long ('Clipper mission' / 'Europa Clipper', 'Great Wall' / 'Great Wall of China')."""
    def core(name: str) -> set[str]:
        return tx.content_stems(tx.without_brand(name)) - {tx.stem(kind)}

    ca, cb = core(a), core(b)
    short = a if len(ca) <= len(cb) else b
    if tx.without_brand(short).isupper():
        return False  # 'IRA' / 'Roth IRA': an acronym names the family, the longer name one member of it
    return bool(ca) and bool(cb) and (ca <= cb or cb <= ca)


@lru_cache(maxsize=1 << 15)
def named(text: str, kind: str) -> tuple[str, ...]:
    """Distinct things of `kind` a text names: capitalised names of that kind, and the kind lexicon's names
    it says in any case ('soccer' of sport), aliases and short forms as one."""
    found: list[str] = []
    for name in tx.named_of_kind(text, kind, [text]):
        if not any(_part_of(name, o, kind) for o in found):
            found.append(name)
    for name in tx.lexicon_names().get(kind, []):
        if len(name) > 2 and tx.says(text, name) and not any(
                tx.same_thing(name, o) or _part_of(name, o, kind) for o in found):
            found.append(name)
    return tuple(found)


@lru_cache(maxsize=1 << 15)
def rivals(text: str) -> int:
    """The largest number of distinct things of one kind that a text names."""
    by_kind: dict[str, list[str]] = {}
    for name in tx.names_in(text):
        kind = tx.kind_of(name, [text])
        if kind:
            by_kind.setdefault(kind, []).append(name)
    return max((len(v) for v in by_kind.values()), default=0)


def _last_exchange(history: list[dict[str, str]]) -> str:
    for i in range(len(history) - 1, -1, -1):
        if history[i]["role"] == "user":
            return "\n".join(h["content"] for h in history[i:])
    return ""


def candidate_features(record: dict[str, Any]) -> list[float]:
    """The CANDIDATE_FEATURES of one record, in order."""
    query = record["query"]
    history = list(record.get("history") or [])
    hist_text = "\n".join(h["content"] for h in history)
    last = _last_exchange(history)
    documents = list(record.get("documents") or [])
    doc_text = "\n".join(f"{d.get('title', '')}\n{d['text']}" for d in documents)
    kind = query_kind(query)
    if kind:
        counts = [len(named(t, kind)) if t else None for t in (hist_text, last, doc_text)]
        titled = titles_of_kind(documents, kind) if documents else None
        kind_cols = [1.0, *_bucket(counts[0]), *_bucket(counts[1]), *_bucket(counts[2]), *_bucket(titled)]
    else:
        kind_cols = [0.0] * 13
    if not any(r.kind == "pronoun" and r.word in _PERSONAL for r in referring_expressions(query)):
        pron_cols = [0.0] * 4
    else:
        pron_cols = [*_bucket(rivals(last) if last else None), float(bool(doc_text) and rivals(doc_text) >= 2)]
    return kind_cols + pron_cols
