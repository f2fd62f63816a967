"""Kind references: the standalone query's named referent made a kind phrase ("the Causeway VA Clinic" ->
"this clinic") or a pronoun, and the history prefixes that leave it open or resolve it.

Shared by the generators that place such a query after a history: the turn's own conversation (a prefix with
two or more things of the kind, or none: a positive; exactly one: the hard-negative twin) or another
conversation of the block (a topic switch). Every reading names a candidate from the record's history or from
the names of that kind in the block and domain; nothing is invented.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Iterator

from builder.conversation import Passage
from builder.record import Record, clear_target
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection
from builder.synthesize.clarify import clarification
from builder.synthesize.context import TurnContext, history_of, pair_id, resolving_turn

_DETERMINER_BEFORE = re.compile(r"(?i)\b(the|a|an|this|that|these|those|my|your|our)\s+$")
# 'across the entire USA' -> 'across the entire country', not 'the entire the country'.
_DETERMINER_ADJECTIVE_BEFORE = re.compile(r"\b(?:the|a|an|this|that|these|those|my|your|our)\s+[a-z][a-z-]*\s+$")
_IMPERATIVES = frozenset({"name", "list", "tell", "describe", "explain", "compare", "give", "show", "define",
                          "summarize", "summarise", "identify", "provide"})
# 'explain what Spark is': 'what' opens a clause whose subject is the name, so the kind phrase keeps its article.
_CLAUSE_SUBJECT = re.compile(r"(?i)^\s+(?:is|are|was|were|does|do|did|can|could|will|would|has|have|had)\b(?:\s+(?:used|for|about|like|made|called|known|doing|meant|supposed))?\s*[?.!]?\s*$")
_POSSESSOR_BEFORE = re.compile(r"(?i)(?:[’']s|\b(?:his|her|its|their|which|what|each|every|any))\s+$")


@dataclass(frozen=True)
class Referent:
    name: str  # as the standalone query writes it ("Causeway VA Clinic")
    kind: str  # "clinic"
    plural: bool
    entity: tx.Entity
    standalone: str  # the human standalone query that names it


@dataclass(frozen=True)
class KindQuery:
    referent: Referent
    query: str  # the standalone query with the referent replaced
    phrase: str  # what replaced it: "this clinic", "the clinics", "it"

    def reading(self, name: str) -> str:
        """The query read with `name` as the referent: a complete question, no placeholder."""
        e = self.referent.entity
        s = self.referent.standalone
        before = s[: e.start]
        toks = tx.words(name)
        if name in tx.lexicon()["definite_names"] or tx.takes_the(before, name, self.referent.kind):
            before = tx.with_the(before)  # 'the size of the Sun', 'by the IRS'
        elif (len(toks) == 1 and not name.isupper() and not tx.singular(toks[0])) or self.referent.kind in tx.BARE_KINDS:
            # 'the Byzantine Empire' -> 'Rome', not 'the Rome'; 'the USA' -> 'Great Britain' (read 29)
            before = re.sub(r"(?i)\bthe\s+$", "", before)
        # 'an IRA' -> 'a Roth IRA' / '401k accounts'
        plural_ = tx.words(name)[-1].lower().endswith("s") and tx.singular(tx.words(name)[-1]) == self.referent.kind
        before = tx.fit_article(before, name, plural_)
        out = tx.without_name_article(before, name) + tx.with_possessive(name, e.text) + s[e.end :]
        return out[0].upper() + out[1:]


def referents_of(ctx: TurnContext, method: str, need_kind: bool = True, limit: int = 2) -> list[Referent] | Rejection:
    """The named things the human standalone query is about, with their kinds: its key entity first, then
    other names of a known kind (at most `limit`)."""
    if not tx.is_question(ctx.standalone):
        return ctx.reject(method, "the standalone query is no question or request", ctx.standalone)
    passages = ctx.relevant_passages()
    texts = [p.title + "\n" + p.text for p in passages] + [t.text for t in ctx.conv.turns[: ctx.index]]
    key = tx.key_entity(ctx.standalone, [p.title for p in passages], [p.text for p in passages])
    if key is None:
        return ctx.reject(method, "no key entity in the standalone query", ctx.standalone)
    out: list[Referent] = []
    first: Rejection | None = None
    for entity in [key] + [e for e in tx.entities(ctx.standalone) if e.end <= key.start or e.start >= key.end]:
        got = _referent(ctx, method, entity, texts, need_kind)
        if isinstance(got, Rejection):
            first = first or got
        elif not any(tx.same_thing(got.name, o.name) for o in out):
            out.append(got)
        if len(out) >= limit:
            break
    return out or first



def each_referent(ctx: TurnContext, method: str, one: Callable[[TurnContext, Referent, int], Iterator],
                  need_kind: bool = True, limit: int = 2) -> Iterator:
    """`one(ctx, referent, slot)` for each referent of the turn (see referents_of), or the rejection."""
    refs = referents_of(ctx, method, need_kind=need_kind, limit=limit)
    if isinstance(refs, Rejection):
        yield refs
        return
    for slot, ref in enumerate(refs):
        yield from one(ctx, ref, slot)

def referent_of(ctx: TurnContext, method: str, need_kind: bool = True) -> Referent | Rejection:
    """The key named thing of the human standalone query, with its kind."""
    got = referents_of(ctx, method, need_kind, limit=1)
    return got if isinstance(got, Rejection) else got[0]


def _referent(ctx: TurnContext, method: str, entity: tx.Entity, texts: list[str], need_kind: bool) -> Referent | Rejection:
    if entity.text.endswith(("'s", "’s")):  # the possessive stays in the query: "this clinic's hours"
        entity = tx.Entity(entity.text[:-2], entity.head, entity.start, entity.end - 2)
    name = entity.text
    kind = tx.kind_of(tx.clean_name(name), texts) or ("" if not need_kind else None)
    if kind is None:
        return ctx.reject(method, f"no kind known for '{name}'", ctx.standalone)
    if kind and kind in tx.layer_kinds():
        # 'this cloud' in a talk about IBM Cloud's offerings: its products are parts of one cloud, not rival clouds.
        return ctx.reject(method, f"'{kind}' names a layer of one product family, not rival things", ctx.standalone)
    if not tx.is_name(tx.clean_name(name), kind or None):
        return ctx.reject(method, f"'{name}' is no name of a {kind or 'thing'}", ctx.standalone)
    if "®" in name or "™" in name:
        return ctx.reject(method, f"'{name}' is a trademark string", ctx.standalone)
    if re.search(r"[‚Äú”“]|â€|Ã", ctx.standalone):
        return ctx.reject(method, "mis-decoded quotes in the standalone query", ctx.standalone)
    if entity.start == 0 and tx.words(name)[0].lower() in _IMPERATIVES:
        # 'Name two spacecraft that ...': a request's verb, not a name.
        return ctx.reject(method, f"'{name}' starts with the request's verb", ctx.standalone)
    if entity.head and (odd := tx.not_a_kind_name(ctx.standalone, entity)):
        # 'Where do the Arizona Cardinals play, ...': 'play' is the verb; 'Where do that play' is no question.
        return ctx.reject(method, odd, ctx.standalone)
    if tx.one_of_list(ctx.standalone, entity):
        # 'differences between the market and X': swapping one member of a list breaks the question.
        return ctx.reject(method, f"'{name}' is one of a list; a kind phrase there breaks the question", ctx.standalone)
    last = tx.words(name)[-1].lower()
    plural = last != kind and tx.singular(last) == kind and last.endswith("s") and kind != tx.plural(kind)
    return Referent(name, kind, plural, entity, ctx.standalone)


def kind_phrase(ref: Referent, rng_value: float) -> str:
    """'the clinic' / 'this clinic' / 'that clinic' (plural: 'the clinics' / 'these clinics')."""
    noun = tx.plural(ref.kind) if ref.plural else tx.kind_word(ref.kind)
    if rng_value < 0.5:
        det = "the"
    elif rng_value < 0.85:
        det = "these" if ref.plural else "this"
    else:
        det = "those" if ref.plural else "that"
    return f"{det} {noun}"


# 'COVID in 2020', 'the Super Bowl of 1970': a date beside the name picks one thing of the kind.
_DATED_AFTER = re.compile(r"\s+(?:in|of|from|during)\s+(?:the\s+)?(?:1[5-9]|20)\d\d(?:s|\b)")


def make_kind_query(ctx: TurnContext, ref: Referent, method: str, pronoun: bool = False, slot: int = 0
                    ) -> KindQuery | Rejection:
    """Replace the referent with a kind phrase (or a pronoun), keeping the question grammatical."""
    e = ref.entity
    s = ref.standalone
    before = tx.words(s[: e.start])
    prev = before[-1] if before else ""
    if s[: e.start].rstrip().endswith("(") or s[e.end :].lstrip().startswith(")"):
        return ctx.reject(method, f"'{e.text}' is an aside in brackets", s)
    if re.match(r"\s*\(", s[e.end :]):
        return ctx.reject(method, f"a name in brackets follows '{e.text}'", s)  # 'this cloud (VPC)' still says which
    modifier = prev[:1].isupper() and ((prev.isupper() and len(prev) > 1) or prev.lower() not in tx.stopwords())
    if modifier and not prev.endswith(("'s", "’s")):
        # 'the US Civil War': a kind phrase after a modifier reads 'the US this war'.
        return ctx.reject(method, f"'{prev}' modifies '{e.text}'; a kind phrase there breaks the question", s)
    if tx.defines_type(s, e):
        return ctx.reject(method, f"'{tx.defines_type(s, e)} {e.text}' asks what a type is", s)
    longer = tx.inside_longer_name(s, e, [p.title + "\n" + p.text for p in ctx.passages])
    if longer:
        # 'what is the great wall of China built out of' -> 'the great wall of the country': the question still
        # says which (read 44, ce-7979c32dec5f9338)
        return ctx.reject(method, f"'{e.text}' is part of the name '{longer}' that the question says", s)
    if _DATED_AFTER.match(s[e.end:]):
        # 'the greatest pandemics before the disease in 2020': the date still says which (read 43, ce-674fbd5a13f87f0a)
        return ctx.reject(method, f"a date right after '{e.text}' still singles it out", s)
    after = re.match(r"\s+([a-z][a-z\-]+)\b", s[e.end :])
    if not pronoun and after and tx.modifies_noun(s, e) and tx.singular(after.group(1)) != after.group(1) \
            and tx.head_of(after.group(1)):
        # 'IBM Cloud Kubernetes Service clusters' -> 'that service clusters'
        return ctx.reject(method, f"'{e.text}' modifies the plural noun '{after.group(1)}'; a kind phrase there "
                                  "breaks the question", s)
    if pronoun:
        if ref.kind in tx.person_kinds():
            return ctx.reject(method, f"'{e.text}' is a person ({ref.kind}); 'it' cannot stand for them", s)
        if tx.modifies_noun(s, e):
            return ctx.reject(method, f"'{e.text}' modifies a noun; a pronoun there is ungrammatical", s)
        if tx.ends_noun_phrase(s, e):
            return ctx.reject(method, f"'{e.text}' ends a noun phrase; a pronoun there is ungrammatical", s)
        phrase = tx.pronoun_for(s, e)
        query = tx.replace_entity(s, e, phrase)
    else:
        if tx.lowercase_modifier(s, e):
            # 'Immutable data Immutable Object Storage' -> 'Immutable data the storage'.
            return ctx.reject(method, f"'{prev}' modifies '{e.text}'; a kind phrase there breaks the question", s)
        phrase = kind_phrase(ref, _phrase_value(ctx, slot))
        start, end = e.start, e.end
        det = _DETERMINER_BEFORE.search(s[:start])
        rep = phrase
        if det:
            start = det.start()
        elif (_POSSESSOR_BEFORE.search(s[:start]) and not _CLAUSE_SUBJECT.match(s[end:])) or _DETERMINER_ADJECTIVE_BEFORE.search(s[:start]):
            rep = phrase.split(" ", 1)[1]  # "NASA's this mission" -> "NASA's mission"
        query = s[:start] + rep + s[end:]
        query = query[0].upper() + query[1:] if start == 0 else query
    if tx.mentions(query, tx.clean_name(e.text)):
        return ctx.reject(method, f"could not remove '{e.text}'", s)
    if query == s or len(tx.content_stems(query) - {ref.kind} - tx.anaphora()) < 1:
        return ctx.reject(method, f"too little left after removing '{e.text}'", s)
    # The kind phrase's own words are no words kept ('that virus' for 'West Nile virus').
    kept = (tx.content_stems(tx.without_brand(tx.clean_name(e.text))) - {ref.kind} - tx.content_stems(phrase)) & tx.content_stems(query)
    if kept:
        # 'Can I configure that SDK for mobile to work with different installations of Cloud Functions?': the
        # question's own words still say which SDK (read 49, ce-cfbc3ee7cdeb377d; read 39 for fresh pronoun questions)
        return ctx.reject(method, f"the question still says '{', '.join(sorted(kept))}' of '{e.text}'", s)
    broken = tx.broken_replacement(s, e, query)
    if broken:
        return ctx.reject(method, broken, s)
    about = _about_other_name(ctx, query)
    if about:
        # 'When was Grenade by the singer released?': the passages are about Grenade, and Grenade says the singer.
        return ctx.reject(method, f"the question still names '{about}', what its passages are about; that singles out '{e.text}'", s)
    beside = singled_by_other_name(ctx, ref.name, ref.kind, query)
    if beside:
        return ctx.reject(method, f"the question still names '{beside}', which the domain's passages name with '{e.text}' "
                                  f"and hardly any other {ref.kind}", s)
    kind_words = sum(tx.stem(w) == ref.kind for w in tx.words(query)) if ref.kind else 0
    if kind_words > (0 if pronoun else 1):
        # 'a language other than the language', 'the plan pricing plan', 'a language other than it'.
        return ctx.reject(method, f"the question names the kind '{ref.kind}' beside its {'pronoun' if pronoun else 'kind phrase'}", query)
    return KindQuery(ref, query, phrase)


def _about_other_name(ctx: TurnContext, query: str) -> str | None:
    """A name left in the kind query that titles the turn's relevant passages: the referent is a fact about it."""
    titles = [p.title for p in ctx.relevant_passages() if p.title]
    for name in tx.names_in(query):
        if any(tx.mentions(t, name) for t in titles):
            return name
    return None


def singled_by_other_name(ctx: TurnContext, referent: str, kind: str | None, query: str, proper_only: bool = False
                          ) -> str | None:
    """A name left in the generic query that the domain's passages mention with the referent more than with any
    other name of its kind (at least twice, or in every passage that says it and with no rival): 'Did Juno and
    Galileo find cyclones on this planet?' is about Jupiter, 'MacArthur and the Emperor' about Japan. With
    `proper_only`, only names capitalized throughout that are no maker name ('IBM' goes with every product of its
    docs). Needs the domain's passage pool; None without one."""
    if ctx.corpus is None or not kind:
        return None
    own = tx.clean_name(referent)
    rivals = [n for n in known_names(ctx, kind) if len(n) > 2 and not tx.same_thing(n, own)]
    brands = {str(b) for b in tx.lexicon().get("brand_prefixes", [])}
    for name in tx.names_in(query):
        if tx.same_thing(name, own) or tx.kind_of(name) == kind:
            continue
        if proper_only and (name in brands or not all(w[:1].isupper() or w[:1].isdigit() for w in tx.words(name))):
            continue
        texts = [p.title + "\n" + p.text for p in ctx.corpus.search(ctx.conv.domain, name, 20)]
        texts = [t for t in texts if tx.mentions(t, name)]
        # A passage that names a place in the referent says it too: the MLS All-Star Game's passages name
        # Colorado and Kansas, not the USA (read 34, ce-572d15bae6af64d5).
        own_in = [tx.says(t, own) or _place_in_text(t, kind, own) is not None for t in texts]
        with_own = sum(own_in)
        with_rival = max((sum(tx.says(t, r) for t in texts) for r in rivals), default=0)
        # A rival said only beside the referent is its yardstick ('cyclones as large as Earth' in every Juno page about
        # Jupiter; read 46, ce-3688f6db8cdf113c): the name goes with the rival where the referent is absent.
        rival_alone = max((sum(tx.says(t, r) and not o for t, o in zip(texts, own_in)) for r in rivals), default=0)
        if with_own >= 2 and with_own > 2 * rival_alone and with_own > with_rival:
            return name
        # A rare name counts too when every passage that says it says the referent and none a rival: 'MacArthur',
        # in one passage of the domain, with Japan (read 33, ce-382f73c533e99230).
        if texts and with_own == len(texts) and not with_rival:
            return name
    return None


def place_in(history: list[dict[str, str]], kind: str) -> tuple[str, str] | None:
    """(place, container) when the history names a place that lies in one thing of `kind` (lexicon `located_in`
    and `places_in`): 'this country' after a talk about Maine is the United States (read 26, ce-74c962f2771ca6b1),
    after one about the wall in berlin Germany (read 32)."""
    return _place_in_text("\n".join(h["content"] for h in history), kind)


def _place_in_text(text: str, kind: str, container: str | None = None) -> tuple[str, str] | None:
    """(place, container) for the first place the text names that lies in one thing of `kind` (in `container`,
    when given)."""
    for inner, outer, holder in tx.lexicon().get("located_in", []):
        if outer == kind and (container is None or tx.same_thing(holder, container)):
            # the kind lexicon's names too: 'Chester , Pennsylvania' in a passage's table is no sentence
            named = tx.named_of_kind(text, inner) or [n for n in tx.lexicon_names().get(inner, []) if tx.says(text, n)]
            if named:
                return named[0], holder
    for outer, holder, names in tx.lexicon().get("places_in", []):
        if outer == kind and (container is None or tx.same_thing(holder, container)):
            if said := next((n for n in names if tx.says(text, n)), None):
                return said, holder
    for inner, outers in tx.lexicon().get("lies_in_one", []):
        if kind in outers and container is None:
            # 'this county' after a talk about the City of Piedmont: the city's county, whichever that is (read 43,
            # ce-b252b925580a6569); the holder is unknown, so such a history settles it without naming it
            if named := tx.named_of_kind(text, inner):
                return named[0], ""
    return None


def singled_by_history(ctx: TurnContext, referent: str, kind: str | None, history: list[dict[str, str]]) -> str | None:
    """A name in the history's user turns that singles out the referent the same way: 'the league' after 'Do the
    Arizona Cardinals play outside the US?' is the NFL (read 21, ce-c120b12b83767558). Never a person or a part."""
    said = "\n".join(h["content"] for h in history if h["role"] == "user")
    if not said or kind in tx.person_kinds() or kind in tx.lexicon().get("part_kinds", []):
        # 'Who is that emperor known for?' after a Great Wall talk: the wall had many emperors, a rover many
        # instruments, whichever one the passages name beside it (read 62, ce-020f645f7c636517; read 60's MOXIE)
        return None
    # 'where do the arizona cardinals play this week': a name typed in lower case, which the block's rewrites spell
    # capitalized (read 47, ce-83a9a2401688dfb5)
    typed = [e for e in dict.fromkeys(e for e, _, _ in ctx.block_entities) if tx.mentions(said, e) and e not in said]
    return singled_by_other_name(ctx, referent, kind, "\n".join([said, *typed]), proper_only=True)


def _phrase_value(ctx: TurnContext, slot: int) -> float:
    # One choice of phrase per turn and referent, shared by every generator that uses the kind query, so that
    # the same words appear in the same-topic positive, its twin and the topic switch.
    return ctx.rng("kind-phrase" if slot == 0 else f"kind-phrase|{slot}").random()


def kind_pair(ctx: TurnContext, slot: int) -> str:
    """The pair of one kind query: same-topic positive, its twin and the topic switch share it."""
    return pair_id(ctx, "kind_reference" if slot == 0 else f"kind_reference|{slot}")


def candidates(history: list[dict[str, str]], ref: Referent, describe: list[str]) -> list[str]:
    """The distinct names of things of the referent's kind that a history mentions, the referent included
    when the history names it."""
    names: list[str] = []
    for h in history:
        for name in tx.named_of_kind(h["content"], ref.kind, describe):
            if not any(tx.same_thing(name, o) for o in names):
                names.append(name)
    text = "\n".join(h["content"] for h in history)
    own = tx.clean_name(ref.name)
    if tx.mentions(text, own) and not any(tx.same_thing(own, o) for o in names):
        names.append(own)
    return [tx.kind_named(n, ref.kind, text) for n in tx.renamed_merged(short_forms_merged(names, ref.kind), text)]


def short_forms_merged(names: list[str], kind: str = "") -> list[str]:
    """In one conversation a shorter name inside a longer one is its short form ('Object Storage' of
    'Immutable Object Storage', 'Civil War' of 'American Civil War', the kind noun aside: 'Clipper mission' of
    'Europa Clipper'; 'IBM Cloud Object Storage', less its maker, of 'Immutable Object Storage'): one candidate,
    the longer name."""
    full = [tx.content_stems(n) - {kind} for n in names]
    own = [tx.content_stems(tx.without_brand(n)) - {kind} for n in names]
    return [n for i, n in enumerate(names)
            if not any(full[i] < full[j] or own[i] < own[j] for j in range(len(names)) if j != i)]


def _one_thing_merged(names: list[str], text: str) -> list[str]:
    """Drop a name that the text uses only inside another name's alias ('Roman Empire' in 'the eastern Roman
    Empire', which is the Byzantine Empire): one thing, not two rivals."""
    out = []
    for b in names:
        stems_b = tx.content_stems(b)
        covered = any(
            not tx.same_thing(a, b) and stems_b <= tx.content_stems(alias) and not tx.same_thing(alias, b)
            and tx.mentions(text, alias)
            for a in names if a != b for alias in tx.aliases_of(a)
        )
        if not covered:
            out.append(b)
    return out


def mentions_referent(history: list[dict[str, str]], ref: Referent, others: list[str] = ()) -> bool:
    """A distinctive word of the referent's name in the history ('Causeway' of 'Causeway VA Clinic'). Words it
    shares with other names of its kind ('VA', 'IBM') and acronyms of a whole organisation do not single it out:
    a talk about the VA leaves 'this clinic' open."""
    name = tx.clean_name(ref.name)
    own = tx.content_stems(name) - {ref.kind}
    shared = {s for other in others if not tx.same_thing(other, name) for s in tx.content_stems(other)}
    acronyms = {tx.stem(w) for w in tx.words(name) if w.isupper() and len(tx.words(name)) > 1}
    distinctive = (own - shared - acronyms) or own
    return bool(distinctive & tx.content_stems("\n".join(h["content"] for h in history)))


def pool(ctx: TurnContext, ref: Referent, limit: int = 6, query: str = "") -> list[str]:
    """Names of the referent's kind from the block, then the domain: readings for an open kind phrase. A name whose
    words the query already says is no other reading of it ('Enterprise account' for 'this plan' in 'Is this plan
    available with the Enterprise account type?')."""
    if not query:
        return pool_of_kind(ctx, ref.kind, limit)
    return pool_of_kind(ctx, ref.kind, limit, query=query, keep=ref.name)


_MANY = 40  # names of a kind weighed against a question before the best few are kept


def fitting(ctx: TurnContext, names: list[str], query: str, least: int = 2, keep: str = "", ties: list[str] = ()
            ) -> list[str]:
    """The names the question fits, best first: those the domain's passages retrieved for the question's words say
    (most such passages first), then others only as far as `least` needs. 'Are they billed per conversation?' is
    read with Watson Assistant, not with a Hive metastore; 'this state's involvement in the US Civil War' with the
    states the war's passages name, not with Alaska (read 47). The name `keep` (the true referent) stays whatever
    its fit. With `ties` (the other names the question says, `anchors`), only passages that say them count, and no
    name fills in. Without a passage pool, the names as they are."""
    if ctx.corpus is None or not names:
        return names
    texts = [p.title + "\n" + p.text for p in ctx.corpus.search(ctx.conv.domain, query, 30)]
    # 'Was Japan better off as a result of the general not criminalizing the Emperor?' is read with the generals
    # that passages naming Japan say, not with Meng Tian from a Qin passage on a general and an emperor (read 59,
    # ce-bfc5b513804db760); and no name that no such passage says fills in.
    texts = [t for t in texts if all(tx.mentions(t, a) for a in ties)]
    fit = [sum(tx.says(t, n) for t in texts) or (1e-9 if keep and tx.same_thing(n, tx.clean_name(keep)) else 0) for n in names]
    best = sorted((i for i in range(len(names)) if fit[i]), key=lambda i: -fit[i])  # stable: pool order breaks ties
    rest = [] if ties else [i for i in range(len(names)) if not fit[i]][: max(0, least - len(best))]
    return [names[i] for i in best + rest]


def anchors(query: str, kind: str, names: list[str], keep: str = "") -> list[str]:
    """The names a question says besides the referent `keep`, names of the kind (`names`, or by the lexicon) and
    maker names ('IBM Cloud' is in every doc): 'Japan' in 'Was Japan better off ... the general ...?'."""
    brands = {str(b) for b in tx.lexicon().get("brand_prefixes", [])}
    said = [*names, tx.clean_name(keep)] if keep else names
    return [n for n in tx.names_in(query) if n not in brands and tx.kind_of(n) != kind
            and not any(tx.same_thing(n, m) or variant(n, m, kind) for m in said)]


def pool_of_kind(ctx: TurnContext, kind: str, limit: int = 6, query: str = "", keep: str = "", tied: bool = False
                 ) -> list[str]:
    """Names of a kind asked about in the block, then in the domain, then from the kind lexicon; with `query`, the
    ones it fits first (`fitting`), none whose words it already says but `keep`. With `tied`, a question that names
    other things (`anchors`) is read only with names that passages saying those things say."""
    if query:
        # Names of the kind itself are weighed; a kin kind's (a state for 'the city') only fill up to two readings
        # (read 48: 'the city' read as California and Alameda County).
        said = tx.content_stems(query)
        other = lambda n: not tx.content_stems(n) <= said or bool(keep) and tx.same_thing(n, tx.clean_name(keep))  # noqa: E731
        every = _names_of_kind(ctx, kind, _MANY)
        ties = anchors(query, kind, every, keep) if tied and ctx.corpus is not None else []
        fitted = fitting(ctx, [n for n in _names_of_kind(ctx, kind, _MANY, kin=False) if other(n)], query, keep=keep,
                         ties=ties)
        more = [] if ties else [n for n in every if n not in fitted and other(n)]  # no fill-in for a tied question
        return (fitted + more[: max(0, 2 - len(fitted))])[:limit]
    return _names_of_kind(ctx, kind, limit)


def _names_of_kind(ctx: TurnContext, kind: str, limit: int, kin: bool = True) -> list[str]:
    out: list[str] = []
    sources = [(ctx.block_names, kind), (ctx.domain_names, kind)]
    if len({n for s, _ in sources for n in s.get(kind, [])}) < 2:
        # Too few in the data: the kind lexicon's names, then names of a kin kind from the block and domain.
        sources.append((tx.lexicon_names(), kind))
        sources += [(s, k) for k in tx.kin_of(kind) for s in (ctx.block_names, ctx.domain_names)] if kin else []
    lexicon = tx.lexicon_names()
    for source, k in sources:
        for name in source.get(k, []):
            if len(out) >= limit:
                return out
            if source is lexicon and not _domain_says(ctx, name):
                continue  # '401(k)' is a plan of fiqa's passages, no reading of 'the plan' in IBM Cloud's docs
            if not any(tx.same_thing(name, o) or variant(name, o, kind) for o in out):
                out.append(tx.kind_named(name, kind))
    return out


def variant(name: str, other: str, kind: str) -> bool:
    """One name's words, the kind noun aside, are all in the other's: 'West Germany' is no reading beside 'Germany'
    (three readings of one country, read 34), nor 'Causeway VA Clinic' beside a 'VA clinic' already read."""
    a, b = tx.content_stems(name) - {kind}, tx.content_stems(other) - {kind}
    return bool(a and b) and (a <= b or b <= a)


def _domain_says(ctx: TurnContext, name: str) -> bool:
    """A passage of the turn's domain names it (True without a passage pool to ask)."""
    return ctx.corpus is None or ctx.corpus.names(ctx.conv.domain, name)


def known_names(ctx: TurnContext, kind: str) -> list[str]:
    """Every name of a kind that the block, the domain and the kind lexicon know ('soccer' of sport, 'New York'
    of state)."""
    seen: list[str] = []
    for source in (ctx.block_names, ctx.domain_names, tx.lexicon_names()):
        seen += [n for n in source.get(kind, []) if n not in seen]
    return seen


def known_said(history: list[dict[str, str]], known: list[str], names: list[str] = ()) -> list[str]:
    """The known names of the kind that a history says, capitalised or not, beyond `names` ('Major League
    Soccer' says soccer): 'this sport' after it is no open question, though no sport name was recognised."""
    text = "\n".join(h["content"] for h in history)
    out: list[str] = []
    for n in known:
        if len(n) > 2 and tx.says(text, n) and not any(tx.same_thing(n, o) for o in [*names, *out]):  # not 'ID', 'US'
            out.append(n)
    return out


def describe_texts(ctx: TurnContext) -> list[str]:
    """Texts that may say what kind a name is: the turn's passages."""
    return [p.title + "\n" + p.text for p in ctx.passages]


def own_prefixes(ctx: TurnContext) -> list[tuple[int, list[dict[str, str]]]]:
    """Non-empty prefixes of the turn's own history that end before a user turn, longest first."""
    cuts = [i for i in ctx.conv.user_turn_indices() if 0 < i <= ctx.index]
    return [(cut, ctx.history[:cut]) for cut in sorted(cuts, reverse=True)]


def asked_before(ctx: TurnContext, cut: int) -> list[str]:
    """The user turns of the conversation before `cut` (the turn itself left out), each as its human rewrite reads
    it when there is one: what the user asked about, pronouns resolved."""
    return [t.rewrite or t.text for i, t in enumerate(ctx.conv.turns[:cut]) if t.role == "user" and i != ctx.index]


def later_prefixes(ctx: TurnContext) -> list[tuple[int, list[dict[str, str]]]]:
    """Prefixes of the turn's own conversation that go past the turn (up to the whole conversation), longest
    first: the user comes back to the question later, after the talk has named other things of its kind. The
    turn's own exchange is left out: there the user asked it with the name, which would settle the kind phrase."""
    turns = ctx.conv.turns
    cuts = [i for i in ctx.conv.user_turn_indices() if i > ctx.index] + [len(turns)]
    own = {ctx.index, ctx.index + 1}
    return [(cut, [h for i, h in enumerate(history_of(ctx.conv, cut)) if i not in own])
            for cut in sorted(set(cuts), reverse=True) if turns[cut - 1].role != "user"]


_PLURAL_PRONOUNS = frozenset({"they", "them", "their"})


def agrees(pronoun: str, names: list[str]) -> bool:
    """A plural pronoun needs plural candidates and a singular one singular candidates."""
    plural_ = pronoun in _PLURAL_PRONOUNS
    return all((tx.words(n)[-1].lower().endswith("s") and len(tx.words(n)) > 1) == plural_ for n in names) if plural_ else \
        not any(tx.words(n)[-1].lower().endswith("s") and tx.singular(tx.words(n)[-1]) for n in names)


def rivals(exchange: list[dict[str, str]], kind: str | None = None, user: str | None = None) -> list[str]:
    """Two or more things of one kind that an exchange names, none singled out by its user turn (or `user`):
    what a pronoun right after it could mean ('the query runtime chart' and 'the throughput chart'). [] when none."""
    if not exchange:
        return []
    text = "\n".join(h["content"] for h in exchange)
    by_kind: dict[str, list[str]] = {}
    for name in tx.names_in(text):
        k = tx.kind_of(name, [text])
        if k and (kind is None or k == kind):
            by_kind.setdefault(k, []).append(name)
    if kind:
        # 'association football' and 'American football' (read 56, ce-9b9ff78257b8e727): a lexicon name written in
        # lower case is a candidate too, though no capital marks it as a name.
        said = by_kind.setdefault(kind, [])
        for n, written in lowercase_said(text, kind):
            if not any(tx.same_thing(a, o) for a in tx.aliases_of(n) for o in said):
                said.append(written)  # as the text writes it: 'flu' for influenza, 'soccer' for association football
    user = exchange[0]["content"] if user is None else user
    for k, names in sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        names = tx.renamed_merged(_one_thing_merged(short_forms_merged(names, k), text), text)
        if len(names) >= 2 and sum(1 for n in names if tx.mentions(user, n)) != 1:
            return [tx.kind_named(n, k, text) for n in names]
    return []



def lowercase_said(text: str, kind: str) -> list[tuple[str, str]]:
    """(name, as written) for each of the kind lexicon's lower-case names of `kind` that `text` writes, by any
    alias ('flu' for influenza)."""
    out = []
    for n in _lowercase_names(kind):
        written = next((a for a in tx.aliases_of(n) if re.search(rf"(?i)\b{re.escape(a)}\b", text)), None)
        if written:
            out.append((n, written))
    return out


def _lowercase_names(kind: str) -> list[str]:
    """The kind lexicon's names of `kind` written in lower case ('soccer', 'diabetes')."""
    return [str(n) for n in tx.lexicon().get("kinds", {}).get(kind, []) if str(n)[:1].islower()]


def owner_named(history: list[dict[str, str]], kind: str, describe: list[str]) -> bool:
    """`kind` is a part of one product (lexicon `part_of`: an SDK, a console) and the history names exactly one
    thing of a kind that owns such parts: 'the SDK' after a talk about Cloudant is Cloudant's."""
    text = "\n".join(h["content"] for h in history)
    for parts, owners in tx.lexicon().get("part_of", []):
        if kind in parts:
            named: list[str] = []
            for n in (n for o in owners for n in tx.named_of_kind(text, o, describe)):
                if not any(tx.same_thing(n, m) for m in named):
                    named.append(n)
            return len(short_forms_merged(named)) == 1
    return False


def latest_of_kind(history: list[dict[str, str]], kind: str) -> list[str]:
    """The things of `kind` named by the most recent exchange that names any ([] when none does): what the talk
    last said of that kind ('California' after four turns on California's traffic laws, New York before them)."""
    ends = len(history)
    for i in range(len(history) - 1, -1, -1):
        if history[i]["role"] != "user":
            continue
        found = tx.named_of_kind("\n".join(h["content"] for h in history[i:ends]), kind)
        if found:
            return found
        ends = i
    return []


def named_instead(history: list[dict[str, str]], name: str, kind: str) -> list[str]:
    """Other things of `kind` that the latest exchange naming that kind says besides or instead of `name`: a name
    sharing a word with it other than the kind word ('Great Wall', 'Great Wall of China'), its initials ('CWD',
    'chronic wasting disease') or a brand ('IBM') is no other thing."""
    own = tx.content_stems(name) - {tx.stem(kind)}
    initials = "".join(w[0] for w in tx.words(name)).upper()
    brands = {str(b) for b in tx.lexicon().get("brand_prefixes", [])}
    return [n for n in latest_of_kind(history, kind)
            if n not in brands and n != initials and not tx.same_thing(n, name) and not tx.content_stems(n) & own]


def last_user(history: list[dict[str, str]]) -> str:
    return next((h["content"] for h in reversed(history) if h["role"] == "user"), "")


def last_exchange(history: list[dict[str, str]]) -> list[dict[str, str]]:
    """The last user turn of a history and the answer after it."""
    for i in range(len(history) - 1, -1, -1):
        if history[i]["role"] == "user":
            return history[i:]
    return []


_NOT_MODIFIERS = "to|the|of|and|or|for|in|on|with|that|which|is|are|was|be"


def instance_said_last(history: list[dict[str, str]], kind: str) -> bool:
    """The last exchange brings in one thing of the kind without a name ('opening a paper trading account'):
    'that account' right after it points back there (read 41, ce-06b319e6923d1104)."""
    text = "\n".join(h["content"] for h in last_exchange(history))
    modifier = rf"(?:(?!(?:{_NOT_MODIFIERS})\b)[\w-]+\s+)"
    return bool(re.search(rf"\b(?:an?|your|one)\s+{modifier}{{0,3}}{re.escape(kind)}\b(?![\w-])", text, re.I))


def topic_singles_out(history: list[dict[str, str]], names: list[str], asked: list[str] | None = None) -> bool:
    """One candidate is what the user keeps asking about (said in two or more user turns) and the user says no
    other: the talk's topic is the obvious referent ('that planet' in a talk about Jupiter whose answers compare
    it with Earth). `asked`: the user turns as their human rewrites read them ('What was its religion?' asks about
    the Byzantine Empire), when known."""
    users = asked if asked is not None else [h["content"] for h in history if h["role"] == "user"]
    by_user = [sum(says_apart(u, n, names) for u in users) for n in names]
    counts = sorted(by_user)
    if len(counts) < 2 or counts[-2] != 0 or counts[-1] == 0:
        return False
    if counts[-1] >= 2:
        return True
    # Said once by the user, by no one else but in passing: the answers keep to it ('it' after a talk on Juno's
    # and Galileo's Jupiter findings whose answer compares one moon with Mars; read 24, ce-c7792ee90b487118).
    sentences = [s for h in history for s in tx.sentences(h["content"])]
    said = [sum(tx.says(s, n) for s in sentences) for n in names]
    top = said[by_user.index(counts[-1])]
    return top >= 3 and all(top >= 3 * c for i, c in enumerate(said) if by_user[i] == 0)


def says_apart(text: str, name: str, names: list[str]) -> bool:
    """The text says `name` other than inside another candidate's alias: 'the eastern roman empire' says the
    Byzantine Empire, not the Roman Empire too."""
    for other in names:
        if tx.same_thing(other, name):
            continue
        for alias in tx.aliases_of(other):
            if tx.content_stems(name) <= tx.content_stems(alias) and not tx.same_thing(alias, name):
                text = re.sub(rf"(?i)\b{re.escape(alias)}\b", " ", text)
    return tx.says(text, name)


def user_named_instead(history: list[dict[str, str]], name: str) -> str | None:
    """Another thing of `name`'s kind that the user's own turns name, when none of them names `name`: 'What are the
    laws for pedestrians in it?' after a talk the user began on New York and the answers moved to California could
    mean either (reads 56 and 60, ce-b3315bbf03d4113a, ce-a36729fdd62e2364)."""
    kind = tx.kind_of(name)
    users = "\n".join(h["content"] for h in history if h["role"] == "user")
    if not kind or not users or tx.mentions(users, name) or tx.says(users, name):
        return None
    named = [*tx.named_of_kind(users, kind, [users]), *(n for n in tx.lexicon_names().get(kind, []) if tx.mentions(users, n))]
    return next((n for n in named if not tx.same_thing(n, name) and not tx.mentions(name, n)), None)


def pronoun_rivals(history: list[dict[str, str]], kind: str, asked: list[str] | None = None) -> list[str]:
    """What a pronoun right after `history` could mean: two or more things of its kind in the last exchange, none
    singled out by its user turn; when the last exchange names none of the kind, two or more in the turns before
    it ('Is it still used?' after two protocols were compared, then a question on port numbers):
    nothing recent singles one out. [] when the last exchange names one, fewer than two are named, or the talk's
    topic is one of them (`topic_singles_out`; `asked`: the user turns as their rewrites read them, so 'Can women
    play it?' asks about soccer)."""
    last = last_exchange(history)
    found = rivals(last, kind)
    if not found and not tx.named_of_kind("\n".join(h["content"] for h in last), kind):
        found = rivals(history[: len(history) - len(last)], kind, user="")
    return [] if topic_singles_out(history, found, asked) else found


def tied_by_query_names(query: str, history: list[dict[str, str]], names: list[str]) -> str | None:
    """The one candidate that the history says beside the names the question keeps, in the same sentences, when
    it says no other candidate there: 'Did Juno and Galileo find cyclones on it?' after a talk where Juno and Galileo
    go with Jupiter (and hardly ever with Earth) is about Jupiter (read 23, ce-6226412eff8177fc)."""
    if len(names) < 2:
        return None
    brands = {str(b) for b in tx.lexicon().get("brand_prefixes", [])}  # 'IBM Cloud' goes with every product
    kept = [k for n in tx.names_in(query) for k in re.split(r"\s+(?:and|&)\s+", n)
            if not any(tx.same_thing(k, c) for c in names) and k not in brands]
    if kept:
        sentences = [s for h in history for s in tx.sentences(h["content"]) if any(tx.mentions(s, k) for k in kept)]
    else:
        # No name kept: the question's own content words, two or more in a sentence ('What kind of support is
        # available for the account type?' after a talk whose support sentences are all about one account).
        own = (tx.content_stems(query) - set().union(*(tx.content_stems(n) for n in names))
               - {tx.stem(w) for w in tx.anaphora()})
        sentences = [s for h in history for s in tx.sentences(h["content"]) if len(tx.content_stems(s) & own) >= 2]
        # A sentence that says three or more of the question's words of one candidate only ('France ... a large
        # budget deficit and a large public debt' for 'your claim about its budget deficit and public debt'; read 30,
        # ce-6ebeedc8fd6ee223) ties the question to it, when no such sentence says another.
        close = [s for s in sentences if len(tx.content_stems(s) & own) >= 3]
        kind = tx.kind_of(names[0])
        # Such a sentence may name a thing of the kind that is no candidate here (France, said before the last
        # exchange named four other countries; read 31, ce-0b87a9a290496f02): it still ties the question.
        beyond = [n for s in close for n in tx.names_in(s) if kind and tx.kind_of(n, [s]) == kind]
        said = [n for n in names if any(tx.says(s, n) for s in close)]
        said += [n for n in beyond if not any(tx.same_thing(n, m) for m in said)]
        if len(said) == 1:
            return said[0]
    counts = [sum(tx.says(s, n) for s in sentences) for n in names]
    ranked = sorted(counts, reverse=True)
    # Three times as often as any other: a passing comparison ('storms as large as Earth') does not make a rival.
    return names[counts.index(ranked[0])] if ranked[0] >= 3 and ranked[0] >= 3 * ranked[1] else None


# --- records of a kind phrase (kind_reference, kind_switch, pronoun_reference) ---


def kind_positive(ctx: TurnContext, kq: KindQuery, history: list[dict], source: dict, names: list[str],
                  category: str, method: str, version: str, pair: str | None = None, named_here: bool = True) -> Record:
    """A positive whose readings name `names` (from the history, or the block's names of the kind). Its
    clarification names them only when the history does (`named_here`); else it asks openly."""
    rng = ctx.rng(f"{method}|clarify|{source.get('conversation_id')}|{source.get('turns')}")
    ref = kq.referent
    shown = list(names[:6]) if named_here else []  # the readings' names: a clarification offers no other
    rng.shuffle(shown)
    question, pattern = clarification("kind", rng, options=shown if len(shown) >= 2 else [], head=tx.kind_word(ref.kind),
                                      heads=tx.plural(ref.kind))
    return kind_record(ctx, kq, history, source, method, version, pair or kind_pair(ctx, 0), needs_clarification=True,
                       category=category, interpretations=[kq.reading(n) for n in names[:6]],
                       target={"clarification": question}, clarification_pattern=pattern)


def passage_reader(ctx: TurnContext, kq: KindQuery, method: str) -> Callable[[Record, list[Passage]], Record]:
    """How a positive's post-retrieval copy is read when its readings came from beyond the record (names asked about
    in the block, the kind lexicon): with the things of its kind that its passages name, when they name two or more,
    offered by name ('Which mission: Juno or Perseverance?'). Readers held names the copy never shows (reads 69, 70:
    Europa Clipper and Galileo over passages about Juno and Perseverance). Readings the history gave stay."""
    ref = kq.referent
    pronoun = kq.phrase.lower() in tx.anaphora()

    def reread(record: Record, passages: list[Passage]) -> Record:
        from_history = record.history and record.category != "underspecified_entity"
        if not record.needs_clarification or from_history or not ref.kind:
            return record
        texts = [p.title + "\n" + p.text for p in passages]
        turns = [{"role": "assistant", "content": t} for t in texts]
        names = [n for n in candidates(turns, ref, texts)
                 if not tx.says(kq.query, n) and _said_as_name(n, texts) and not _kind_inside(n, ref.kind)][:6]
        if len(names) < 2:
            return record
        rng = ctx.rng(f"{method}|retrieved|{record.query}|{len(record.history)}|{len(passages)}")
        shown = list(names)
        rng.shuffle(shown)
        if pronoun:
            question, pattern = clarification("referent", rng, options=shown, anaphor=kq.phrase)
        else:
            question, pattern = clarification("kind", rng, options=shown, head=tx.kind_word(ref.kind),
                                              heads=tx.plural(ref.kind))
        return replace(record, category="multiple_interpretations", interpretations=[kq.reading(n) for n in names],
                       target={"clarification": question}, clarification_pattern=pattern)

    return reread


def _kind_inside(name: str, kind: str) -> bool:
    """No one thing of the kind: its kind noun modifies another noun ('Space Technology Mission Directorate'), it
    joins two names ('Cassini and Galileo'), or it is a region's adjective ('North American' of 'North American
    rivers')."""
    words = tx.words(name)
    stems = [tx.stem(w) for w in words]
    if kind in stems[:-1] and stems[-1] != kind and words[-1][:1].isupper():
        return True
    return " and " in name or all(tx.is_compass(w) or tx.is_demonym(w) for w in words)


def _said_as_name(name: str, texts: list[str]) -> bool:
    """A passage writes the name capitalised inside a sentence (or it is lower case, as a lexicon name is): a
    sentence's first words are capitalised whatever they are ('Weight dependent sports such as ...')."""
    if not name[:1].isupper():
        return True
    for text in texts:
        for m in re.finditer(re.escape(name), text):
            if re.search(r"\w[,;]?\s+(?:the\s+)?$", text[: m.start()]) and not re.search(r"[.!?:]\s+(?:the\s+)?$", text[: m.start()]):
                return True
    return False


def kind_negative(ctx: TurnContext, kq: KindQuery, history: list[dict], source: dict, name: str,
                  method: str, version: str, pair: str | None = None, via: str = "") -> Record:
    """The twin: the same words after a history that names exactly one thing of the kind (or, `via`, names
    something that singles it out: the Arizona Cardinals for the NFL)."""
    same = tx.same_thing(name, tx.clean_name(kq.referent.name))
    resolved = kq.referent.standalone if same else kq.reading(name)
    return kind_record(ctx, kq, history, source, method, version, pair or kind_pair(ctx, 0), needs_clarification=False,
                       category="hard_negative", interpretations=[resolved], target=clear_target(),
                       resolution={"source": "history", "turn_index": resolving_turn(history, via or name), "document_id": None,
                                   "referent": name, "resolved_query": resolved})


def kind_record(ctx: TurnContext, kq: KindQuery, history: list[dict], source: dict, method: str, version: str,
                pair: str, **label) -> Record:
    """The kind-phrase or pronoun query after `history`; `label` holds the fields that differ by label."""
    return Record(domain=ctx.conv.domain, setting="pre_retrieval", history=history, query=kq.query, documents=[],
                  pair_id=pair, provenance=ctx.provenance(method, version, history_source=source), **label)
