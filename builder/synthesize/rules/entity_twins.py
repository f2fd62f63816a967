"""'... the Penobscot River ...' -> '... the river ...': open after an unrelated history, resolved by its own."""

from __future__ import annotations

import re
from typing import Iterator

from builder.record import Record
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import clarification, named_in
from builder.synthesize.context import (
    NO_HISTORY, TurnContext, donor_history, history_text, pair_id, pick_pattern_options, resolved_by_history, resolving_turn,
    unrelated_contexts,
)
from builder.synthesize.generic import generalize, no_resolved_twin, other_names_last, with_referent


def _kind_rivals_last(history: list[dict[str, str]], name: str, kind: str) -> list[str]:
    """Other things of `kind` that the history's last exchange names: the generic phrase is open there. The kind
    lexicon's lower-case names count ('infections like tuberculosis' beside sickle cell disease, read 64,
    ce-5dc9a3b7f688b295)."""
    last = "\n".join(h["content"] for h in history[-2:])
    named = tx.named_of_kind(last, kind, [last]) + [w for _, w in kd.lowercase_said(last, kind)]
    return [n for n in named if not tx.same_thing(n, name) and not tx.mentions(name, n) and not tx.mentions(n, name)]


@register
class EntityTwins:
    """'... the Penobscot River ...' -> '... the river ...': ambiguous after an unrelated history,
    resolved after the turn's own history when that history names the entity."""

    name = "entity_twins"
    version = "29"
    describe = ("The standalone rewrite's key entity made generic ('the Penobscot River' -> 'the river'): a topic-"
                "switch positive after another conversation's history (or none), read with other things of that kind "
                "asked about in the block (its clarification names them only where the history does, else it asks openly); when "
                "the block has none, read with the domain's or the kind lexicon's names, in a fresh chat only; a hard negative after the turn's own history that names the entity (for 'it', not when the user's "
                "own turns name another thing of its kind and never the entity; for a kind phrase, not right after an exchange "
                "naming another thing of its kind, by name or by a lower-case name of the kind lexicon). No positive "
                "when the generic query still names something the domain's passages tie to the entity ('MacArthur "
                "... the emperor' is Hirohito in any chat).")

    def __init__(self, histories: int = 1) -> None:
        self.histories = histories  # block-mate histories tried per turn (each a record), besides the fresh chat

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        method, version = self.name, self.version
        got = generalize(ctx, method)
        if isinstance(got, Rejection):
            yield got
            return
        entity, generic = got.entity, got.query
        if re.search(r"(?i)\b(?:second|first|third|free|new|old|own|same|other|another|each|every|any|some|no|current|"
                     r"existing|personal|main|separate|single)\s+the\b", generic):
            yield ctx.reject(method, f"an adjective before '{got.generic}' breaks the question", generic)
            return
        rng = ctx.rng(method)
        pair = pair_id(ctx, method)
        beside = kd.singled_by_other_name(ctx, entity.text, entity.head, generic)
        if beside:
            # 'Was Japan better off after MacArthur did not criminalize the emperor?': Japan and MacArthur say which
            # emperor, in any chat. Only the hard negative after the turn's own history is left.
            yield ctx.reject(method, f"the question still names '{beside}', which the domain's passages name with "
                                     f"'{entity.text}' and hardly any other {entity.head}; no positive", generic)
        options = pick_pattern_options(ctx, entity.head, entity.text) if entity.head else []
        fresh_only = False
        if entity.head and not options:
            # None in the block: the domain's names of the kind, then the kind lexicon's, in a fresh chat only
            # (the topic switches, after a block-mate's history, stay sized to about a quarter).
            options = [n for n in kd.pool_of_kind(ctx, entity.head, query=generic) if not tx.same_thing(n, entity.text)
                       and not tx.same_thing(n, tx.clean_name(entity.text))
                       and not tx.content_stems(n) <= tx.content_stems(entity.text)  # 'The Office' / 'Office series'
                       and not tx.content_stems(n) <= tx.content_stems(generic)]  # 'Enterprise account' for 'the plan'
            fresh_only = bool(options)

        def resolves(text: str) -> bool:
            return tx.mentions_any(text, entity.text) or bool(entity.head and entity.head in tx.content_stems(text))

        # After an unrelated history and after none: two contexts in which the generic words stay open.
        contexts = unrelated_contexts(ctx, rng, resolves) if not beside else []
        if fresh_only and not beside:
            contexts = [(h, s) for h, s in contexts if not h] or [([], dict(NO_HISTORY))]
        used = {s["conversation_id"] for _, s in contexts}
        for _ in range(self.histories - 1 if not (fresh_only or beside) else 0):  # more block-mates: same domain, other conversations
            history, source = donor_history(ctx, rng, empty_share=0.0, avoid=resolves)
            if history and source["conversation_id"] not in used:
                used.add(source["conversation_id"])
                contexts.append((history, source))
        for stitched, source in contexts:
            if entity.head:
                if not options:
                    yield ctx.reject(method, f"no other {entity.head} in the block to read the query with", generic)
                    continue
                shown = named_in([entity.text] + options[:6], history_text(stitched))
                rng.shuffle(shown)
                question, pattern = clarification("entity", rng, options=shown, head=entity.head, heads=tx.plural(entity.head))
                second = with_referent(got, options[0])
            else:
                # A pronoun read with whatever the stitched history is about makes nonsense readings
                # ('hydrogen on the Costa-Hawkins Act'); pronouns are pronoun_reference's, with real rivals.
                yield ctx.reject(method, f"no thing of the same kind to read '{got.generic}' with", generic)
                continue
            yield Record(
                domain=ctx.conv.domain,
                setting="pre_retrieval",
                history=stitched,
                query=generic,
                documents=[],
                needs_clarification=True,
                category=got.category,
                interpretations=[ctx.standalone, second],
                target={"clarification": question},
                clarification_pattern=pattern,
                pair_id=pair,
                provenance=ctx.provenance(method, version, history_source=source),
            )
        own = ctx.history
        if not own:
            return
        if (skip := no_resolved_twin(ctx, got, method)) is not None:
            yield skip
            return
        where = resolving_turn(own, entity.text)
        rivals = [o for o in options if tx.mentions(history_text(own), o)]
        if where is None:
            yield ctx.reject(method, f"entity '{entity.text}' not found in the turn's own history", generic)
        elif rivals and entity.head:
            yield ctx.reject(method, f"own history names another {entity.head}: {rivals[0]}", generic)
        elif entity.head and (others := _kind_rivals_last(own, entity.text, entity.head)):
            # 'How much can I accumulate in the account?' after "don't know if I go with IRA or 401K...".
            yield ctx.reject(method, f"the last exchange names another {entity.head}: {others[0]}", generic)
        elif not entity.head and (others := other_names_last(own, entity.text, unknown_kinds=True)):
            # 'What did it discover at Jupiter?' after an answer naming Juno and Galileo: 'it' is not settled.
            yield ctx.reject(method, f"the last exchange names another candidate for '{got.generic}': {others[0]}", generic)
        elif not entity.head and (other := kd.user_named_instead(own, entity.text)):
            yield ctx.reject(method, f"the user's turns name {other}, never '{entity.text}'; '{got.generic}' may mean "
                                     "either", generic)
        elif not entity.head and where < len(own) - 2:
            # 'What is the meaning of it?' after a last exchange about encryption: 'it' reaches for what was
            # just said, not for the VPC of three turns back.
            yield ctx.reject(method, f"the last exchange does not name '{entity.text}'; '{got.generic}' would "
                                     f"mean what it does name", generic)
        else:
            yield resolved_by_history(ctx, generic, where, entity.text, ctx.standalone, pair, method, version)
