"""A pronoun with several candidate antecedents: 'Can you tell me about its virtualization?' right after a user
turn that named two things; the twin after a user turn that named only the true referent."""

from __future__ import annotations

from typing import Iterator

from builder.record import Record
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import clarification
from builder.synthesize.context import NO_HISTORY, TurnContext, also_retrieved, checked_retrieved_share, pair_id


def _answer_names_another(history: list[dict[str, str]], kind: str | None, own: str) -> bool:
    """The last exchange also names another thing of the kind ('Juno and Galileo' in the answer to a question
    about Juno): 'it' right after is no longer settled by the user's turn alone."""
    text = "\n".join(h["content"] for h in kd.last_exchange(history))
    return bool(kind) and any(not tx.same_thing(n, own) for n in tx.named_of_kind(text, kind))


@register
class PronounReference:
    name = "pronoun_reference"
    version = "27"
    describe = ("MTRAG's human standalone rewrite with its named referent made a pronoun ('Is Red Hat OpenShift "
                "virtualization ...' -> 'Can you tell me about its virtualization aspect?'), asked after a prefix "
                "of its own conversation where nothing recent singles out one of two or more things of its kind (the "
                "last exchange names two or more, or none and the turns before it two or more; not when one of them is what the user "
                "keeps asking about, the user turns read as their rewrites: 'Can women play it?' asks about soccer): an unresolved_reference "
                "positive whose readings and clarification name them (not when the names the question keeps go with one of them in "
                "the history: 'Did Juno and Galileo find cyclones on it?' is about Jupiter). After a last user turn that names only the "
                "referent (and an answer that names no other thing of its kind) it is the hard-negative twin, resolved by that turn. With `fresh_share`, that share of the pronoun questions is also asked in a fresh chat, where nothing is in view for the pronoun to mean: a positive read with names of its kind asked about in the block (else the domain), whose clarification asks openly. With `retrieved_share`, that share is also asked post-retrieval, with the "
                "passages BM25 finds for the question's own words in the domain's pool; the label stands."
                " Where the readings came from beyond the record (the block's names) and the passages name two or more "
                "things of the kind, the post-retrieval copy is read with those, and its clarification names them.")

    def __init__(self, prefixes: int = 1, later: bool = False, referents: int = 1, retrieved_share: float = 0.0,
                 fresh_share: float = 0.0) -> None:
        # Also asked in the post-retrieval setting, with the passages BM25 finds for the question's own words.
        self.retrieved_share = checked_retrieved_share("pronoun_reference", retrieved_share)
        self.needs_corpus = retrieved_share > 0
        self.prefixes = prefixes  # distinct own prefixes with two or more rivals that each give a positive
        self.later = later  # also prefixes past the turn (the question asked later, right after 2+ rivals)
        self.referents = referents  # named things of the standalone query each made a pronoun in turn
        self.fresh_share = fresh_share  # share of pronoun questions also asked with no history

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        if ctx.turn == 1 and not self.later:  # a first turn has only later prefixes
            return
        yield from kd.each_referent(ctx, self.name, self._one, need_kind=False, limit=self.referents)

    def _one(self, ctx: TurnContext, ref: kd.Referent, slot: int) -> Iterator[Record | Rejection]:
        kq = kd.make_kind_query(ctx, ref, self.name, pronoun=True)
        if isinstance(kq, Rejection):
            yield kq
            return
        yield from also_retrieved(ctx, self._records(ctx, ref, kq, slot), self.retrieved_share,
                                  reread=kd.passage_reader(ctx, kq, self.name))

    def _records(self, ctx: TurnContext, ref: kd.Referent, kq: kd.KindQuery, slot: int) -> Iterator[Record | Rejection]:
        method, version = self.name, self.version
        own = tx.clean_name(ref.name)
        positives: list[tuple[int, list[dict], list[str]]] = []
        negative = None
        for cut, history in (kd.later_prefixes(ctx) if self.later else []) + kd.own_prefixes(ctx):
            names = tx.names_in(kd.last_user(history))
            # 'cyclones on it' in 'Did Juno and Galileo find cyclones on it?' is neither Juno nor Galileo.
            asked = kd.asked_before(ctx, cut)  # the user turns as their rewrites read them ('Can women play soccer?')
            rivals = [r for r in (kd.pronoun_rivals(history, ref.kind, asked) if ref.kind else []) if not tx.says(kq.query, r)]
            tied = kd.tied_by_query_names(kq.query, history, rivals)
            if tied and len(rivals) >= 2:
                yield ctx.reject(method, f"the question's own names go with '{tied}' in the history", kq.query)
            elif len(positives) < self.prefixes and len(rivals) >= 2 and kd.agrees(kq.phrase, rivals):
                positives.append((cut, history, rivals))
            elif negative is None and cut <= ctx.index and len(names) == 1 and tx.same_thing(names[0], own) \
                    and not _answer_names_another(history, ref.kind, own):
                negative = (cut, history, names)
        pair = pair_id(ctx, method if slot == 0 else f"{method}|{slot}")  # its own pair: the pronoun query is other words than the kind-phrase query
        if not positives:
            yield ctx.reject(method, "no user turn of the conversation names two things the pronoun could mean", kq.query)
        for i, (cut, history, names) in enumerate(positives):
            rng = ctx.rng(method if i == 0 and slot == 0 else f"{method}|{slot}|{cut}")
            shown = names[:6]
            rng.shuffle(shown)
            question, pattern = clarification("referent", rng, options=shown, anaphor=kq.phrase)
            source = {"conversation_id": ctx.conv.id, "turns": cut}
            yield kd.kind_record(ctx, kq, history, source, method, version, pair, needs_clarification=True,
                                 category="unresolved_reference", interpretations=[kq.reading(n) for n in names[:6]],
                                 target={"clarification": question}, clarification_pattern=pattern)
        if self.fresh_share and ref.kind and ctx.rng(f"{method}|fresh|{slot}").random() < self.fresh_share:
            yield from self._fresh(ctx, kq, ref, pair, slot)
        if negative is not None:
            cut, history, names = negative
            yield kd.kind_negative(ctx, kq, history, {"conversation_id": ctx.conv.id, "turns": cut}, names[0], method,
                                version, pair)

    def _fresh(self, ctx: TurnContext, kq: kd.KindQuery, ref: kd.Referent, pair: str, slot: int) -> Iterator[Record | Rejection]:
        """The pronoun question as a chat's first words ('Can you tell me about its virtualization aspect?'):
        nothing is in view for it to mean, so it is read with the referent and other names of its kind asked about in
        the block (or, when the block asks about no other, in the domain)."""
        own = tx.clean_name(ref.name)
        said = tx.content_stems(kq.query)  # words the question keeps of the referent's name were turned down in make_kind_query
        # Names asked about in the block, else in the domain; not the lexicon's, which may be of another sense of the
        # kind ('Can you get free tests if you have 401(k)?' for a health plan).
        asked = ctx.block_names.get(ref.kind, [])
        if not [n for n in asked if not tx.same_thing(n, own)]:
            asked = ctx.domain_names.get(ref.kind, [])
        # A name the question already says is no other reading of its pronoun.
        names = [own] + [tx.kind_named(n, ref.kind) for n in asked
                         if not tx.same_thing(n, own) and not tx.content_stems(n) <= said]
        # 'West Germany' beside 'Germany' is no other reading (read 38, ce-e3710f60c598c8de).
        names = [n for i, n in enumerate(names) if not any(tx.same_thing(n, o) or kd.variant(n, o, ref.kind) for o in names[:i])]
        # The others the question fits first: 'its official reunification' with Germany, not India (read 47).
        names = [own] + kd.fitting(ctx, names[1:], ref.standalone, least=1)
        if len(names) < 2:
            yield ctx.reject(self.name, f"fewer than two names of the kind '{ref.kind}' to read the fresh question with", kq.query)
            return
        rng = ctx.rng(f"{self.name}|fresh|{slot}|clarify")
        question, pattern = clarification("referent", rng, options=[], anaphor=kq.phrase)
        yield kd.kind_record(ctx, kq, [], dict(NO_HISTORY), self.name, self.version, pair, needs_clarification=True,
                             category="unresolved_reference", interpretations=[kq.reading(n) for n in names[:6]],
                             target={"clarification": question}, clarification_pattern=pattern)
