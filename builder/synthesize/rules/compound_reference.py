"""Same-topic references to common-noun compounds: 'Are the bonds safer than AAA bonds?' right after an exchange
about short-term and long-term bonds; the twin after an exchange that names only the long-term ones."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from builder.record import Record, clear_target
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import clarification
from builder.synthesize.context import TurnContext, also_retrieved, checked_retrieved_share, pair_id, resolving_turn

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*")
# Words that stand before a modifier used as an adjective or noun ('the personal loan', 'for student loans'), not
# after a verb or a noun ('offer more loans', 'holding short-term bonds'); a verb after 'to' is in the verbs lexicon.
_BEFORE = frozenset({"the", "a", "an", "of", "for", "in", "on", "with", "and", "or", "between", "about", "from",
                     "your", "my", "their", "its", "his", "her", "our", "this", "that", "these", "those", "both",
                     "each", "any", "some", "no", "than", "versus", "vs", "into", "at", "by", "as", "like",
                     "per", "over", "under", "via", "all", "two", "three", "four", "five", "most", "many", "more"})
_DETERMINERS = frozenset({"the", "a", "an", "your", "my", "their", "its", "his", "her", "our", "this", "that",
                          "these", "those", "any", "some"})


# Words after which 'the' cannot replace a missing determiner: 'dynamic and static secrets', 'how much physical
# activity' (not 'how much the activity').
_NO_THE_AFTER = frozenset({"and", "or", "much", "many", "more", "most", "less", "few", "how", "what", "which",
                           "whose", "enough", "no"})


@dataclass(frozen=True)
class Compound:
    modifier: str  # 'long-term', 'facilitated'
    head: str  # the head noun as written: 'bonds'
    noun: str  # its singular: 'bond'
    start: int
    end: int

    @property
    def phrase(self) -> str:
        return f"{self.modifier} {self.head}"


def _modifier_word(word: str) -> bool:
    low = word.lower()
    lex = tx.lexicon()
    return (word == low and len(low) >= 3 and low not in tx.stopwords() and low not in lex["verbs"]
            and low not in tx.anaphora() and low not in lex.get("generic_modifiers", []) and not low.endswith(("ly", "ing"))
            and "'" not in low and "’" not in low and not _plural_form(low))


def _plural_form(low: str) -> bool:
    """'scooters industry', 'collects information': a plural or a verb's -s form modifies no noun."""
    return low.endswith("s") and not low.endswith(("ss", "us", "ics", "ings", "is"))


def _head_noun(word: str) -> str | None:
    low = word.lower()
    if word != low or len(low) < 3 or low in tx.stopwords() or low in tx.lexicon()["verbs"] or low.endswith(("ly", "ing", "ed")):
        return None
    return tx.singular(low) or (low[:-1] if low.endswith("s") and not low.endswith("ss") else low)


def compounds(text: str, anywhere: bool = False) -> list[Compound]:
    """Lowercase 'modifier noun' pairs that a determiner or preposition opens ('the long-term bonds', 'for student
    loans'): the common-noun things a talk compares. With `anywhere`, whatever stands before (a query's own words)."""
    toks = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    out: list[Compound] = []
    for i in range(len(toks) - 1):
        (mod, ms, me), (head, hs, he) = toks[i], toks[i + 1]
        if text[me:hs] != " " or not _modifier_word(mod) or not (noun := _head_noun(head)):
            continue
        if i + 2 < len(toks) and text[he:toks[i + 2][1]] == " " and _head_noun(toks[i + 2][0]) \
                and toks[i + 2][0].lower() not in tx.stopwords():
            continue  # 'credit card fees': the compound runs on; its head is the last noun
        # What stands right before: a word, or nothing (the text's start, a list after ':' or ',', a new line).
        before = toks[i - 1][0].lower() if i > 0 and text[toks[i - 1][2]:ms] == " " else ""
        if not anywhere and before and before not in _BEFORE:
            continue
        if before and _modifier_word(toks[i - 1][0]) and text[toks[i - 1][2]:ms] == " " and not anywhere:
            continue
        out.append(Compound(mod.lower(), head, noun, ms, he))
    return out


def rivals_of(text: str, noun: str) -> list[Compound]:
    """The distinct compounds of `noun` that a text names, first mention of each modifier."""
    seen: dict[str, Compound] = {}
    for c in compounds(text):
        if c.noun == noun and c.modifier not in seen:
            seen[c.modifier] = c
    return list(seen.values())


@dataclass(frozen=True)
class CompoundQuery:
    referent: Compound
    query: str  # the rewrite with 'the long-term bonds' made 'the bonds'
    standalone: str

    def reading(self, modifier: str) -> str:
        c, s = self.referent, self.standalone
        before = tx.fit_article(s[: c.start], modifier, False)
        return before + f"{modifier} {c.head}" + s[c.end:]


def make_query(standalone: str, ref: Compound) -> CompoundQuery | str:
    """'What documentation is needed to apply for a personal loan?' -> '... to apply for the loan?', or why not."""
    before = standalone[: ref.start]
    det = re.search(r"(?i)\b(" + "|".join(sorted(_DETERMINERS)) + r")\s+$", before)
    prev = re.search(r"([A-Za-z][A-Za-z'’-]*)\s+$", before)
    word = prev.group(1) if prev else ""
    if not det and (word.lower() in _NO_THE_AFTER or word.lower().endswith("ing") or _modifier_word(word)):
        # 'dynamic and static secrets', 'the rising sea levels', 'a classic worker node': the phrase runs on
        return f"'{ref.phrase}' is part of a longer phrase ('{word} {ref.phrase}')"
    start = det.start() if det else ref.start
    phrase = "the " + ref.head
    query = standalone[:start] + phrase + standalone[ref.end:]
    query = query[0].upper() + query[1:]
    if sum(tx.stem(w) == tx.stem(ref.head) for w in tx.words(query)) > 1:
        return f"the question names '{ref.head}' beside its kind phrase"
    if len(tx.content_stems(query) - {tx.stem(ref.head)}) < 2:
        return f"too little left after removing '{ref.modifier}'"
    return CompoundQuery(ref, query, standalone)


@register
class CompoundReference:
    """The human standalone rewrite's common-noun compound made a bare kind phrase ('a personal loan' -> 'the
    loan'), asked after a prefix of its own conversation whose last exchange names two or more compounds of that
    noun (a positive) or only the true one (the hard-negative twin)."""

    name = "compound_reference"
    version = "1"
    describe = ("MTRAG's human standalone rewrite with a common-noun compound that its conversation talks about made "
                "a bare kind phrase ('the long-term bonds' -> 'the bonds'), asked after a prefix of its own conversation. "
                "A prefix whose last exchange names two or more compounds of that noun (short-term and long-term "
                "bonds), none singled out by its last user turn, gives a multiple_interpretations positive whose "
                "readings and clarification name them; a prefix whose history names only the true compound gives "
                "the hard-negative twin, resolved by the turn that names it. With `retrieved_share`, that share is "
                "also asked post-retrieval, with the passages BM25 finds for the question's own words in the "
                "domain's pool; the label stands.")

    def __init__(self, prefixes: int = 2, twins: int = 1, later: bool = True, retrieved_share: float = 0.0) -> None:
        self.retrieved_share = checked_retrieved_share("compound_reference", retrieved_share)
        self.needs_corpus = retrieved_share > 0
        self.prefixes = prefixes  # own prefixes that each give a positive
        self.twins = twins  # own prefixes naming only the true compound that each give a twin
        self.later = later  # also prefixes past the turn (the question asked again later in the talk)

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        yield from also_retrieved(ctx, self._generate(ctx), self.retrieved_share)

    def _generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        method = self.name
        if not tx.is_question(ctx.standalone):
            return
        said = "\n".join(t.text for t in ctx.conv.turns)
        talked = {c.noun for c in compounds(said) if len(rivals_of(said, c.noun)) >= 2}
        refs = [c for c in compounds(ctx.standalone, anywhere=True) if c.noun in talked]
        if not refs:
            yield ctx.reject(method, "no compound of a noun the conversation compares", ctx.standalone)
            return
        ref = refs[0]
        cq = make_query(ctx.standalone, ref)
        if isinstance(cq, str):
            yield ctx.reject(method, cq, ctx.standalone)
            return
        pair = pair_id(ctx, method)
        positives, twins = [], []
        prefixes = (kd.later_prefixes(ctx) if self.later else []) + kd.own_prefixes(ctx)
        for cut, history in prefixes:
            last = kd.last_exchange(history)
            found = rivals_of("\n".join(h["content"] for h in last), ref.noun)
            user = last[0]["content"] if last else ""
            if len(found) >= 2 and sum(tx.mentions(user, c.phrase) for c in found) != 1:
                if len(positives) < self.prefixes:
                    positives.append((cut, history, found))
            elif cut <= ctx.index and len(twins) < self.twins:
                named = rivals_of("\n".join(h["content"] for h in history), ref.noun)
                if [c.modifier for c in named] == [ref.modifier] and any(c.modifier == ref.modifier for c in found):
                    twins.append((cut, history))
        if not positives:
            yield ctx.reject(method, f"no exchange of the conversation names two kinds of {tx.plural(ref.noun)}", cq.query)
        for cut, history, found in positives:
            yield self._positive(ctx, cq, cut, history, found, pair)
        for cut, history in twins:
            yield self._twin(ctx, cq, cut, history, pair)

    def _positive(self, ctx, cq: CompoundQuery, cut: int, history, found: list[Compound], pair: str) -> Record:
        rng = ctx.rng(f"{self.name}|{cut}")
        options = [c.phrase for c in found[:6]]
        rng.shuffle(options)
        question, pattern = clarification("kind", rng, options=options, head=cq.referent.noun, heads=tx.plural(cq.referent.noun))
        return Record(domain=ctx.conv.domain, setting="pre_retrieval", history=history, query=cq.query, documents=[],
                      needs_clarification=True, category="multiple_interpretations",
                      interpretations=[cq.reading(c.modifier) for c in found[:6]], target={"clarification": question},
                      clarification_pattern=pattern, pair_id=pair,
                      provenance=ctx.provenance(self.name, self.version,
                                                history_source={"conversation_id": ctx.conv.id, "turns": cut}))

    def _twin(self, ctx, cq: CompoundQuery, cut: int, history, pair: str) -> Record:
        phrase = cq.referent.phrase
        return Record(domain=ctx.conv.domain, setting="pre_retrieval", history=history, query=cq.query, documents=[],
                      needs_clarification=False, category="hard_negative", interpretations=[cq.standalone],
                      target=clear_target(), pair_id=pair,
                      resolution={"source": "history", "turn_index": resolving_turn(history, phrase), "document_id": None,
                                  "referent": phrase, "resolved_query": cq.standalone},
                      provenance=ctx.provenance(self.name, self.version,
                                                history_source={"conversation_id": ctx.conv.id, "turns": cut}))
