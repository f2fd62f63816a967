"""Offline rule-based generators. Each is a named, versioned function over one user turn.

A generator returns Records and Rejections; every rejection carries the self-check that failed.
Randomness comes from `TurnContext.rng(method)`, seeded by (seed, conversation, turn, method),
so a record never depends on the order in which turns are processed.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

from builder.conversation import Conversation, Passage
from builder.record import Record, clear_target
from builder.synthesize import text as tx
from builder.synthesize.clarify import clarification


@dataclass
class Rejection:
    method: str
    reason: str
    conversation_id: str
    turn: int
    query: str


@dataclass
class TurnContext:
    """One user turn with everything a generator may look at."""

    conv: Conversation
    turn: int  # 1-based user turn number
    index: int  # index into conv.turns
    seed: int
    source_dataset: str
    donors: list[Conversation]  # same-block conversations whose histories may be stitched on
    block_entities: list[tuple[str, str, int]] = field(default_factory=list)  # (entity, conv id, turn)

    @property
    def query(self) -> str:
        return self.conv.turns[self.index].text

    @property
    def rewrite(self) -> str | None:
        return self.conv.turns[self.index].rewrite

    @property
    def standalone(self) -> str:
        """The turn's standalone form: the human rewrite, else the turn itself."""
        return self.rewrite or self.query

    @property
    def history(self) -> list[dict[str, str]]:
        return history_of(self.conv, self.index)

    @property
    def passages(self) -> list[Passage]:
        return self.conv.turns[self.index].passages

    def relevant_passages(self) -> list[Passage]:
        marked = [p for p in self.passages if p.relevant]
        return marked or [p for p in self.passages if p.relevant is None]

    def rng(self, method: str) -> random.Random:
        key = f"{self.seed}|{self.conv.id}|{self.turn}|{method}".encode()
        return random.Random(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))

    def provenance(self, method: str, version: str, history_source: dict | None = None, docs: list[str] | None = None) -> dict:
        prov = {
            "source_dataset": self.source_dataset,
            "conversation_id": self.conv.id,
            "turn": self.turn,
            "method": method,
            "method_version": version,
            "seed": self.seed,
            "label_source": "generator",
        }
        if history_source is not None:
            prov["history_source"] = history_source
        if docs:
            prov["document_sources"] = sorted(set(docs))
        return prov

    def reject(self, method: str, reason: str, query: str | None = None) -> Rejection:
        return Rejection(method, reason, self.conv.id, self.turn, query or self.query)


def history_of(conv: Conversation, index: int) -> list[dict[str, str]]:
    return [{"role": t.role, "content": t.text} for t in conv.turns[:index]]


def history_text(history: list[dict[str, str]]) -> str:
    return "\n".join(h["content"] for h in history)


def donor_history(
    ctx: TurnContext, rng: random.Random, empty_share: float = 0.25, avoid: Callable[[str], bool] | None = None
) -> tuple[list[dict], dict] | None:
    """An unrelated history: a prefix of a block-mate conversation, or none at all.

    `avoid(text)` rejects a history that would resolve the query; up to three donors are tried,
    then the empty history (which resolves nothing) is used."""
    usable = [d for d in ctx.donors if len(d.user_turn_indices()) >= 2]
    if not usable or rng.random() < empty_share:
        return [], {"conversation_id": "", "turns": 0}
    rng.shuffle(usable)
    for donor in usable[:3]:
        user_idx = donor.user_turn_indices()
        cut = user_idx[rng.randint(1, min(2, len(user_idx) - 1))]  # one or two full exchanges
        history = history_of(donor, cut)
        if avoid is None or not avoid(history_text(history)):
            return history, {"conversation_id": donor.id, "turns": cut}
    return [], {"conversation_id": "", "turns": 0}


def unrelated_contexts(
    ctx: TurnContext, rng: random.Random, avoid: Callable[[str], bool], empty_share: float = 1.0
) -> list[tuple[list[dict], dict]]:
    """An unrelated history from the block and, for `empty_share` of the turns, no history at all too."""
    first = donor_history(ctx, rng, empty_share=0.0, avoid=avoid)
    empty = ([], {"conversation_id": "", "turns": 0})
    if first[0] and (empty_share >= 1.0 or rng.random() < empty_share):
        return [first, empty]
    return [first]


def topic_of(history: list[dict[str, str]]) -> str | None:
    """A name for what an unrelated history is about: its first named entity."""
    for h in history:
        if h["role"] == "user":
            found = [e.text for e in tx.entities(h["content"])]
            if found:
                return found[0]
    return None


def referent_in(span: str, text: str) -> str | None:
    """Trim `span` to the words that `text` contains ('size of the Sun' -> 'Sun')."""
    toks = tx.words(span)
    have = tx.content_stems(text)
    hits = [i for i, w in enumerate(toks) if w.lower() not in tx.stopwords() and tx.stem(w) in have]
    if not hits:
        return None
    return " ".join(toks[hits[0] : hits[-1] + 1])


def resolving_turn(history: list[dict[str, str]], phrase: str) -> int | None:
    """Index of the latest history turn that mentions `phrase`."""
    for i in range(len(history) - 1, -1, -1):
        if tx.mentions(history[i]["content"], phrase):
            return i
    return None


def pick_pattern_options(ctx: TurnContext, head: str, exclude: str) -> list[str]:
    """Other entities of the same kind, from this conversation and its block-mates."""
    seen = {tx.stem(w) for w in tx.words(exclude)}
    out: list[str] = []
    for name, _, _ in ctx.block_entities:
        if tx.head_of(name) == head and not ({tx.stem(w) for w in tx.words(name)} <= seen) and name not in out:
            out.append(name)
    return out


# --- generators -------------------------------------------------------------------------------


def _resolved_by_history(
    ctx: TurnContext, query: str, where: int | None, referent: str, resolved: str, pair: str, method: str, version: str
) -> Record:
    """A hard negative: `query` after the turn's own history, whose turn `where` names `referent`."""
    return Record(
        domain=ctx.conv.domain,
        setting="pre_retrieval",
        history=ctx.history,
        query=query,
        documents=[],
        needs_clarification=False,
        category="hard_negative",
        interpretations=[resolved],
        target=clear_target(),
        resolution={"source": "history", "turn_index": where, "document_id": None, "referent": referent, "resolved_query": resolved},
        pair_id=pair,
        provenance=ctx.provenance(method, version),
    )


def _fuzzy_names(query: str, referent: str) -> bool:
    """A misspelled mention still names the referent ('Carollina')."""
    from rapidfuzz import fuzz

    have = [w.lower() for w in tx.words(query) if len(w) > 3]
    need = [w.lower() for w in tx.words(referent) if w.lower() not in tx.stopwords() and len(w) > 3]
    return any(fuzz.ratio(n, h) >= 85 for n in need for h in have)


def _kind_of(referent: str) -> str:
    head = tx.head_of(referent)
    return head or "one"


def followup_twins(ctx: TurnContext) -> Iterator[Record | Rejection]:
    """MTRAG follow-ups that lean on the history: the turn in context is a hard negative; the same
    words stitched after an unrelated (or empty) history need clarification."""
    method, version = "followup_twins", "4"
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
    pair = "pair-" + hashlib.sha256(f"{ctx.conv.id}|{ctx.turn}|{method}".encode()).hexdigest()[:12]
    negative = _resolved_by_history(ctx, ctx.query, resolving_turn(history, referent), referent, ctx.rewrite, pair, method, version)
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
        yield _unresolved_followup(ctx, rng, stitched, source, referent, anaphor, fragment, pair, method, version)


def _unresolved_followup(ctx, rng, stitched, source, referent, anaphor, fragment, pair, method, version) -> Record:
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
        provenance=ctx.provenance(method, version, history_source=source),
    )


@dataclass
class Generalized:
    entity: tx.Entity
    query: str  # the standalone query with the entity made generic
    generic: str  # what replaced it: "the river" or a pronoun
    category: str  # underspecified_entity (generic noun) or unresolved_reference (pronoun)


def _generalize(ctx: TurnContext, method: str) -> Generalized | Rejection:
    """Make the standalone query's key entity generic: 'the Penobscot River' -> 'the river', else -> 'it'."""
    passages = ctx.relevant_passages()
    entity = tx.key_entity(ctx.standalone, [p.title for p in passages], [p.text for p in passages])
    if entity is None:
        return ctx.reject(method, "no key entity in the standalone query", ctx.standalone)
    if "®" in entity.text or "™" in entity.text:
        return ctx.reject(method, f"'{entity.text}' is a trademark string", ctx.standalone)
    if entity.head:
        generic, category = tx.generic_phrase(entity), "underspecified_entity"
    elif tx.modifies_noun(ctx.standalone, entity):
        return ctx.reject(method, f"'{entity.text}' modifies a noun; a pronoun there is ungrammatical", ctx.standalone)
    else:
        generic, category = tx.pronoun_for(ctx.standalone, entity), "unresolved_reference"
    query = tx.replace_entity(ctx.standalone, entity, generic)
    first = tx.words(ctx.standalone)[:1]
    if first and first[0].lower() in tx.stopwords() and tx.words(query)[:1] != first:
        return ctx.reject(method, f"generalizing '{entity.text}' would swallow '{first[0]}'", ctx.standalone)
    if query == ctx.standalone or tx.mentions_any(query, entity.text) and not entity.head:
        return ctx.reject(method, f"could not generalize '{entity.text}'", ctx.standalone)
    if len(tx.content_stems(query) - {entity.head}) < (1 if entity.head else 2):
        # 'Could you explain what it is?' fits every conversation and would tie them all into one split group.
        return ctx.reject(method, f"too little left after removing '{entity.text}'", ctx.standalone)
    return Generalized(entity, query, generic, category)


def _with(g: Generalized, name: str) -> str:
    """The generic query read with another referent."""
    if g.entity.head:
        return tx.replace_phrase(g.query, g.generic, name) or f"{g.query} ({name})"
    return f"{g.query} (meaning {name})"


def entity_twins(ctx: TurnContext) -> Iterator[Record | Rejection]:
    """'... the Penobscot River ...' -> '... the river ...': ambiguous after an unrelated history,
    resolved after the turn's own history when that history names the entity."""
    method, version = "entity_twins", "4"
    got = _generalize(ctx, method)
    if isinstance(got, Rejection):
        yield got
        return
    entity, generic = got.entity, got.query
    rng = ctx.rng(method)
    pair = "pair-" + hashlib.sha256(f"{ctx.conv.id}|{ctx.turn}|{method}".encode()).hexdigest()[:12]
    options = pick_pattern_options(ctx, entity.head, entity.text) if entity.head else []

    def resolves(text: str) -> bool:
        return tx.mentions_any(text, entity.text) or bool(entity.head and entity.head in tx.content_stems(text))

    # After an unrelated history and after none: two contexts in which the generic words stay open.
    for stitched, source in unrelated_contexts(ctx, rng, resolves):
        topic = topic_of(stitched)
        if entity.head:
            alt = options[0] if options else f"another {entity.head}"
            shown = [entity.text] + options[:6]
            rng.shuffle(shown)
            question, pattern = clarification(
                "entity", rng, options=shown if len(shown) >= 2 else [], head=entity.head, heads=tx.plural(entity.head)
            )
            second = _with(got, alt)
        else:
            slots = {"anaphor": got.generic}
            if topic:
                slots["topic"] = topic
            question, pattern = clarification("reference", rng, **slots)
            second = _with(got, topic or "something not mentioned yet")
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
    where = resolving_turn(own, entity.text)
    rivals = [o for o in options if tx.mentions(history_text(own), o)]
    if where is None:
        yield ctx.reject(method, f"entity '{entity.text}' not found in the turn's own history", generic)
    elif rivals and entity.head:
        yield ctx.reject(method, f"own history names another {entity.head}: {rivals[0]}", generic)
    else:
        yield _resolved_by_history(ctx, generic, where, entity.text, ctx.standalone, pair, method, version)


def fragment_twins(ctx: TurnContext) -> Iterator[Record | Rejection]:
    """A keyword fragment of the query without its entity ('annual fee?'): ill-formed on its own,
    clear right after a history that names the entity."""
    method, version = "fragment_twins", "3"
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
    pair = "pair-" + hashlib.sha256(f"{ctx.conv.id}|{ctx.turn}|{method}".encode()).hexdigest()[:12]
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
    yield _resolved_by_history(ctx, fragment, where, entity.text, ctx.standalone, pair, method, version)


def _distinct(names: list[str]) -> list[str]:
    """Drop names that repeat another one ('Covid' after 'COVID-19')."""
    out: list[str] = []
    for name in names:
        if not any(tx.mentions_any(name, o) or tx.mentions_any(o, name) for o in out):
            out.append(name)
    return out


def _about(passage: Passage, phrase: str) -> bool:
    return tx.mentions(passage.title + "\n" + passage.text, phrase)


def passage_twins(ctx: TurnContext, partners: list[TurnContext]) -> Iterator[Record | Rejection]:
    """Post-retrieval: 'the river' with passages about two rivers needs clarification; with passages
    about one river it is clear."""
    method, version = "passage_twins", "5"
    got = _generalize(ctx, method)
    if isinstance(got, Rejection):
        yield got
        return
    entity, generic = got.entity, got.query
    mine = [p for p in ctx.relevant_passages() if _about(p, entity.text)]
    if not mine:
        yield ctx.reject(method, f"no relevant passage mentions '{entity.text}'", generic)
        return
    rng = ctx.rng(method)
    pair = "pair-" + hashlib.sha256(f"{ctx.conv.id}|{ctx.turn}|{method}".encode()).hexdigest()[:12]
    own_docs = [p.as_document() for p in mine[:3]]
    resolution = {
        "source": "documents",
        "turn_index": None,
        "document_id": own_docs[0]["id"],
        "referent": entity.text,
        "resolved_query": ctx.standalone,
    }
    # The passages settle the generic words, with or without the turn's own history before them.
    for history in ([[], ctx.history] if ctx.history else [[]]):
        yield Record(
            domain=ctx.conv.domain,
            setting="post_retrieval",
            history=history,
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
    rivals = _conversation_rivals(ctx, got, mine, partners) + _aspect_rivals(ctx, got, mine, partners)
    rivals = [r for i, r in enumerate(rivals) if all(not tx.mentions_any(r[0], o[0]) for o in rivals[:i])]
    if not rivals:
        yield ctx.reject(method, "no passage in the block answers the same question about something else", generic)
        return
    rng.shuffle(rivals)
    chosen = rivals[: rng.choice([1, 1, 2, 3])]
    docs = [p.as_document() for p in mine[:2]]
    for _, passages, _ in chosen:
        docs.extend(p.as_document() for p in passages[:2])
    rng.shuffle(docs)
    names = _distinct([entity.text] + [name for name, _, _ in chosen])
    rng.shuffle(names)
    head = entity.head or "topic"
    question, pattern = clarification("passages", rng, options=names, head=head, heads=tx.plural(head))
    interpretations = [ctx.standalone] + [_with(got, n) for n, _, _ in chosen]
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


def _title_name(title: str) -> str:
    """'Yale University - Admissions | Wiki' -> 'Yale University'."""
    return re.split(r"\s+[-|:–]\s+|\s*\|\s*", title.strip())[0].strip()


def _good_name(name: str) -> bool:
    """A rival reading must be named like a thing: capitalized, short, not a clause ('How did ancient')."""
    toks = tx.words(name)
    return (
        0 < len(toks) <= 6
        and any(t[:1].isupper() for t in toks)
        and toks[0].lower() not in tx.lexicon()["wh_words"]
        and toks[0].lower() not in tx.stopwords()
        and not all(t.isdigit() for t in toks)
    )


def _conversation_rivals(
    ctx: TurnContext, got: Generalized, mine: list[Passage], partners: list[TurnContext]
) -> list[tuple[str, list[Passage], TurnContext]]:
    """Other things the same conversation asked about (Roth IRA vs 401(k)), with their passages:
    a generic question over both sets of passages has both readings."""
    out = []
    for other in partners:
        if other.conv.id != ctx.conv.id:
            continue
        ps = other.relevant_passages()
        e = tx.key_entity(other.standalone, [q.title for q in ps], [q.text for q in ps])
        if e is None or not _good_name(e.text) or (got.entity.head and e.head != got.entity.head):
            continue
        if tx.mentions_any(e.text, got.entity.text) or tx.mentions_any(got.entity.text, e.text):
            continue
        theirs = [p for p in ps if p not in mine and _about(p, e.text) and not _about(p, got.entity.text)]
        if theirs:
            out.append((e.text, theirs, other))
    return out


def _aspect_rivals(
    ctx: TurnContext, got: Generalized, mine: list[Passage], partners: list[TurnContext]
) -> list[tuple[str, list[Passage], TurnContext]]:
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
            if p in mine or _about(p, got.entity.text):
                continue
            have = tx.content_stems(p.title + "\n" + p.text)
            overlap = len(need & have) / len(need)
            if overlap < 0.75:
                continue
            name = _title_name(p.title) if p.title else ""
            if not name:
                if other_entity is None:
                    ps = other.relevant_passages()
                    other_entity = tx.key_entity(other.standalone, [q.title for q in ps], [q.text for q in ps]) or False
                name = other_entity.text if other_entity else ""
            if not name or not _good_name(name) or tx.mentions_any(name, got.entity.text) or tx.mentions_any(got.entity.text, name):
                continue
            if not tx.mentions_any(p.title + "\n" + p.text, name):
                continue
            scored.append((-overlap, name, p.id, p, other))
    scored.sort(key=lambda x: (x[0], x[1], x[2]))
    out: list[tuple[str, list[Passage], TurnContext]] = []
    for _, name, _, p, other in scored:
        if all(not tx.mentions_any(name, o[0]) and not tx.mentions_any(o[0], name) for o in out):
            out.append((name, [p], other))
    return out


def standalone_clear(ctx: TurnContext, post_share: float) -> Iterator[Record | Rejection]:
    """Easy negatives: the fully specified query, before or after retrieval. Half of the later turns
    are asked with no history, as in a fresh chat: otherwise an empty history would almost always mean
    'needs clarification' and a model could learn that shortcut instead of reading the query."""
    method, version = "standalone_clear", "4"
    query = ctx.standalone
    if tx.words(query) and any(w.lower() in PERSONAL_PRONOUNS for w in tx.words(query)):
        # 'wasn't he in captain america?': a first turn can be ambiguous too; it is no easy negative.
        yield ctx.reject(method, "standalone form contains a pronoun", query)
        return
    rng = ctx.rng(method)
    history = ctx.history if rng.random() < 0.5 else []
    docs = [p.as_document() for p in ctx.relevant_passages()[:3]]
    settings = ["pre_retrieval"] + (["post_retrieval"] if docs and rng.random() < post_share else [])
    for setting in settings:
        post = setting == "post_retrieval"
        yield Record(
            domain=ctx.conv.domain,
            setting=setting,
            history=history,
            query=query,
            documents=docs if post else [],
            needs_clarification=False,
            category="clear",
            interpretations=[query],
            target=clear_target(),
            provenance=ctx.provenance(method, version, docs=[ctx.conv.id] if post else None),
        )


PERSONAL_PRONOUNS = frozenset({"it", "they", "them", "he", "him", "his", "she", "her", "these", "those"})

GENERATORS: dict[str, Callable] = {
    "followup_twins": followup_twins,
    "entity_twins": entity_twins,
    "fragment_twins": fragment_twins,
    "passage_twins": passage_twins,
    "standalone_clear": standalone_clear,
}
METHOD_VERSIONS = {"followup_twins": "4", "entity_twins": "4", "fragment_twins": "3", "passage_twins": "5", "standalone_clear": "4"}
