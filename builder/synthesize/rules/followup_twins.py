"""MTRAG follow-ups that lean on their history: a hard negative in context, a positive after another history."""

from __future__ import annotations

from typing import Iterator

from builder.record import Record
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import clarification
from builder.synthesize.context import (
    TurnContext, history_text, pair_id, referent_in, resolved_by_history, resolving_turn, topic_of, unrelated_contexts,
)


def _fuzzy_names(query: str, referent: str) -> bool:
    """A misspelled mention still names the referent ('Carollina')."""
    from rapidfuzz import fuzz

    have = [w.lower() for w in tx.words(query) if len(w) > 3]
    need = [w.lower() for w in tx.words(referent) if w.lower() not in tx.stopwords() and len(w) > 3]
    return any(fuzz.ratio(n, h) >= 85 for n in need for h in have)


def _kind_of(referent: str) -> str:
    return tx.head_of(referent) or "one"


@register
class FollowupTwins:
    """MTRAG follow-ups that lean on the history: the turn in context is a hard negative; the same
    words stitched after an unrelated (or empty) history need clarification."""

    name = "followup_twins"
    version = "4"
    describe = ("A human MTRAG follow-up whose standalone rewrite names what its pronoun or ellipsis leaves out: "
                "kept in its own conversation it is a hard negative; the same words after another conversation's "
                "history (or none) are a positive.")

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        method, version = self.name, self.version
        if ctx.turn == 1 or not ctx.rewrite:
            return
        history = ctx.history
        span = tx.added_referent(ctx.query, ctx.rewrite)
        if not span:
            yield ctx.reject(method, "standalone: the rewrite adds nothing to the turn")
            return
        referent = referent_in(span, history_text(history))
        if not referent:
            yield ctx.reject(method, f"referent '{span}' not found in the history")
            return
        anaphor = tx.has_anaphor(ctx.query)
        fragment = tx.is_fragment(ctx.query)
        pair = pair_id(ctx, method)
        negative = resolved_by_history(ctx, ctx.query, resolving_turn(history, referent), referent, ctx.rewrite, pair, method, version)
        rng = ctx.rng(method)
        if tx.mentions_any(ctx.query, referent) or _fuzzy_names(ctx.query, referent):
            yield negative
            yield ctx.reject(method, f"query already names the referent '{referent}'")
            return
        yield negative
        if not (anaphor or fragment or tx.is_elliptical(ctx.query)) and tx.entities(ctx.query):
            # 'Does Clipper have an antenna?' names its own topic: without the history it is arguably clear.
            yield ctx.reject(method, "query names a topic of its own; not a positive without its history")
            return
        # The same words after an unrelated history and after none: two contexts, both unresolved.
        for stitched, source in unrelated_contexts(ctx, rng, lambda text: tx.mentions_any(text, referent)):
            yield self._unresolved(ctx, rng, stitched, source, referent, anaphor, fragment, pair)

    def _unresolved(self, ctx, rng, stitched, source, referent, anaphor, fragment, pair) -> Record:
        topic = topic_of(stitched)
        other = topic or "something else"
        alternative = tx.replace_phrase(ctx.rewrite, referent, other) or f"{ctx.query} (about {other})"
        if fragment and not anaphor:
            category = "ill_formed"
            question, pattern = clarification("fragment", rng)
        elif not anaphor and not tx.is_elliptical(ctx.query):
            # No pronoun: the history supplied a detail the query leaves out.
            category = "missing_parameter"
            question, pattern = clarification("parameter", rng, detail=_kind_of(referent))
        else:
            category = "unresolved_reference"
            slots = {"anaphor": anaphor or ctx.query.strip()}
            if topic:
                slots["topic"] = topic
            question, pattern = clarification("reference", rng, **slots)
        return Record(
            domain=ctx.conv.domain,
            setting="pre_retrieval",
            history=stitched,
            query=ctx.query,
            documents=[],
            needs_clarification=True,
            category=category,
            interpretations=[ctx.rewrite, alternative],
            target={"clarification": question},
            clarification_pattern=pattern,
            pair_id=pair,
            provenance=ctx.provenance(method=self.name, version=self.version, history_source=source),
        )
