"""Same-topic kind references: 'Does this clinic provide mental health services?' after a prefix of the turn's
own conversation that names two or more clinics, or none (a positive), or exactly one (the hard-negative twin)."""

from __future__ import annotations

from typing import Iterator

from builder.record import Record
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.context import TurnContext, also_retrieved, checked_retrieved_share


def singles_out(message: str, ref: kd.Referent, names: list[str]) -> bool:
    """A turn that names exactly one of the candidates makes that one the obvious referent ('why was the eastern
    roman empire called the byzantine empire' names one empire, by two names)."""
    return sum(1 for n in names if kd.says_apart(message, n, names)) == 1


_THEY = frozenset({"they", "them"})


def classify(history: list[dict[str, str]], ref: kd.Referent, describe: list[str], others: list[str] = (),
             known: list[str] = (), query: str = "", asked: list[str] | None = None) -> tuple[str, list[str]]:
    """'many' (two or more things of the kind, none singled out by the last user turn, nor by being what the user
    keeps asking about: `asked`, the user turns as their rewrites read them), 'one', 'none' (nothing of the kind,
    no word of the referent's name, no name of it the block, domain or lexicon know) or 'unclear'."""
    # 'Can the planet's cyclones affect Earth ...?': the question names Earth beside its kind phrase, which is not it
    # (read 56, ce-7fcbc39650c3958b).
    names = [n for n in kd.candidates(history, ref, describe) if not tx.says(query, n)]
    if len(names) >= 2:
        last_asked = asked[-1:] if asked else []  # the last user turn as its rewrite reads it ('What was its religion?')
        settled = (any(singles_out(u, ref, names) for u in [kd.last_user(history), *last_asked])
                   or kd.topic_singles_out(history, names, asked)
                   or kd.tied_by_query_names(query, history, names))
        return ("unclear" if settled else "many"), names
    if kd.known_said(history, known, names):
        # An unrecognised name of the kind ('soccer' in 'Major League Soccer', 'flu'): the talk's topic may
        # single one out, so neither an open question nor a clean twin. (Counting such names as rivals made
        # positives that a reader resolves at once: 'that planet' after Galileo's Jupiter discoveries.)
        return "unclear", names
    if len(names) == 1 and _kin_named_last(history, ref.kind, names[0]):
        # 'this plan' right after "don't know if I go with IRA or 401K...": an IRA is an account, but a user may well
        # call it a plan; the one plan named does not settle it (read 26, ce-be5a54fa9936f95b).
        return "unclear", names
    if len(names) == 1 and tx.listed_with_unknown("\n".join(h["content"] for h in history), names[0]):
        return "unclear", names  # 'the tool' after 'CocoaPods, Carthage, or from source': a list of tools
    if len(names) == 1:
        place = kd.place_in(history, ref.kind)
        if place and place[1] and not tx.same_thing(place[1], names[0]):
            # 'that country' after a talk naming England and then New York: the United States is in view too
            # (read 42, ce-fae93231cce828b4)
            return "unclear", names
        return "one", names
    if kd.mentions_referent(history, ref, others) or kd.owner_named(history, ref.kind, describe):
        return "unclear", names
    if kd.instance_said_last(history, ref.kind):
        return "unclear", names  # 'that account' right after 'a paper trading account': it points back there
    return "none", names


def _kin_named_last(history: list[dict[str, str]], kind: str, name: str) -> bool:
    """The last exchange names a thing of a kind people call by `kind`'s noun too (lexicon `called_alike`), other
    than `name`."""
    kin = {k for group in tx.lexicon().get("called_alike", []) if kind in group for k in group if k != kind}
    last = "\n".join(h["content"] for h in history[-2:])
    return bool(kin) and any(tx.kind_of(n) in kin and not tx.same_thing(n, name) for n in tx.names_in(last))


@register
class KindReference:
    """The human standalone query's named referent made a kind phrase ('the Causeway VA Clinic' -> 'this clinic'),
    asked after a prefix of its own conversation."""

    name = "kind_reference"
    version = "34"  # 17 was the reverted passage-settled rule of 81694fc; 27 the plural twins of dedd1d8, reverted
    describe = ("MTRAG's human standalone rewrite with its named referent made a definite or demonstrative kind "
                "phrase ('the Causeway VA Clinic' -> 'this clinic'), asked after a prefix of the turn's own "
                "conversation. A prefix naming two or more things of that kind (none singled out by its last user "
                "turn, nor by being what the user keeps asking about) gives a multiple_interpretations positive whose readings and clarification name them; a "
                "prefix naming none (and no name of the kind the block, domain or lexicon knows, such as 'soccer' in 'Major League Soccer') gives an underspecified_entity positive whose readings are names of the kind "
                "asked about in the block, asked openly (no default referent such as 'this planet' = Earth, and no "
                "layer kind such as 'cloud'; none right after 'a paper trading account' for 'that account', none after a talk naming a city "
                "for 'this county' or 'this state'; no kind phrase beside a date, 'the disease in 2020'); a prefix naming exactly one (and no place lying in another thing of the kind, no list beside it of names "
                "of no known kind, as 'CocoaPods, Carthage, or from source' for 'the tool') gives the hard-negative twin, resolved by "
                "that turn, as does a prefix naming none whose user turns name something the domain's passages tie to "
                "the referent ('the league' after the Arizona Cardinals; never a person or a part, which a thing has many of: 'that emperor' after a Great Wall talk stays open). Several such stitch points per query, spread over the conversation; with `later`, the "
                "question is also asked past its own turn once the talk has named two or more of its kind. With "
                "`retrieved_share`, that share of the records is also asked post-retrieval, with the passages BM25 finds "
                "for the question's own words in the domain's pool (never the turn's own); the label stands."
                " Where the readings came from beyond the record (the block's names) and the passages name two or more "
                "things of the kind, the post-retrieval copy is read with those, and its clarification names them.")

    def __init__(self, open_share: float = 1.0, prefixes: int = 2, twins: int = 1, later: bool = False, referents: int = 2,
                 retrieved_share: float = 0.0) -> None:
        # Also asked in the post-retrieval setting, with the passages BM25 finds for the question's own words.
        self.retrieved_share = checked_retrieved_share("kind_reference", retrieved_share)
        self.needs_corpus = retrieved_share > 0
        self.open_share = open_share  # share of turns whose positive may be the open (no candidate) kind
        self.prefixes = prefixes  # distinct own prefixes per label that each give a positive (each a stitch point)
        self.twins = twins  # distinct own prefixes naming exactly one that each give a hard-negative twin
        self.referents = referents  # named things of the standalone query each made a kind phrase in turn
        self.later = later  # also ask the question again later in the conversation, after 2+ things of its kind

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        if ctx.turn == 1 and not self.later:  # a first turn has only later prefixes
            return
        yield from kd.each_referent(ctx, self.name, self._one, limit=self.referents)

    def _one(self, ctx: TurnContext, ref: kd.Referent, slot: int) -> Iterator[Record | Rejection]:
        kq = kd.make_kind_query(ctx, ref, self.name, slot=slot)
        if isinstance(kq, Rejection):
            yield kq
            return
        yield from also_retrieved(ctx, self._records(ctx, ref, kq, slot), self.retrieved_share,
                                  reread=kd.passage_reader(ctx, kq, self.name))

    def _records(self, ctx: TurnContext, ref: kd.Referent, kq: kd.KindQuery, slot: int) -> Iterator[Record | Rejection]:
        method, version = self.name, self.version
        pair = kd.kind_pair(ctx, slot)
        describe = kd.describe_texts(ctx)
        found: dict[str, list[tuple[int, list[dict], list[str]]]] = {}
        others = kd.pool(ctx, ref)
        known = kd.known_names(ctx, ref.kind)
        later = kd.later_prefixes(ctx) if self.later else []
        # 'Are they all by that agency?': its own 'they', plural beside a singular kind phrase, points at something the
        # talk right before the turn said, which a shorter prefix may cut (read 42, ce-400250b054f80254); such a
        # question is asked only after its whole own history or later. ('When did it start?', 'its economy' may be
        # the kind phrase's own thing.)
        own_pronoun = not ref.plural and any(w.lower() in _THEY for w in tx.words(kq.query))
        for cut, history in later + kd.own_prefixes(ctx):  # longest first
            if own_pronoun and cut < ctx.index:
                continue
            # 'What was its religion?' asks about the Byzantine Empire: a talk whose answers also say Rome is still
            # about it (reads 42-44, 49, 54, 55; ce-5c2a5d0707036836).
            label, names = classify(history, ref, describe, others, known, kq.query, kd.asked_before(ctx, cut))
            tie = kd.singled_by_history(ctx, ref.name, ref.kind, history) if label == "none" else None
            place = kd.place_in(history, ref.kind) if label == "none" and not tie else None
            if place:  # 'this country' after a talk about Maine: the United States, whichever country was asked about
                if tx.same_thing(place[1], tx.clean_name(ref.name)):
                    found.setdefault("tied", []).append((cut, history, [place[0]]))
                continue
            if tie:  # 'the league' after the Arizona Cardinals: the talk says which (the NFL) without naming it
                found.setdefault("tied", []).append((cut, history, [tie]))
                continue
            if cut <= ctx.index or label == "many":  # past the turn, only several candidates leave it open
                found.setdefault(label, []).append((cut, history, names))
        source = lambda cut: {"conversation_id": ctx.conv.id, "turns": cut}  # noqa: E731
        # Several stitch points of each kind, spread over the conversation: each a record of its own.
        for cut, history, names in _spread(found.get("many", []), self.prefixes):
            yield kd.kind_positive(ctx, kq, history, source(cut), names, "multiple_interpretations", method, version, pair)
        default = tx.default_referent(ref.kind)
        if found.get("none") and default:
            yield ctx.reject(method, f"'{kq.phrase}' reads as {default} when nothing else is said", kq.query)
        elif found.get("none") and ctx.rng(f"{method}|open|{slot}").random() < self.open_share:
            names = kd.pool(ctx, ref, query=kq.query)
            if len(names) < 2:
                yield ctx.reject(method, f"fewer than two names of the kind '{ref.kind}' in the block and domain", kq.query)
            for cut, history, _ in _spread(found["none"], self.prefixes) if len(names) >= 2 else []:
                yield kd.kind_positive(ctx, kq, history, source(cut), names, "underspecified_entity", method, version, pair,
                                    named_here=False)
        if "many" not in found and "none" not in found:
            yield ctx.reject(method, f"no prefix of the conversation leaves '{kq.phrase}' open", kq.query)
        ones = found.get("one", [])
        own = tx.clean_name(ref.name)
        ones = [o for o in ones if tx.same_thing(o[2][0], own)] or ones  # a prefix naming the true referent first
        for cut, history, names in ones[: self.twins]:
            yield kd.kind_negative(ctx, kq, history, source(cut), names[0], method, version, pair)
        for cut, history, (tie,) in found.get("tied", [])[: self.twins if not ones else 0]:
            yield kd.kind_negative(ctx, kq, history, source(cut), own, method, version, pair, via=tie)


def _spread(found: list, n: int) -> list:
    """Up to `n` items of a list, evenly spread from its first to its last (the longest and the shortest
    prefix first of all)."""
    if n <= 1 or len(found) <= 1:
        return found[:max(n, 0)]
    if len(found) <= n:
        return list(found)
    picks = sorted({round(i * (len(found) - 1) / (n - 1)) for i in range(n)})
    return [found[i] for i in picks]
