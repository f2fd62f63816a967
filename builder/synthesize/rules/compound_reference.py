"""Same-topic references to common-noun compounds: 'What is the interest rate on the bonds?' right after an
exchange about short-term and long-term bonds; the twin after a history that names only the long-term ones."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from builder.record import Record, clear_target
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import clarification
from builder.synthesize.compounds import Compound, any_named, compounds, kinds_of_one, modifier_word, rivals_of
from builder.synthesize.context import TurnContext, also_retrieved, checked_retrieved_share, pair_id, resolving_turn

_DETERMINERS = frozenset({"the", "a", "an", "your", "my", "their", "its", "his", "her", "our", "this", "that",
                          "these", "those", "any", "some"})

# Words after which 'the' cannot replace a missing determiner: 'dynamic and static secrets', 'how much physical
# activity' (not 'how much the activity').
_NO_THE_AFTER = frozenset({"and", "or", "much", "many", "more", "most", "less", "few", "how", "what", "which",
                           "whose", "enough", "no"})


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
    if not det and (word.lower() in _NO_THE_AFTER or word.lower().endswith("ing") or modifier_word(word)):
        # 'dynamic and static secrets', 'the rising sea levels', 'a classic worker node': the phrase runs on
        return f"'{ref.phrase}' is part of a longer phrase ('{word} {ref.phrase}')"
    if tx.one_of_list(standalone, tx.Entity(ref.phrase, ref.noun, ref.start, ref.end)):
        # 'mutual funds or ETFs' -> 'the funds or ETFs': ETFs are funds too, so the question no longer says which
        return f"'{ref.phrase}' is one of a list; a kind phrase there breaks the question"
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
    version = "5"
    describe = ("MTRAG's human standalone rewrite with a common-noun compound that its conversation talks about made "
                "a bare kind phrase ('the long-term bonds' -> 'the bonds'), asked after a prefix of its own conversation. "
                "A prefix whose last exchange names two or more compounds of that noun (short-term and long-term "
                "bonds), none singled out by its last user turn and none called a kind of another in the conversation ('index-based mutual funds'), gives a multiple_interpretations positive whose "
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
            found = kinds_of_one(said, rivals_of("\n".join(h["content"] for h in last), ref.noun))
            user = last[0]["content"] if last else ""
            if len(found) >= 2 and sum(tx.mentions(user, c.phrase) for c in found) != 1:
                if len(positives) < self.prefixes:
                    positives.append((cut, history, found))
            elif cut <= ctx.index and len(twins) < self.twins:
                # 'the tax' after a talk of income tax that also said 'employer-paid payroll taxes' (read 51,
                # ce-71dd0d77921a96c4): a twin needs a history that names no other kind of the noun anywhere
                named = any_named("\n".join(h["content"] for h in history), ref.noun)
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
