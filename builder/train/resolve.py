"""Can the history or the passages resolve what the query refers to? Rule-based, from general English.

The query's referring expressions are pronouns ("it", "they") and definite or demonstrative noun
phrases ("this clinic", "the loan", "the famous basketball player"); a capitalised phrase ("the
Causeway VA Clinic") names its referent and needs nothing. For each kind noun (the phrase's head)
we count what the context offers: is the kind mentioned at all, and how many distinct instances of
it (named spans or modifier + head compounds: "the query throughput chart", "AAA bonds") the history
and the passages name. Zero or several instances = nothing singles the referent out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*|[?.!,;:()\"]")


@lru_cache(maxsize=1)
def english() -> dict[str, frozenset[str]]:
    data = yaml.safe_load((Path(__file__).parent / "english.yaml").read_text(encoding="utf-8"))
    odd = [(k, w) for k, v in data.items() for w in v if not isinstance(w, str)]
    if odd:  # YAML reads a bare no/on/yes as a boolean: quote such words
        raise ValueError(f"english.yaml: not a word (quote it): {odd[:3]}")
    out = {k: frozenset(w.lower() for w in v) for k, v in data.items()}
    out["verb_forms"] = frozenset(f for v in out["verbs"] for f in verb_forms(v))
    out["function"] = (out["determiners"] | out["pronouns"] | out["auxiliaries"] | out["wh"]
                       | out["prepositions"] | out["conjunctions"] | out["others"])
    return out


def verb_forms(verb: str) -> set[str]:
    """Base, -s, -ed and -ing forms by the regular rules (irregular pasts are missed: that is fine here)."""
    forms = {verb}
    if verb.endswith("y") and len(verb) > 2 and verb[-2] not in "aeiou":
        forms |= {verb[:-1] + "ies", verb[:-1] + "ied"}
    elif verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        forms.add(verb + "es")
    else:
        forms.add(verb + "s")
    if verb.endswith("e"):
        forms |= {verb + "d", verb[:-1] + "ing"}
    else:
        forms |= {verb + "ed", verb + "ing"}
    return forms


def stem(word: str) -> str:
    """Plural and possessive folding: 'clinics' and "clinic's" -> 'clinic'."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    w = w.rstrip("'")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def is_plural(word: str) -> bool:
    return stem(word) != word.lower().replace("’", "'").rstrip("'") and not word.endswith(("'s", "’s"))


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _wordlike(tok: str) -> bool:
    return tok[0].isalnum()


@dataclass(frozen=True)
class Ref:
    """One referring expression of the query."""

    kind: str  # pronoun | definite | demonstrative
    word: str  # the pronoun or determiner
    head: str | None  # stemmed kind noun; None for a pronoun or a bare "this"
    modifiers: tuple[str, ...] = ()
    named: bool = False  # a capitalised name follows the determiner: "the Causeway VA Clinic"
    restricted: bool = False  # "the first", "the best way", "the price of ...": unique or bound by what follows
    plural: bool = False


def _verbish(word: str) -> bool:
    """A listed verb form, or a regular past/participle ("recognized"; not "breed", "speed")."""
    return word in english()["verb_forms"] or len(word) > 4 and word.endswith("ed") and not word.endswith("eed")


def _expletive_it(toks: list[str], i: int) -> bool:
    """'Is it true that ...', 'it is possible to ...': 'it' refers to nothing."""
    low = [t.lower() for t in toks]
    before = low[i - 1] if i else ""
    after = low[i + 1] if i + 1 < len(low) else ""
    window = low[i + 1:i + 6]
    if before in ("is", "was", "isn't", "wasn't") or after in ("is", "was", "'s", "isn't", "takes", "take"):
        return "to" in window or "that" in window or "whether" in window
    return False


def _that_is_determiner(low: list[str], i: int) -> bool:
    """'that' before a noun phrase after a preposition, an auxiliary, a wh-word or at the start (not 'says that')."""
    e = english()
    if i == 0:
        return True
    prev = low[i - 1]
    return prev in e["prepositions"] or prev in e["auxiliaries"] or prev in e["wh"] or prev in ("about", "on")


_CLAUSE_OPENERS = frozenset(["", "?", "that", "the", "a", "an", "my", "your", "our", "their", "it", "i", "we", "you",
                             "me", "us", "them", "to"])


def _subject_demonstrative(low: list[str], i: int) -> bool:
    """'Is this intended ...', 'Does this mean that ...', 'that sounds hard': the demonstrative stands alone as
    the subject and the next word is its verb, not a kind noun."""
    e = english()
    if low[i] not in ("this", "that") or i + 1 >= len(low):
        return False
    nxt, after = low[i + 1], (low[i + 2] if i + 2 < len(low) else "")
    before = low[i - 1] if i else ""
    if before in e["auxiliaries"] and (nxt.endswith("ed") or after in _CLAUSE_OPENERS):
        return True
    opens = not before or before in e["conjunctions"]  # 'that sounds', 'this means': a verb in -s after it
    return opens and nxt.endswith("s") and not nxt.endswith(("ss", "us", "is", "ies"))


_WH_ADVERBS = frozenset(["when", "where", "why", "how"])


def _inverted_subject(low: list[str], i: int) -> bool:
    """'When was the university founded?', 'Was the plan approved?': the phrase at i is the subject of a question
    whose auxiliary comes first, so a participle after it is the clause's verb, not a clause bound to the noun
    ('What are the services offered by ...' is bound: its 'what' is the subject)."""
    aux = i - 1
    if aux < 0 or low[aux] not in english()["auxiliaries"]:
        return False
    before = low[aux - 1] if aux else ""
    return not before or before in _WH_ADVERBS or before in english()["conjunctions"]


def referring_expressions(query: str) -> list[Ref]:
    e = english()
    toks = tokens(query)
    low = [t.lower() for t in toks]
    refs: list[Ref] = []
    i = 0
    while i < len(toks):
        w = low[i]
        if w in e["pronouns"] and not (w == "it" and _expletive_it(toks, i)):
            refs.append(Ref("pronoun", w, None, plural=w in e["plural_pronouns"]))
        elif w in e["determiners"] and _subject_demonstrative(low, i):
            refs.append(Ref("pronoun", w, None))
        elif w in e["determiners"] and not (w == "that" and not _that_is_determiner(low, i)):
            span, j = [], i + 1
            while j < len(toks) and len(span) < 5 and _wordlike(toks[j]):
                t = low[j]
                cap = toks[j][:1].isupper() or toks[j][:1].isdigit()
                # "the Bank of America": a name may hold "of"/"and" between capitalised words
                joins = (t in ("of", "and", "&") and span and span[-1][:1].isupper()
                         and j + 1 < len(toks) and toks[j + 1][:1].isupper())
                if t in e["function"] and not joins:
                    break
                # "this outpatient clinic provide ...": a verb after the noun ends the phrase
                if span and not cap and _verbish(t):
                    break
                if span and span[-1][:1].isupper() and not cap and not span[0][:1].islower() and len(span) > 1:
                    break  # "the Causeway VA Clinic offers": lower case after a full name ends it
                span.append(toks[j])
                j += 1
                if t.endswith(("'s", "’s")):  # "the company's": the possessor is the phrase
                    break
            named = bool(span) and span[-1][:1].isupper()  # "this California county" is a kind
            if not span:
                if w in e["demonstratives"] and w != "that" or (w == "that" and i + 1 < len(toks)):
                    refs.append(Ref("pronoun", w, None, plural=w in e["plural_pronouns"]))
            elif named:
                refs.append(Ref("definite", w, stem(span[-1]), tuple(s.lower() for s in span[:-1]), named=True))
            else:
                nxt = low[j] if j < len(low) else ""
                first = span[0].lower()
                # "the price of ...", "the services offered by ...": bound by what follows. A
                # demonstrative is never bound that way: "this county of California" is still "which?".
                restricted = (first in e["restrictors"] or first.endswith("est") and len(first) > 5
                              or w == "the" and (nxt in ("of", "between", "that", "which", "who", "whose", "where")
                                                 or _verbish(nxt) and nxt.endswith(("ed", "ing"))
                                                 and not _inverted_subject(low, i)))
                kind = "demonstrative" if w in e["demonstratives"] else "definite"
                refs.append(Ref(kind, w, stem(span[-1]), tuple(stem(s) for s in span[:-1]),
                                restricted=restricted, plural=is_plural(span[-1])))
            i = max(j, i + 1)
            continue
        i += 1
    return refs


_CAPSPAN = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][\w'’\-]*(?:\s+(?:of\s+|the\s+|&\s+)?[A-Z0-9][\w'’\-]*)*")


def instances(text: str, head: str) -> set[str]:
    """Distinct things of kind `head` named in `text`: capitalised spans holding the head word
    ("Causeway VA Clinic") and modifier + head compounds ("throughput chart", "AAA bonds")."""
    if not text:
        return set()
    e = english()
    found: set[str] = set()
    toks = tokens(text)
    low = [t.lower() for t in toks]
    for j, t in enumerate(low):
        if not _wordlike(t) or stem(t) != head:
            continue
        k = j
        while k > 0 and _wordlike(toks[k - 1]) and low[k - 1] not in e["function"] and j - k < 3 \
                and low[k - 1] not in e["verb_forms"] and not low[k - 1].endswith("ly"):
            k -= 1
        mods = [stem(x) for x in low[k:j]]
        # "other bonds", "each plan" stop at function words; a compound needs a real modifier.
        if mods:
            found.add(" ".join(mods + [head]))
        # "the Penobscot River ... Jamaica Plain VA Medical Center": a name containing the head.
        if j + 1 < len(toks) and toks[j + 1][:1].isupper() and toks[j][:1].isupper():
            found.add(" ".join(stem(x) for x in low[k:j + 2]))
    return found


def kind_mentions(text: str, head: str) -> tuple[int, int]:
    """(mentions of the kind word, plural mentions) in `text`."""
    n = plural = 0
    for t in tokens(text):
        if _wordlike(t) and stem(t) == head:
            n += 1
            plural += is_plural(t)
    return n, plural


def _coordination(text: str) -> int:
    """Does the text set things side by side ('X or Y', 'between X and Y', 'compare', 'both')?"""
    low = f" {text.lower()} "
    return int(any(m in low for m in (" or ", " versus ", " vs ", " vs. ", "compare", "difference between",
                                       " both ", " either ", " each ", " different ", " various ", " several ")))


def _candidates(turn: str) -> int:
    """Antecedent candidates in a turn: its names and its unnamed kind noun phrases, distinct."""
    kinds = {r.head for r in referring_expressions(turn) if r.head and not r.named}
    return len(_named_spans(turn) | kinds)


def _named_spans(text: str) -> set[str]:
    return {m.group(0).lower() for m in _CAPSPAN.finditer(text) if m.group(0).lower() not in english()["function"]}


RESOLVE_FEATURES = (
    "ref_pronouns",
    "ref_pronoun_plural",
    "ref_demonstrative_pronoun",
    "ref_kind_nps",
    "ref_demonstrative_nps",
    "ref_named_nps",
    "ref_restricted_nps",
    "ref_open_kind",  # an unrestricted, unnamed kind NP: the thing that needs singling out
    "kind_in_history",
    "kind_in_last_exchange",
    "kind_in_documents",
    "kind_plural_in_history",
    "kind_instances_history_0",
    "kind_instances_history_1",
    "kind_instances_history_2plus",
    "kind_instances_documents_0",
    "kind_instances_documents_1",
    "kind_instances_documents_2plus",
    "kind_modifiers_in_history",
    "kind_unsingled",  # an open kind NP that neither history nor passages narrow to exactly one
    "kind_unsingled_demonstrative",
    "kind_absent_from_context",
    "pronoun_no_context",
    "pronoun_last_turn_names_0",
    "pronoun_last_turn_names_1",
    "pronoun_last_turn_names_2plus",
    "pronoun_last_turn_coordination",
    "pronoun_history_coordination",
    "pronoun_last_user_candidates_0",
    "pronoun_last_user_candidates_1",
    "pronoun_last_user_candidates_2plus",
    "pronoun_document_names_0",
    "pronoun_document_names_1",
    "pronoun_document_names_2plus",
    "query_full_sentence",
    "query_fragment",
    "query_names",
    "query_topic_in_history",
    "query_topic_in_documents",
)


def resolvability(record: dict[str, Any]) -> list[float]:
    """The RESOLVE_FEATURES of one record, in order."""
    e = english()
    query = record["query"]
    history = [t["content"] for t in record.get("history") or []]
    users = [t["content"] for t in record.get("history") or [] if t["role"] == "user"]
    docs = [f"{d.get('title', '')}. {d['text']}" for d in record.get("documents") or []]
    hist_text, last_text, doc_text = " ".join(history), " ".join(history[-2:]), " ".join(docs)
    refs = referring_expressions(query)
    pron = [r for r in refs if r.kind == "pronoun"]
    kinds = [r for r in refs if r.head]
    open_kinds = [r for r in kinds if not r.named and not r.restricted]

    # The least resolved open kind NP decides (a query is as clear as its vaguest reference).
    in_hist = in_last = in_docs = plural_hist = mods_hist = 0.0
    inst_h, inst_d, unsingled, unsingled_dem, absent = None, None, 0.0, 0.0, 0.0
    hist_stems = {stem(t) for t in tokens(hist_text) if _wordlike(t)}
    for r in open_kinds:
        n_h, pl_h = kind_mentions(hist_text, r.head)
        n_l, _ = kind_mentions(last_text, r.head)
        n_d, _ = kind_mentions(doc_text, r.head)
        ih, idoc = len(instances(hist_text, r.head)), len(instances(doc_text, r.head))
        single = (ih == 1 or (ih == 0 and n_h > 0 and pl_h == 0 and idoc == 1)) if history else idoc == 1
        unsingled = max(unsingled, float(not single))
        if r.kind == "demonstrative":
            unsingled_dem = max(unsingled_dem, float(not single))
        absent = max(absent, float(n_h == 0 and n_d == 0))
        in_hist, in_last, in_docs = max(in_hist, float(n_h > 0)), max(in_last, float(n_l > 0)), max(in_docs, float(n_d > 0))
        plural_hist = max(plural_hist, float(pl_h > 0))
        mods_hist = max(mods_hist, float(bool(r.modifiers) and all(m in hist_stems for m in r.modifiers)))
        inst_h = ih if inst_h is None else min(inst_h, ih) if ih != 1 else inst_h
        inst_d = idoc if inst_d is None else min(inst_d, idoc) if idoc != 1 else inst_d

    last_user = users[-1] if users else ""
    names_last = len(_named_spans(last_text)) if pron else 0
    names_docs = len(_named_spans(doc_text)) if pron and docs else None
    candidates = _candidates(last_user) if pron and users else None
    q_low = [t.lower() for t in tokens(query) if _wordlike(t)]
    first = q_low[0] if q_low else ""
    has_verb = any(t in e["verb_forms"] or t in e["auxiliaries"] for t in q_low)
    full = float(len(q_low) >= 5 and has_verb and (first in e["wh"] or first in e["auxiliaries"]
                                                   or first in e["verb_forms"] or first in ("i", "please")))
    ref_words = {r.head for r in kinds} | {r.word for r in refs}
    topic = {stem(t) for t in q_low if t not in e["function"] and t not in e["verb_forms"] and len(t) > 2} - ref_words
    doc_stems = {stem(t) for t in tokens(doc_text) if _wordlike(t)}

    def bucket(n: int | None) -> list[float]:
        return [0.0] * 3 if n is None else [float(n == 0), float(n == 1), float(n >= 2)]

    return [
        float(len(pron)),
        float(any(r.plural for r in pron)),
        float(any(r.word in e["demonstratives"] for r in pron)),
        float(len(kinds)),
        float(sum(r.kind == "demonstrative" and not r.named for r in kinds)),
        float(sum(r.named for r in kinds)),
        float(sum(r.restricted for r in kinds)),
        float(len(open_kinds)),
        in_hist, in_last, in_docs, plural_hist,
        *bucket(inst_h), *bucket(inst_d),
        mods_hist, unsingled, unsingled_dem, absent,
        float(bool(pron) and not history and not docs),
        *([0.0] * 3 if not pron else bucket(names_last)),
        float(bool(pron) and _coordination(last_user) > 0),
        float(bool(pron) and _coordination(hist_text) > 0),
        *bucket(candidates),
        *bucket(names_docs),
        full,
        float(len(q_low) <= 3 and not has_verb),
        float(len(_named_spans(query))),
        len(topic & hist_stems) / len(topic) if topic else 0.0,
        len(topic & doc_stems) / len(topic) if topic else 0.0,
    ]
