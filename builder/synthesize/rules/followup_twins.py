"""MTRAG follow-ups that lean on their history: a hard negative in context, a positive after another history."""

from __future__ import annotations

import re
from typing import Iterator

from builder.record import Record, clear_target
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import clarification, named_in
from builder.synthesize.context import (
    TurnContext, checked_retrieved_share, donor_history, history_text, pair_id, referent_in, resolved_by_history,
    resolving_turn, unrelated_contexts, with_retrieval,
)


def _no_switch(ctx: TurnContext, record: Record) -> bool:
    """Asked in its own conversation (the hard negative, the same-topic positives) or in a fresh chat."""
    source = record.provenance.get("history_source")
    return not record.history or source is None or source.get("conversation_id") == ctx.conv.id


def _group(referent: str) -> bool:
    """A plural common noun ('countries'): the pronoun stands for the whole group, not for one of its members."""
    ws = tx.words(referent)
    return bool(ws) and all(w[:1].islower() for w in ws) and tx.singular(ws[-1]) not in (None, ws[-1].lower())


def _kind_only_modifies(referent: str, kind: str | None) -> bool:
    """'film adaptations' is no film: the kind word modifies another head, so a film's name is no reading of it."""
    ws = tx.words(referent)
    if not kind or not ws or not all(w[:1].islower() for w in ws):
        return False
    head = ws[-1].lower()
    return kind in (w.lower() for w in ws[:-1]) and kind not in (head, tx.singular(head))


_RANKING = r"(?:most|least|best|worst|top|largest|biggest|oldest|newest|highest|lowest|greatest|smallest|longest|fastest)"


def _ranked(rewrite: str, referent: str) -> bool:
    """'the most popular women's football league' ranks the things of a kind: no one name of it reads it. So does a
    referent that starts with the ranking ('longest river in North' read 'Which is the Hudson River America, ...?',
    read 50, ce-cc6847a7d6990efb)."""
    if re.fullmatch(_RANKING, (tx.words(referent) or [""])[0].lower()):
        return True
    if not all(w[:1].islower() for w in tx.words(referent)):
        return False
    return bool(re.search(rf"(?i)\b{_RANKING}\s+(?:[\w'’-]+\s+){{0,2}}{re.escape(referent)}", rewrite))


def _named_instead(history: list[dict[str, str]], query: str, rewrite: str, referent: str, texts: list[str]) -> str | None:
    """A thing of the kind of a name in the referent that the latest exchange naming that kind says besides or
    instead of it (`kinds.named_instead`); None when the talk last named that one alone, or the query names it.
    A thing the rewrite names too is no other ('Defense of Marriage Act' for the span 'Act 1996' of '... in the
    Defense of Marriage Act 1996')."""
    for entity in tx.entities(referent):
        name = tx.clean_name(entity.text)
        kind = tx.kind_of(name, texts)
        if not kind or tx.mentions(query, name) or tx.says(query, name) or tx.content_stems(name) & tx.content_stems(query):
            continue
        others = [n for n in kd.named_instead(history, name, kind) if not tx.mentions(rewrite, n)]
        if others:
            return others[0]
    return None


def _kept_open(query: str, rewrite: str, history: list[dict[str, str]]) -> str | None:
    """A kind phrase the human question says and its rewrite keeps, whose kind word the talk never says: 'the city'
    of 'What are the suppliers for the city?' -> 'Who are the suppliers of the city's groundwater?' after a talk on
    groundwater (read 53, ce-3e1d0130c26e7fc2). The rewrite resolved something else; nothing settles this phrase."""
    phrase = tx.unresolved_kind_phrase(rewrite)
    if not phrase or phrase.lower() not in query.lower():
        return None
    kind = tx.words(phrase)[-1].lower()
    said = tx.content_stems(history_text(history))
    return None if tx.stem(kind) in said or (tx.singular(kind) or kind) in said else phrase


def _fuzzy_names(query: str, referent: str) -> bool:
    """A misspelled mention still names the referent ('Carollina')."""
    from rapidfuzz import fuzz

    have = [w.lower() for w in tx.words(query) if len(w) > 3]
    need = [w.lower() for w in tx.words(referent) if w.lower() not in tx.stopwords() and len(w) > 3]
    return any(fuzz.ratio(n, h) >= 85 for n in need for h in have)


@register
class FollowupTwins:
    """MTRAG follow-ups that lean on the history: the turn in context is a hard negative; the same
    words stitched after an unrelated (or empty) history need clarification."""

    name = "followup_twins"
    version = "29"
    describe = ("A human MTRAG follow-up whose standalone rewrite names what its pronoun or ellipsis leaves out: "
                "kept in its own conversation it is a hard negative resolved by the turn that names the referent (when "
                "the rewrite adds only a verb, no thing, the follow-up is a clear negative there, unless it keeps a pronoun or a bare 'the next'; a phrase "
                "follow-up whose rewrite adds more than the referent is no hard negative, nor is a one-word fragment, nor one whose "
                "rewrite names a thing when the talk last named another of its kind). For "
                "a share of turns, the same words after another conversation's history (or none; none only, for a bare pronoun, which an unrelated history's topic would settle) are a topic-switch "
                "positive whose readings are the rewrite with names of the referent's kind from the block (its clarification asks openly: it names only candidates its history shows). With "
                "`rival_prefixes`, the same words also follow an earlier prefix of their own conversation whose last "
                "exchange names two or more things of the referent's kind (or none, and the turns before it two or more; none of them what the "
                "user keeps asking about, the user turns read as their rewrites): a same-topic positive read with them. "
                "With `retrieved_share`, that share of the records in their own chat or a fresh one is also asked post-retrieval, with the passages "
                "BM25 finds for the follow-up's own words in the domain's pool (never the turn's own); the label stands.")

    def __init__(self, positive_share: float = 1.0, empty_share: float = 1.0, rival_prefixes: int = 0,
                 histories: int = 1, retrieved_share: float = 0.0) -> None:
        # The follow-up in its own chat or a fresh one also over the passages BM25 finds for its own words (topic
        # switches stay pre-retrieval: they are sized to a quarter of the stitched positives).
        self.retrieved_share = checked_retrieved_share("followup_twins", retrieved_share)
        self.needs_corpus = retrieved_share > 0
        self.histories = histories  # block-mate histories tried per turn (each a record), besides the fresh chat
        self.positive_share = positive_share  # share of turns that also get the stitched positives
        self.empty_share = empty_share  # share of those that get a no-history positive too
        self.rival_prefixes = rival_prefixes  # own earlier prefixes whose last exchange names 2+ of the kind

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        for out in self._generate(ctx):
            yield out
            if isinstance(out, Record) and _no_switch(ctx, out):
                copy = with_retrieval(ctx, out, self.retrieved_share)
                if copy is not None:
                    yield copy

    def _generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        method, version = self.name, self.version
        if ctx.turn == 1 or not ctx.rewrite:
            return
        if tx.not_understood(ctx.answer):
            # 'any example of code for cart ahh sauce rather?': the assistant could not tell what was asked (read 25).
            yield ctx.reject(method, "the assistant's reply says it did not understand the turn")
            return
        history = ctx.history
        span = tx.added_referent(ctx.query, ctx.rewrite)
        if not span and history and tx.added_referent(ctx.query, ctx.rewrite, things_only=False):
            if tx.bare_pronoun(ctx.query):
                # 'What is it?' -> 'What is it that can be cleaned up?': the rewrite keeps the pronoun, so nothing
                # says what it is; the query is not clear as it stands (read 23, ce-0a7c210ec386a4d7).
                yield ctx.reject(method, f"the rewrite keeps '{tx.bare_pronoun(ctx.query)}' and names nothing for it")
                return
            if tx.bare_ordinal(ctx.query):
                # 'So what is the next after The Office?': 'the next' of a ranking said before, which the rewrite
                # leaves as it is; neither clear as it stands nor settled by a named thing (reads 45, 47: ce-e0a2112ad6d847ca)
                yield ctx.reject(method, f"'{tx.bare_ordinal(ctx.query)}' has no noun, and the rewrite names nothing for it")
                return
            # 'Is there a cure for HIV?' -> '... available for HIV?': the rewrite adds only a verb, no thing the
            # history would settle; the human question is clear as it stands.
            yield clear_followup(ctx, method, version)
            return
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
        kind = tx.kind_of(referent, [p.title + "\n" + p.text for p in ctx.passages])
        pronoun = tx.bare_pronoun(ctx.query)
        # A thing the question names itself ('if Germany stops bailing them out') is no candidate for its pronoun; the
        # user turns read as their rewrites, as for the same-topic positives ('Why it fall?' in a Byzantine Empire talk).
        asked = kd.asked_before(ctx, ctx.index)
        rivals = [r for r in kd.pronoun_rivals(history, kind, asked) if not tx.says(ctx.query, r)] if kind and pronoun else []
        if len(rivals) >= 2:
            # Recency is not resolution: the rule that makes an earlier prefix a same-topic positive leaves this
            # pronoun open after its own history too ('Why it fall?' with the Roman and the Byzantine Empire both
            # in view), so the human turn is no clean hard negative.
            yield ctx.reject(method, f"its own history leaves '{pronoun}' open between {' and '.join(rivals[:2])}; "
                                     "no hard negative")
            negative = None
        if negative is not None and fragment and not anaphor and len(tx.words(ctx.query)) < 2:
            # 'Solutions' after a talk of virtualization on IBM Cloud: one word leaves open what about it, whatever
            # the history says (fragment_twins' rule for its own fragments; read 50, ce-011e8d2abf079af7).
            yield ctx.reject(method, "a one-word fragment is no resolved follow-up; no hard negative")
            negative = None
        texts = [p.title + "\n" + p.text for p in ctx.passages]
        if negative is not None and not pronoun and (other := _named_instead(history, ctx.query, ctx.rewrite, referent, texts)):
            # 'Fines and penalties' rewritten '... traffic violations in New York' after four turns on California:
            # the rewriter's pick, not what the talk last said (read 50, ce-9701dbecbdb69ca0).
            yield ctx.reject(method, f"the talk last named {other}, not the rewrite's referent; no hard negative")
            negative = None
        if negative is not None and (open_phrase := _kept_open(ctx.query, ctx.rewrite, history)):
            yield ctx.reject(method, f"the rewrite keeps '{open_phrase}', which the talk never says; no hard negative")
            negative = None
        # tx.says knows aliases: 'how did I get covid tho...' names COVID-19 (read 47, ce-97debe46d29261df)
        if tx.mentions_any(ctx.query, referent) or _fuzzy_names(ctx.query, referent) or tx.says(ctx.query, referent):
            if negative is not None:
                yield negative
            yield ctx.reject(method, f"query already names the referent '{referent}'")
            return
        extra = tx.content_stems(ctx.rewrite) - tx.content_stems(ctx.query) - tx.content_stems(referent)
        if negative is not None and not anaphor and len(extra) > 1 and not tx.opens_a_question(ctx.query):
            # 'Others in the past?' -> '... who have used carbon dioxide for similar purposes?': the history names
            # the referent, but the rest the rewrite adds is the human answerer's guess, not what the words say
            # (read 23, ce-380b247f16eebcc3).
            yield ctx.reject(method, f"the rewrite adds more than the referent ({', '.join(sorted(extra)[:3])}); "
                                     "no hard negative")
            negative = None
        if negative is not None and ctx.query.rstrip().endswith(("...", "…")) and not tx.is_question(ctx.query):
            # 'Oops, no return result...': a remark that trails off asks nothing its words say; the rewrite's question
            # is the rewriter's guess (read 25, ce-59cfd615787e66e8).
            yield ctx.reject(method, "the follow-up is a remark that trails off; no hard negative")
            negative = None
        if negative is not None:
            yield negative
        if _group(referent):
            # 'What happens if Germany stops bailing them out?': 'them' is the other countries together; a reading
            # naming one of them ('bailing out the other Spain') is no reading (read 25, ce-48046523812780f0).
            yield ctx.reject(method, f"the referent '{referent}' is a group; no reading names one of its members")
            return
        if not (anaphor or fragment or tx.is_elliptical(ctx.query)) and tx.entities(ctx.query):
            # 'Does Clipper have an antenna?' names its own topic: without the history it is arguably clear.
            yield ctx.reject(method, "query names a topic of its own; not a positive without its history")
            return
        if not (anaphor or fragment or tx.is_elliptical(ctx.query)) and not tx.is_question(ctx.query):
            # 'A horse, a horse, my kingdom for a horse!': a quote or a remark asks nothing to clarify.
            yield ctx.reject(method, "query is no question, and no pronoun, ellipsis or fragment; not a positive")
            return
        if _kind_only_modifies(referent, kind):
            # 'the film adaptations of Romeo and Juliet' read with series' names: 'Friends of Romeo and Juliet' (read 31).
            yield ctx.reject(method, f"the kind word '{kind}' only modifies the referent '{referent}'; no names read it")
            return
        if _ranked(ctx.rewrite, referent):
            # 'Which is the most popular NFL?' for 'the most popular women's football league' (read 32).
            yield ctx.reject(method, f"the rewrite ranks things of the kind ('{referent}'); no one name reads it")
            return
        if rng.random() >= self.positive_share:
            return
        if len(extra) > 1:
            # Its readings would carry what the rewrite took from the history: facts absent from the stitched record.
            yield ctx.reject(method, f"the rewrite adds more than the referent ({', '.join(sorted(extra)[:3])})")
            return
        names = kd.pool_of_kind(ctx, kind, query=ctx.rewrite, keep=referent) if kind else []
        readings = [r for r in (tx.substitute(ctx.rewrite, referent, n) for n in names) if r]
        if kind and self.rival_prefixes:
            yield from self._same_topic(ctx, referent, kind, anaphor, fragment, pair, full=negative is None)
        if not kind or len(readings) < 2:
            yield ctx.reject(method, f"fewer than two names of the kind of '{referent}' to read the query with")
            return
        # The same words after an unrelated history (and after none): a topic switch that leaves them open.
        avoid = lambda text: tx.mentions_any(text, referent) or bool(tx.named_of_kind(text, kind))  # noqa: E731
        contexts = unrelated_contexts(ctx, rng, avoid, empty_share=self.empty_share)
        if pronoun:
            # 'What is it called outside of the USA?' after a talk of aviation photography asks about that: a bare
            # pronoun takes the unrelated history's topic. Only the fresh chat leaves it open.
            yield ctx.reject(method, f"'{pronoun}' after an unrelated history reads as about that history's topic")
            contexts = [(h, s) for h, s in contexts if not h]
        used = {s["conversation_id"] for _, s in contexts}
        for _ in range(self.histories - 1 if not pronoun else 0):  # more block-mates: same domain, other conversations
            more, source = donor_history(ctx, rng, empty_share=0.0, avoid=avoid)
            if more and source["conversation_id"] not in used:
                used.add(source["conversation_id"])
                contexts.append((more, source))
        for stitched, source in contexts:
            yield self._unresolved(ctx, rng, stitched, source, names, readings, kind, anaphor, fragment, pair)

    def _same_topic(self, ctx, referent, kind, anaphor, fragment, pair, full: bool = False) -> Iterator[Record | Rejection]:
        """The human follow-up asked earlier in its own conversation, where nothing recent singles out one of two
        or more things of the referent's kind (`kinds.pronoun_rivals`): same topic, several candidates. With
        `full`, its own full history (which leaves it open the same way) counts too."""
        found = 0
        # The full own history resolves it (that is the negative) unless it leaves the pronoun open as well.
        for cut, history in kd.own_prefixes(ctx)[0 if full else 1:]:
            if found >= self.rival_prefixes:
                break
            # 'Where does it originate from?' after 'What is it called outside of the USA?' and 'Can women play it?',
            # both rewritten with soccer: the user's topic, whatever the answers list (read 63, ce-76b8e09ec237e017)
            rivals = [r for r in kd.pronoun_rivals(history, kind, kd.asked_before(ctx, cut)) if not tx.says(ctx.query, r)]
            readings = [r for r in (tx.substitute(ctx.rewrite, referent, n) for n in rivals[:6]) if r]
            if len(rivals) < 2 or len(readings) != len(rivals[:6]) or kd.tied_by_query_names(ctx.query, history, rivals):
                continue
            if not any(tx.same_thing(r, referent) for r in rivals[:6]):
                # 'any awards' in a talk about The Office, after a prefix naming Arrested Development and 30 Rock:
                # the conversation's own topic is the reading people take (read 30, ce-3155d73b06640510).
                continue
            found += 1
            rng = ctx.rng(f"{self.name}|rivals|{cut}")
            yield self._unresolved(ctx, rng, history, {"conversation_id": ctx.conv.id, "turns": cut}, rivals[:6],
                                   readings, kind, anaphor, fragment, pair)

    def _unresolved(self, ctx, rng, stitched, source, names, readings, kind, anaphor, fragment, pair) -> Record:
        if fragment and not anaphor:
            category = "ill_formed"
        elif not anaphor and not tx.is_elliptical(ctx.query):
            category = "missing_parameter"  # no pronoun: the history supplied a detail the query leaves out
        else:
            category = "unresolved_reference"
        shown = named_in(names[: len(readings)], history_text(stitched))
        rng.shuffle(shown)
        question, pattern = clarification("kind", rng, options=shown, head=tx.kind_word(kind), heads=tx.plural(kind))
        return Record(
            domain=ctx.conv.domain,
            setting="pre_retrieval",
            history=stitched,
            query=ctx.query,
            documents=[],
            needs_clarification=True,
            category=category,
            interpretations=readings,
            target={"clarification": question},
            clarification_pattern=pattern,
            pair_id=pair,
            provenance=ctx.provenance(method=self.name, version=self.version, history_source=source),
        )


def clear_followup(ctx: TurnContext, method: str, version: str) -> Record:
    """The human follow-up after its own history, clear as it stands: a negative with nothing to resolve."""
    return Record(
        domain=ctx.conv.domain,
        setting="pre_retrieval",
        history=ctx.history,
        query=ctx.query,
        documents=[],
        needs_clarification=False,
        category="clear",
        interpretations=[ctx.query],
        target=clear_target(),
        provenance=ctx.provenance(method, version),
    )
