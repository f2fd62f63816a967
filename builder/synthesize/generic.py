"""Making a standalone query generic ('the Penobscot River' -> 'the river' or 'it'), shared by the
generators that build a referent-less query and then decide what resolves it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from builder.conversation import Passage
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection
from builder.synthesize.compounds import rivals_of
from builder.synthesize.context import TurnContext


@dataclass
class Generalized:
    entity: tx.Entity
    query: str  # the standalone query with the entity made generic
    generic: str  # what replaced it: "the river" or a pronoun
    category: str  # underspecified_entity (generic noun) or unresolved_reference (pronoun)
    standalone: str = ""  # the human standalone query the entity was taken from
    indefinite: str = ""  # 'an Earth satellite': the standalone asked about a sort of thing, not one of them


def generalize(ctx: TurnContext, method: str) -> Generalized | Rejection:
    """Make the standalone query's key entity generic: 'the Penobscot River' -> 'the river', else -> 'it'."""
    passages = ctx.relevant_passages()
    entity = tx.key_entity(ctx.standalone, [p.title for p in passages], [p.text for p in passages])
    if entity is None:
        return ctx.reject(method, "no key entity in the standalone query", ctx.standalone)
    if "®" in entity.text or "™" in entity.text:
        return ctx.reject(method, f"'{entity.text}' is a trademark string", ctx.standalone)
    if re.match(r"\s*\(", ctx.standalone[entity.end:]):
        # 'using Virtual Private Cloud (VPC)' -> 'using the cloud (VPC)': the bracket still says which.
        return ctx.reject(method, f"a name in brackets follows '{entity.text}'", ctx.standalone)
    if re.match(r"(?i)(?:an?|the)\s", entity.text):
        return ctx.reject(method, f"'{entity.text}' is a noun phrase, not a name", ctx.standalone)
    if tx.defines_type(ctx.standalone, entity):
        return ctx.reject(method, f"'{tx.defines_type(ctx.standalone, entity)} {entity.text}' asks what a type is", ctx.standalone)
    if tx.one_of_list(ctx.standalone, entity):
        # 'credit rating or credit score' -> 'credit rating or the score' (read 65, ce-bcb33d819d355ed7); "Jupiter's
        # Moon, Europa, like": the name beside it still says which one.
        return ctx.reject(method, f"'{entity.text}' is one of a list; a kind phrase there breaks the question", ctx.standalone)
    sort = re.search(r"(?i)\b((?:types?|kinds?|sorts?|categories|forms?)\s+of)\s+$", ctx.standalone[: entity.start])
    if sort:
        # 'How many types of Lite plans does IBM Cloud offer?' -> '... types of the plans ...' asks about plans in
        # general: one reading, not a choice of plan (read 28, ce-bc1d8344c1828f7f).
        return ctx.reject(method, f"'{sort.group(1)} {entity.text}' asks about sorts of the kind", ctx.standalone)
    if entity.head and (odd := tx.not_a_kind_name(ctx.standalone, entity)):
        return ctx.reject(method, odd, ctx.standalone)
    article = re.search(r"(?i)\b(an?)\s+$", ctx.standalone[: entity.start])
    indefinite = f"{article.group(1)} {tx.clean_name(entity.text)}" if article else ""
    if indefinite and not entity.head:
        # 'work for a FAANG' -> 'work for it': a pronoun stands for one thing, not a sort of thing.
        return ctx.reject(method, f"'{indefinite}' names no one thing for a pronoun to stand for", ctx.standalone)
    if entity.head and tx.lowercase_modifier(ctx.standalone, entity):
        return ctx.reject(method, f"'{tx.words(ctx.standalone[: entity.start])[-1]}' modifies '{entity.text}'", ctx.standalone)
    longer = tx.inside_longer_name(ctx.standalone, entity, [p.title + "\n" + p.text for p in passages])
    if longer:
        return ctx.reject(method, f"'{entity.text}' ends the name '{longer}'", ctx.standalone)
    if entity.head:
        generic, category = tx.generic_phrase(entity), "underspecified_entity"
    elif tx.is_compass(tx.clean_name(entity.text)):
        # 'How did people escape from East to West Germany?': 'East' is cut from 'East Germany' (read 40,
        # ce-1f2bc58a0516ea36); 'escape from it to West Germany' read with 'East' is no question.
        return ctx.reject(method, f"'{entity.text}' is a direction, cut from a longer name", ctx.standalone)
    elif not tx.is_name(tx.clean_name(entity.text), None):
        # 'how it opens and closes' is no thing a pronoun can stand for; swapping it breaks the question.
        return ctx.reject(method, f"'{entity.text}' is no name; a pronoun in its place breaks the question", ctx.standalone)
    elif tx.kind_of(tx.clean_name(entity.text), [p.title + "\n" + p.text for p in passages]) in tx.person_kinds():
        return ctx.reject(method, f"'{entity.text}' is a person; 'it' cannot stand for them", ctx.standalone)
    elif tx.words(entity.text)[-1][:1].islower():
        # 'NASA scientists', 'Guinea pig': a name and a common noun make no name a pronoun stands for.
        return ctx.reject(method, f"'{entity.text}' ends in a common noun; it is no name", ctx.standalone)
    elif tx.modifies_noun(ctx.standalone, entity):
        return ctx.reject(method, f"'{entity.text}' modifies a noun; a pronoun there is ungrammatical", ctx.standalone)
    elif tx.ends_noun_phrase(ctx.standalone, entity):
        # 'which FAANG pays the most?' -> 'which it pays the most?'
        return ctx.reject(method, f"'{entity.text}' ends a noun phrase; a pronoun there is ungrammatical", ctx.standalone)
    elif re.search(r"(?i)\b(?:the|this|that|a|an)\s+[a-z][a-z-]+\s+$", ctx.standalone[: entity.start]):
        # 'made by the spacecraft Galileo': a pronoun after the kind noun is ungrammatical ('the spacecraft it').
        return ctx.reject(method, f"a noun stands before '{entity.text}'; a pronoun there is ungrammatical", ctx.standalone)
    else:
        generic, category = tx.pronoun_for(ctx.standalone, entity), "unresolved_reference"
    query = tx.replace_entity(ctx.standalone, entity, generic)
    if generic.startswith("the "):
        # 'the last Roman emperor' -> 'the last emperor', not 'the last the emperor'.
        query = re.sub(r"(?i)\b((?:the|a|an|this|that|my|your|our)\s+[a-z][a-z-]*\s+)the\s+(?=" +
                       re.escape(generic[4:]) + r"\b)", r"\1", query, count=1)
    broken = tx.broken_replacement(ctx.standalone, entity, query)
    if broken:
        return ctx.reject(method, broken, ctx.standalone)
    first = tx.words(ctx.standalone)[:1]
    if first and first[0].lower() in tx.stopwords() and tx.words(query)[:1] != first:
        return ctx.reject(method, f"generalizing '{entity.text}' would swallow '{first[0]}'", ctx.standalone)
    if query == ctx.standalone or tx.mentions_any(query, entity.text) and not entity.head:
        return ctx.reject(method, f"could not generalize '{entity.text}'", ctx.standalone)
    if len(tx.content_stems(query) - {entity.head}) < (1 if entity.head else 2):
        # 'Could you explain what it is?' fits every conversation and would tie them all into one split group.
        return ctx.reject(method, f"too little left after removing '{entity.text}'", ctx.standalone)
    return Generalized(entity, query, generic, category, ctx.standalone, indefinite)


def no_resolved_twin(ctx: TurnContext, got: Generalized, method: str) -> Rejection | None:
    """'what an Earth satellite orbit is' asks about a sort of thing: 'the satellite orbit' is open in any chat, but
    no history resolves it to what the user asked (read 20, ce-c29043a13e581993). The rejection, or None."""
    if got.indefinite:
        return ctx.reject(method, f"'{got.indefinite}' names no one thing; no history resolves '{got.generic}' to it",
                          got.query)
    head = got.entity.head
    if not head and (others := other_names_last(ctx.history, got.entity.text)):
        # 'What did it discover at Jupiter?' after an answer naming Juno and Galileo; 'Is it a lethal disease?' after
        # 'Is there a cure for HIV?' and an answer that also names herpes (read 26): 'it' is not settled.
        return ctx.reject(method, f"the last exchange names another candidate for '{got.generic}': {others[0]}", got.query)
    last = "\n".join(h["content"] for h in ctx.history[-2:])
    if head and len(kinds := rivals_of(last, head)) >= 2:
        # 'Is the cloud free?' right after an answer on public, private and hybrid clouds (read 24, ce-0e21aba2842e0626)
        return ctx.reject(method, f"the last exchange names kinds of {tx.plural(head)} ({', '.join(k.phrase for k in kinds[:3])}); "
                                  f"'{got.generic}' could be any", got.query)
    return None


def other_names_last(history: list[dict[str, str]], name: str, unknown_kinds: bool = False) -> list[str]:
    """Names of `name`'s kind in the history's last exchange, other than `name` and the things of its question. A
    name of no known kind has no rivals ('September 28' and 'Check' are none of 'Grenade'), unless `unknown_kinds`:
    then every name of no known kind is a rival of another ('Juno' and 'Galileo')."""
    kind = tx.kind_of(name)
    last = [h["content"] for h in history[-2:]]
    return [n for n in tx.names_in("\n".join(last)) if (kind or unknown_kinds) and not tx.same_thing(n, name)
            and not tx.mentions(name, n) and tx.kind_of(n) == kind]


def with_referent(g: Generalized, name: str) -> str:
    """The generic query read with another referent: the standalone query naming `name` in the entity's place."""
    s, e = g.standalone, g.entity
    # 'a Lite account' -> 'an Enterprise account'; "the Byzantine Empire's conversion" -> "the Roman Empire's"
    before = tx.with_the(s[: e.start]) if tx.takes_the(s[: e.start], name, e.head or "") else tx.fit_article(s[: e.start], name)
    if tx.opens_with_owner(name):  # "of NASA's Deep Impact mission", not "of the NASA's"
        before = re.sub(r"(?i)(?<=\w )(?:the|this|that)\s+$", "", before)
    elif tx.head_of(name) is None and all(w[:1].isupper() or w[:1].isdigit() for w in tx.words(name)) \
            and not tx.takes_the(before, name, e.head or ""):
        # 'looking at the moon' read as Europa, 'from the states' as North Carolina: a name with no kind noun
        # ('the Interrail Pass' keeps it) is said bare (read 33).
        before = re.sub(r"(?<=\w )the\s+$", "", before)
    before = tx.without_name_article(tx.agree_auxiliary(before, e.text, name), name)  # 'to The Office', 'Does IBM'
    out = before + tx.with_possessive(name, e.text) + s[e.end :]
    return out[0].upper() + out[1:]


def distinct(names: list[str]) -> list[str]:
    """Drop names that repeat another one ('Covid' after 'COVID-19')."""
    out: list[str] = []
    for name in names:
        if not any(tx.mentions_any(name, o) or tx.mentions_any(o, name) for o in out):
            out.append(name)
    return out


def about(passage: Passage, phrase: str) -> bool:
    return tx.mentions(passage.title + "\n" + passage.text, phrase)


def title_name(title: str) -> str:
    """'Yale University - Admissions | Wiki' -> 'Yale University'."""
    return re.split(r"\s+[-|:–]\s+|\s*\|\s*", title.strip())[0].strip()


def good_name(name: str) -> bool:
    """A rival reading must be named like a thing: capitalized, short, not a clause ('How did ancient', 'File a
    complaint', a page title that is an instruction)."""
    toks = tx.words(name)
    return (
        0 < len(toks) <= 6
        and not (len(toks) > 2 and toks[1].lower() in ("a", "an", "the"))
        and any(t[:1].isupper() for t in toks)
        and toks[0].lower() not in tx.lexicon()["wh_words"]
        and toks[0].lower() not in tx.stopwords()
        and not all(t.isdigit() for t in toks)
        # 'Jupiter's cyclones', 'Friends air': a lowercase last word must be a kind noun ('Lite plan').
        and not (len(toks) > 1 and toks[-1][:1].islower() and not tx.singular(toks[-1]))
    )
