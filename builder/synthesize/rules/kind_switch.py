"""Topic-switch positives: the full-sentence kind reference after another conversation's history."""

from __future__ import annotations

from typing import Iterator

from builder.record import Record
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.context import TurnContext, checked_retrieved_share, donor_history, with_retrieval


@register
class KindSwitch:
    """'Does this clinic provide mental health services?' stitched onto a conversation about something else."""

    name = "kind_switch"
    version = "21"
    default_rate = 1.0
    describe = ("The same kind-phrase question as kind_reference ('Does this clinic provide mental health "
                "services?'), stitched onto the first one or two exchanges of another conversation of its block that "
                "names nothing of that kind and never says the kind word (or onto no history): a topic switch, an underspecified_entity positive "
                "whose readings are names of the kind asked about in the block and domain; its clarification asks "
                "openly ('Which clinic are you referring to?'). No such positive for a kind with a default referent "
                "('this planet') or a layer kind ('this cloud'); an umbrella kind ('the service', 'this tool') only after a history that names no product at all, since a product talk's own subject is one, and no 'this county' or 'this country' after a history naming a place that lies in one (a city, a US state). With `fresh_retrieved_share`, that share of the "
                "fresh-chat records is also asked post-retrieval, with the passages BM25 finds for the question's own "
                "words in the domain's pool (a first question over retrieved passages); with `switch_retrieved_share`, that share "
                "of the switches after a history too. The label stands."
                " Where the readings came from beyond the record (the block's names) and the passages name two or more "
                "things of the kind, the post-retrieval copy is read with those, and its clarification names them.")

    def __init__(self, histories: int = 3, empty_share: float = 0.5, referents: int = 2,
                 fresh_retrieved_share: float = 0.0, switch_retrieved_share: float = 0.0) -> None:
        self.fresh_retrieved_share = checked_retrieved_share("kind_switch", fresh_retrieved_share)
        # A share of the switches after a history also over retrieved passages. Each raises the switches' share of
        # the stitched positives (over a quarter already); the MTRAG config spends it to keep the positive floor.
        self.switch_retrieved_share = checked_retrieved_share("kind_switch", switch_retrieved_share)
        self.needs_corpus = fresh_retrieved_share > 0 or switch_retrieved_share > 0
        self.histories = histories  # block-mate histories tried per turn (each gives one record)
        self.referents = referents  # named things of the standalone query each made a kind phrase in turn
        self.empty_share = empty_share  # share of turns also asked in a fresh chat, with no history

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        yield from kd.each_referent(ctx, self.name, self._one, limit=self.referents)

    def _one(self, ctx: TurnContext, ref: kd.Referent, slot: int) -> Iterator[Record | Rejection]:
        method, version = self.name, self.version
        kq = kd.make_kind_query(ctx, ref, method, slot=slot)
        if isinstance(kq, Rejection):
            yield kq
            return
        pair = kd.kind_pair(ctx, slot)
        default = tx.default_referent(ref.kind)
        if default:
            yield ctx.reject(method, f"'{kq.phrase}' reads as {default} when nothing else is said", kq.query)
            return
        names = kd.pool(ctx, ref, query=kq.query)
        known = kd.known_names(ctx, ref.kind)

        def resolves(text: str) -> bool:
            # A history that says the kind word at all ('your provisioned instance of Key Protect') is no switch
            # away from it: 'the instance' may point back there.
            history = [{"role": "user", "content": text}]
            if ref.kind in tx.umbrella_kinds() and tx.names_in(text):
                return True  # 'How does the service work?' after a talk naming a product is about that product
            return (ref.kind in tx.content_stems(text) or bool(kd.candidates(history, ref, []))
                    or kd.mentions_referent(history, ref, names) or bool(kd.known_said(history, known))
                    or kd.place_in(history, ref.kind) is not None)  # 'this county' after the City of Piedmont

        if len(names) < 2:
            yield ctx.reject(method, f"fewer than two names of the kind '{ref.kind}' in the block and domain", kq.query)
            return
        rng = ctx.rng(method if slot == 0 else f"{method}|{slot}")
        reread = kd.passage_reader(ctx, kq, method)
        used: set[str] = set()
        for _ in range(3 * self.histories):  # a few more draws: a block-mate drawn twice gives no second record
            if len(used) >= self.histories:
                break
            history, source = donor_history(ctx, rng, empty_share=0.0, avoid=resolves)
            if not history or source["conversation_id"] in used:
                continue
            used.add(source["conversation_id"])
            switch = kd.kind_positive(ctx, kq, history, source, names, "underspecified_entity", method, version, pair,
                                      named_here=False)
            yield switch
            copy = with_retrieval(ctx, switch, self.switch_retrieved_share, reread=reread)
            if copy is not None:
                yield copy
        if not used:
            yield ctx.reject(method, "no block-mate history that leaves the kind open", kq.query)
        if rng.random() < self.empty_share:
            fresh = kd.kind_positive(ctx, kq, [], {"conversation_id": "", "turns": 0}, names, "underspecified_entity",
                                     method, version, pair, named_here=False)
            yield fresh
            copy = with_retrieval(ctx, fresh, self.fresh_retrieved_share, reread=reread)
            if copy is not None:
                yield copy
