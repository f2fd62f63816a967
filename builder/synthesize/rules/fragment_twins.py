"""A keyword fragment of the query without its entity ('annual fee?'): open alone, clear after its history."""

from __future__ import annotations

import re
from typing import Iterator

from builder.record import Record
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import clarification
from builder.synthesize.context import (
    TurnContext, pair_id, resolved_by_history, resolving_turn,
)


@register
class FragmentTwins:
    """A keyword fragment of the query without its entity ('annual fee?'): clear right after a history that names
    the entity; for a share of turns, open in a fresh chat."""

    name = "fragment_twins"
    version = "19"
    default_rate = 0.5
    describe = ("Two adjacent keywords of the standalone rewrite without its key entity ('annual fee?'; with no adjacent "
                "pair, one), the kind of short "
                "follow-up a person types: a hard negative after the turn's own history, which names the entity and what the "
                "question asks of it (none when the user's turns already typed every word of the fragment); for a "
                "share of turns, a positive in a fresh chat (after any history a fragment reads as a follow-up to it), "
                "whose readings are the rewrite with names of the entity's kind; its clarification asks openly. No "
                "fragment that keeps a verb cut from its object ('industry earn?'), a number ('two months?') or cuts a compound "
                "('pattern day?' of 'pattern day trading'), and none of a rewrite that asks nothing.")

    def __init__(self, positive_share: float = 0.3) -> None:
        self.positive_share = positive_share  # fragments are at most a tenth of the positives

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        method, version = self.name, self.version
        passages = ctx.relevant_passages()
        entity = tx.key_entity(ctx.standalone, [p.title for p in passages], [p.text for p in passages])
        own = ctx.history
        if entity is None:
            yield ctx.reject(method, "no key entity in the standalone query", ctx.standalone)
            return
        fragment = tx.keyword_fragment(ctx.standalone, entity.text, max_words=2)
        if not fragment:
            yield ctx.reject(method, "nothing left after removing the entity", ctx.standalone)
            return
        if not tx.is_question(ctx.standalone):
            # 'press conference?' of 'Office of the New York State Attorney General press conference': the rewrite
            # asks nothing, so after its history the topic is settled but not the request (read 36).
            yield ctx.reject(method, "the rewrite is no question or request; a fragment of it asks nothing", fragment)
            return
        cut = _cut_from(fragment, ctx.standalone)
        if cut:
            # 'pattern day?' of '... pattern day trading ...', 'two months?' of '... deprecated in two months': no
            # noun phrase a person types (read 36).
            yield ctx.reject(method, cut, fragment)
            return
        verb = _verb_in(fragment, ctx.standalone)
        if verb:
            # 'industry earn?' of '... the Indian agriculture industry earn a good income?': a verb cut from its
            # subject and object is no keyword query a person types (read 23, ce-49b81863f45fd0a0).
            yield ctx.reject(method, f"the fragment keeps the verb '{verb}' without what it says", fragment)
            return
        rng = ctx.rng(method)
        pair = pair_id(ctx, method)
        if own and len(tx.words(fragment)) < 2:
            # 'user?', 'grant?': one word leaves open what about it, whatever the history says.
            yield ctx.reject(method, "a one-word fragment is no resolved follow-up", fragment)
        elif own:
            where = resolving_turn(own, entity.text)
            said = tx.content_stems("\n".join(h["content"] for h in own))
            # 'able conquer?' for 'Was the Byzantine Empire able to conquer Israel?' after a talk that never
            # names Israel: the history settles the entity, not what else the fragment dropped.
            dropped = sorted(_things(ctx.standalone) - tx.content_stems(fragment) - said)
            # 'house chores?' of 'Could the water ... be recycled and used in house chores like cleaning and
            # gardening?': what the question asks of the fragment is gone too (read 50, ce-bea65a5050567b3d).
            unsaid = sorted(tx.content_stems(ctx.standalone) - tx.content_stems(fragment) - said - _ASKING)
            # 'garbage collection?' after 'do i need to pay for garbage/recycling/organics service?': words the user
            # already typed re-say the talk, and what the question asks (the service rate) is gone (reads 50, 54;
            # ce-08492a32bb1e2f64).
            typed = tx.content_stems("\n".join(h["content"] for h in own if h["role"] == "user"))
            if where is None:
                yield ctx.reject(method, f"entity '{entity.text}' not found in the turn's own history", fragment)
            elif dropped:
                yield ctx.reject(method, f"the fragment drops '{dropped[0]}', which the history does not say", fragment)
            elif len(unsaid) > 1:
                yield ctx.reject(method, f"the fragment drops what the question asks ({', '.join(unsaid[:3])}), "
                                         "which the history does not say", fragment)
            elif tx.content_stems(fragment) <= typed:
                yield ctx.reject(method, "the user's own turns already typed every word of the fragment; it re-says "
                                         "the talk, not what the question asks", fragment)
            else:
                yield resolved_by_history(ctx, fragment, where, entity.text, ctx.standalone, pair, method, version)
        if rng.random() >= self.positive_share:
            return
        name = tx.clean_name(entity.text)
        kind = tx.kind_of(name, [p.title + "\n" + p.text for p in ctx.passages])
        if kind and tx.words(name)[-1].lower() == tx.plural(kind) != kind:
            # 'What are Exchange-Traded Funds (ETFs)?' read as 'What are IRA (ETFs)?' (read 41, ce-3b6eadfca345ea31)
            yield ctx.reject(method, f"'{entity.text}' is plural; one name of its kind would not agree", fragment)
            return
        if re.match(r"\s*\(", ctx.standalone[entity.end:]):
            yield ctx.reject(method, f"a short form in brackets follows '{entity.text}'; a reading would keep it", fragment)
            return
        names = kd.pool_of_kind(ctx, kind, query=ctx.standalone, keep=name) if kind else []
        readings = [r for r in (tx.substitute(ctx.standalone, name, n) for n in names) if r]
        if len(readings) < 2:
            yield ctx.reject(method, f"fewer than two names of the kind of '{entity.text}' to read the fragment with", fragment)
            return
        # Only in a fresh chat: after any history a fragment reads as a follow-up to whatever it talks about
        # ('taxation?' after a talk about discounted company stock), so only no history leaves it open.
        question, pattern = clarification("kind", rng, options=[], head=tx.kind_word(kind), heads=tx.plural(kind))
        yield Record(
            domain=ctx.conv.domain,
            setting="pre_retrieval",
            history=[],
            query=fragment,
            documents=[],
            needs_clarification=True,
            category="ill_formed",
            interpretations=readings,
            target={"clarification": question},
            clarification_pattern=pattern,
            pair_id=pair,
            provenance=ctx.provenance(method, version, history_source={"conversation_id": "", "turns": 0}),
        )


def _things(text: str) -> set[str]:
    """The names and kind nouns of a question (what a fragment may leave to the history), not its other words."""
    ws = tx.words(text)
    return {tx.stem(w) for i, w in enumerate(ws)
            if (i > 0 and w[:1].isupper() and w.lower() not in tx.stopwords() and not w.startswith("I'"))
            or tx.singular(w)} - {""}


# Words that ask ('Could you clarify ...') rather than say what is asked, and 'I'm', which content_stems keeps.
_ASKING = frozenset(tx.stem(w) for w in ("clarify", "tell", "explain", "describe", "give", "provide", "know", "i'm"))

_DETERMINER = r"(?:a|an|the|this|that|these|those|my|your|his|her|its|our|their|any|some)"


def _verb_in(fragment: str, query: str) -> str | None:
    """A fragment word that the query follows with a determiner: a verb taking its object ('earn a good income'),
    since a noun or a name is rarely followed by one."""
    for w in tx.words(fragment):
        if re.search(rf"(?i)\b{re.escape(w)}\s+{_DETERMINER}\b", query):
            return w
    return None


_NUMBER = frozenset("one two three four five six seven eight nine ten eleven twelve twenty thirty hundred thousand "
                    "million billion".split())


def _cut_from(fragment: str, query: str) -> str | None:
    """Why the fragment is no noun phrase of the query: it holds a number ('two months?', '3x3x3 feet?'), or the
    query goes on with an '-ing' noun it cut off ('pattern day?' of 'pattern day trading')."""
    ws = tx.words(fragment)
    if any(any(ch.isdigit() for ch in w) or w.lower() in _NUMBER for w in ws):
        return "the fragment keeps a number; it is no keyword query"
    after = re.search(rf"(?i)\b{re.escape(' '.join(ws))}\s+([a-z]+ing)\b", query)
    if after and after.group(1).lower() not in tx.stopwords():
        return f"the fragment cuts '{after.group(1)}' off its noun phrase"
    return None
