"""Post-retrieval: a generic query over passages about one entity (clear) or about several (ambiguous)."""

from __future__ import annotations

import re
from typing import Iterator

from builder.conversation import Passage
from builder.record import Record, clear_target
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import clarification
from builder.synthesize.context import TurnContext, history_text, pair_id
from builder.synthesize.generic import (
    Generalized, about, distinct, generalize, good_name, no_resolved_twin, title_name, with_referent,
)

Rival = tuple[str, list[Passage], TurnContext]


@register
class PassageTwins:
    """Post-retrieval: 'the river' with passages about two rivers needs clarification; with passages
    about one river it is clear."""

    name = "passage_twins"
    version = "34"
    describe = ("The standalone rewrite made generic, after the turn's own history with its own relevant passages (a "
                "hard negative the history and documents resolve together, unless the talk last named another thing of its kind, or "
                "the user's turns name another and never the entity) or with those plus passages of the block about another entity that answer the "
                "same question (a positive).")

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        method, version = self.name, self.version
        got = generalize(ctx, method)
        if isinstance(got, Rejection):
            yield got
            return
        entity, generic = got.entity, got.query
        mine = [p for p in ctx.relevant_passages() if about(p, entity.text)]
        if not mine:
            yield ctx.reject(method, f"no relevant passage mentions '{entity.text}'", generic)
            return
        rng = ctx.rng(method)
        pair = pair_id(ctx, method)
        own_docs = [p.as_document() for p in mine[:3]]
        resolution = {
            "source": "documents",
            "turn_index": None,
            "document_id": own_docs[0]["id"],
            "referent": entity.text,
            "resolved_query": ctx.standalone,
        }
        # The passages settle the generic words only with the turn's own history before them: with no history, one
        # thing in passages found for the named question says nothing of what the vague one meant.
        if not ctx.history:
            yield ctx.reject(method, "no history: the passages alone do not say what the generic words meant", generic)
        elif (skip := no_resolved_twin(ctx, got, method)) is not None:
            yield skip
        elif not tx.says(history_text(ctx.history), entity.text) and (others := [
                n for n in tx.names_in("\n".join(h["content"] for h in ctx.history[-2:])) if not tx.same_thing(n, entity.text)]):
            # 'What about state procurement in it?' after a talk about New York's OGS, over passages about California:
            # the user's named question switched topic, and only the passages say so (read 31, ce-123d51f50fcf87dd).
            yield ctx.reject(method, f"the history never names '{entity.text}' and its last exchange names '{others[0]}'; "
                                     "the passages alone would switch the topic", generic)
        elif not entity.head and (other := kd.user_named_instead(ctx.history, entity.text)):
            # 'What are the laws for pedestrians in it?' over California passages, after a talk the user began on New
            # York and the answers moved to California (reads 56 and 60, ce-a36729fdd62e2364).
            yield ctx.reject(method, f"the user's turns name {other}, never '{entity.text}'; '{generic}' may mean either",
                             generic)
        elif rival := _named_last(ctx, entity.text, entity.head):
            # 'Is the river important?' over Hudson River passages, right after a turn naming the Penobscot, the
            # Mississippi and the Missouri: what the search found, not what the talk points at (read 51, ce-561414994a9708f9).
            yield ctx.reject(method, f"the talk last named {rival} of the kind of '{entity.text}'; the passages alone "
                                     "do not settle the generic words", generic)
        else:
            yield Record(
                domain=ctx.conv.domain,
                setting="post_retrieval",
                history=ctx.history,
                query=generic,
                documents=own_docs,
                needs_clarification=False,
                category="hard_negative",
                interpretations=[ctx.standalone],
                target=clear_target(),
                resolution=dict(resolution),
                pair_id=pair,
                provenance=ctx.provenance(method, version, docs=[ctx.conv.id]),
            )
        partners = ctx.partners
        rivals = _conversation_rivals(ctx, got, mine, partners) + _aspect_rivals(ctx, got, mine, partners)
        rivals = [(without_possessive(name), passages, other) for name, passages, other in rivals]
        rivals = [r for i, r in enumerate(rivals) if not any(_one_thing(r[0], o[0]) for o in rivals[:i])]
        if not rivals:
            yield ctx.reject(method, "no passage in the block answers the same question about something else", generic)
            return
        rng.shuffle(rivals)
        chosen = rivals[: rng.choice([1, 1, 2, 3])]
        docs = [p.as_document() for p in mine[:2]]
        for _, passages, _ in chosen:
            docs.extend(p.as_document() for p in passages[:2])
        rng.shuffle(docs)
        names = distinct([entity.text] + [name for name, _, _ in chosen])
        rng.shuffle(names)
        head = entity.head or "topic"
        question, pattern = clarification("passages", rng, options=names, head=head, heads=tx.plural(head))
        interpretations = [ctx.standalone] + [with_referent(got, n) for n, _, _ in chosen]
        yield Record(
            domain=ctx.conv.domain,
            setting="post_retrieval",
            history=[],
            query=generic,
            documents=docs,
            needs_clarification=True,
            category="multiple_interpretations",
            interpretations=interpretations,
            target={"clarification": question},
            clarification_pattern=pattern,
            pair_id=pair,
            provenance=ctx.provenance(method, version, docs=[ctx.conv.id] + [o.conv.id for _, _, o in chosen]),
        )


def _named_last(ctx: TurnContext, name: str, head: str | None) -> str | None:
    """Another thing of the entity's kind that the latest exchange naming that kind says (`kinds.named_instead`)."""
    kind = head or tx.kind_of(name, [])
    others = kd.named_instead(ctx.history, name, kind) if kind else []
    return others[0] if others else None


def without_possessive(name: str) -> str:
    """"Jupiter's", as a partner turn says it, is Jupiter: a reading names the thing (read 44, ce-d29cb89395b6f6c5).
    "Shakespeare's plays" keeps its owner."""
    return re.sub(r"['’]s$", "", name.strip())


def _one_thing(a: str, b: str) -> bool:
    """One names the other, or both are aliases of one thing ('Covid' / 'COVID-19': one reading; read 32)."""
    return tx.mentions_any(a, b) or tx.mentions_any(b, a) or tx.same_thing(a, b)


def _query_says(got: Generalized, name: str) -> bool:
    """The generic query already says words of the rival's name: 'the mountains in North Carolina' is not read as
    'the Climate of North Carolina in North Carolina' (read 43, ce-06444df9bafca0b6)."""
    head = {tx.stem(got.entity.head)} if got.entity.head else set()
    return bool((tx.content_stems(name) - head) & tx.content_stems(got.query))


def _same_kind(got: Generalized, name: str, passages: list[Passage]) -> bool:
    """A rival reading names a thing of the entity's kind: with a kind phrase ('the mountains'), none of another
    kind; with a name of a known kind, one of that kind: 'sport in America' is not read as 'in American Football',
    nor 'getting Covid' as 'getting Identity Theft Awareness' (read 32)."""
    theirs = tx.kind_of(name, [p.title + "\n" + p.text for p in passages])
    if got.entity.head:
        return theirs is None or theirs == got.entity.head
    mine = tx.kind_of(got.entity.text, [])
    return mine is None or theirs == mine


def _conversation_rivals(ctx: TurnContext, got: Generalized, mine: list[Passage], partners: list[TurnContext]) -> list[Rival]:
    """Other things the same conversation asked about (Roth IRA vs 401(k)), with their passages:
    a generic question over both sets of passages has both readings."""
    out = []
    for other in partners:
        if other.conv.id != ctx.conv.id:
            continue
        ps = other.relevant_passages()
        e = tx.key_entity(other.standalone, [q.title for q in ps], [q.text for q in ps])
        if e is None or not good_name(e.text) or (got.entity.head and e.head != got.entity.head) or not _same_kind(got, e.text, ps):
            continue
        if tx.counted_before(other.standalone[: e.start]):
            continue  # 'the most popular Shakespearean play' names no play (read 55)
        if _one_thing(e.text, got.entity.text) or _query_says(got, e.text):
            continue
        theirs = [p for p in ps if p not in mine and about(p, e.text) and not about(p, got.entity.text)]
        if theirs:
            out.append((e.text, theirs, other))
    return out


def _aspect_rivals(ctx: TurnContext, got: Generalized, mine: list[Passage], partners: list[TurnContext]) -> list[Rival]:
    """Passages in the block that answer the same generic question about something else.

    'What is the speed limit in it?' is ambiguous when the passages give the speed limit of New
    York and of California: a rival passage must contain most of the query's remaining words,
    must not be about the entity, and must have a name (its title, or the entity its turn asked about).
    """
    need = tx.content_stems(got.query) - tx.content_stems(got.generic) - tx.anaphora()
    if len(need) < 2:
        return []
    scored = []
    for other in partners:
        other_entity = None
        for p in other.relevant_passages():
            if p in mine or about(p, got.entity.text):
                continue
            have = tx.content_stems(p.title + "\n" + p.text)
            overlap = len(need & have) / len(need)
            if overlap < 0.75:
                continue
            name = title_name(p.title) if p.title else ""
            if not name:
                if other_entity is None:
                    ps = other.relevant_passages()
                    other_entity = tx.key_entity(other.standalone, [q.title for q in ps], [q.text for q in ps]) or False
                name = other_entity.text if other_entity else ""
            if not name or not good_name(name) or _one_thing(name, got.entity.text) or _query_says(got, name):
                continue
            if not tx.mentions_any(p.title + "\n" + p.text, name):
                continue
            if not _same_kind(got, name, [p]):
                continue  # 'the mountains in North Carolina' are not read as the American Revolution
            if got.entity.head and tx.kind_of(name, [p.title + "\n" + p.text]) is None and (
                    tx.stem(got.entity.head) not in tx.content_stems(p.title + "\n" + p.text)
                    or re.search(r"[a-z]{3}ing$", name)):
                # A title of no known kind, over a passage that never says the kind or naming an activity: 'my NASA
                # Impacts' and 'my Motor Boating' were readings of 'my certificate' (read 69, ce-ddef5fc05a2bd90a).
                continue
            scored.append((-overlap, name, p.id, p, other))
    scored.sort(key=lambda x: (x[0], x[1], x[2]))
    out: list[Rival] = []
    for _, name, _, p, other in scored:
        if not any(_one_thing(name, o[0]) for o in out):
            out.append((name, [p], other))
    return out
