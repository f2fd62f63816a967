"""A keyword fragment of the query without its entity ('annual fee?'): open alone, clear after its history."""

from __future__ import annotations

from typing import Iterator

from builder.record import Record
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import clarification
from builder.synthesize.context import (
    TurnContext, pair_id, resolved_by_history, resolving_turn, topic_of, unrelated_contexts,
)


@register
class FragmentTwins:
    """A keyword fragment of the query without its entity ('annual fee?'): ill-formed on its own,
    clear right after a history that names the entity."""

    name = "fragment_twins"
    version = "3"
    describe = ("Two keywords of the standalone rewrite without its key entity ('annual fee?'): a positive after "
                "another conversation's history (or none), a hard negative after the turn's own history.")

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
        rng = ctx.rng(method)
        pair = pair_id(ctx, method)
        # A fragment after no history at all is added for half the turns: fragments are many already.
        for stitched, source in unrelated_contexts(ctx, rng, lambda text: tx.mentions_any(text, entity.text), empty_share=0.5):
            question, pattern = clarification("fragment", rng)
            topic = topic_of(stitched)
            other = f"a question about {fragment[:-1]} for {topic}" if topic else f"a question about {fragment[:-1]} for something else"
            yield Record(
                domain=ctx.conv.domain,
                setting="pre_retrieval",
                history=stitched,
                query=fragment,
                documents=[],
                needs_clarification=True,
                category="ill_formed",
                interpretations=[ctx.standalone, other],
                target={"clarification": question},
                clarification_pattern=pattern,
                pair_id=pair,
                provenance=ctx.provenance(method, version, history_source=source),
            )
        if not own:
            return
        where = resolving_turn(own, entity.text)
        if where is None:
            yield ctx.reject(method, f"entity '{entity.text}' not found in the turn's own history", fragment)
            return
        yield resolved_by_history(ctx, fragment, where, entity.text, ctx.standalone, pair, method, version)
