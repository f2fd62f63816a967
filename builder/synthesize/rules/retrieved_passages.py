"""Post-retrieval positives and hard negatives from passages retrieved for the generic query itself.

"When was Yale University founded?" becomes "When was the university founded?". That generic query is
run through BM25 over the pooled passages of its domain, as a RAG system would, leaving out the
passages the original named query retrieved (they would leak the answer). The label follows from how
many distinct entities of the kind ("university") the top-k passages cover:

- two or more: `multiple_interpretations`; the clarification names them, each with a short fact from its
  passage, and every interpretation is the generic query with one of them named;
- exactly one, the query's own referent, after the chat the user's own words leaned on: a hard negative
  resolved by the documents (they agree with the history);
- exactly one and nothing in the chat singling it out (no history, a block-mate's, the own start before it
  names the kind, or a user who had to name it): `underspecified_entity`, since passages retrieved for vague
  words say nothing about what the user meant ("Do you mean the Penobscot River, ..., or another river?");
- otherwise the turn is rejected, with the reason.

k is drawn per generic query from one seeded list for both labels, so the passage count says nothing
about the label; at k=1 a passage that lists two or more things of the kind is a single-passage positive.

Most records follow the turn's own conversation, as human post-retrieval questions do: the positive after
the conversation's start cut before it names any thing of the kind (or after a history naming two or more
of the readings), the hard negative after the full history. A history that names exactly one thing of the
kind settles the question (a hard negative resolved by the history); one naming a thing of the kind the
passages lack is rejected. A minority (`fresh_share`, `donor_share`, and `alone_rate` for turns with no
usable own history) is asked with no history or after a block-mate's history.
"""

from __future__ import annotations

import dataclasses
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, ClassVar, Iterator

import yaml

from builder.conversation import Passage
from builder.record import Record, clear_target
from builder.synthesize import corpus as corpus_mod
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.clarify import conjunction, join_options
from builder.synthesize.context import TurnContext, donor_history, history_text, pair_id

# A kind noun this vague names no kind of thing ("Hamlet is a term ...").
_VAGUE = frozenset(
    "term word name way process part type kind form set group number list series of thing something "
    "one member example variety lot piece version concept idea method means result "
    # ordinals, superlatives and participles a definition can end on ('Juno is the first ...')
    "first second third fourth last final only next biggest largest smallest oldest highest longest best most "
    "built made known used unit".split()
)
_STOP_NP = frozenset(
    "of in at on that which who whom whose from by for with and or to located based founded written "
    "where when as between since near than but known called used made".split()
)
# The passages name the options, so most questions name them too (MTRAG-UN's post-retrieval references mostly do).
_PATTERN_WEIGHTS = {"hedge": 0.6, "list": 0.2, "open": 0.2}
@lru_cache(maxsize=1)
def _stops() -> frozenset[str]:
    # YAML reads a bare 'no' / 'on' in lexicon.yaml as a boolean, so those stop words are added back here.
    return frozenset(w for w in tx.stopwords() if isinstance(w, str)) | {"no", "not", "yes", "on", "off", "another", "every"}


# Words that open an instruction, not a name ('Select Configure Bot', 'Click Create').
_IMPERATIVES = frozenset("select click choose visit view enter type press tap go check open navigate expand".split())
_BOUNDARY = re.compile(r"[,:](?!\d)|(?<!\d)[,:]|;|\(|\)|\s(?:which|who|whose|and|but|while|whereas|although|because)\s|\s[-–—]\s")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])|\n+")
_MARKS = re.compile(r"[®™©]")


@dataclass(frozen=True)
class Kind:
    noun: str  # singular, lowercase ("university")
    plural: str

    @property
    def phrase(self) -> str:
        return f"the {self.noun}"


@dataclass(frozen=True)
class Generic:
    entity: tx.Entity
    kind: Kind
    query: str  # the standalone query with the entity made generic
    article: bool = False  # the standalone query said 'the <entity>'
    referent: str = ""  # the entity's one name ('United States' for 'USA')


@dataclass(frozen=True)
class Option:
    name: str  # as the passage writes it ("Yale University")
    fact: str  # a short fact from the passage ("founded in 1701"); "" when the passage is its page
    passage_id: str

    quote: str = ""  # else the passage's own words about it that bear on the question

    def shown(self) -> str:
        name = tx.in_running_text(self.name)  # 'like the Sun', not 'like Sun'
        if self.fact:
            return f"{name}, {self.fact}"
        return f"{name} (“{self.quote}”)" if self.quote else name


@lru_cache(maxsize=1)
def kind_lexicon() -> tuple[dict[str, str], dict[str, str]]:
    """(name -> kind, alias -> one name for its group), from the shared lexicon's `kinds` and `aliases`."""
    lex = tx.lexicon()
    kinds = {str(n): kind for kind, names in (lex.get("kinds") or {}).items() for n in names}
    aliases: dict[str, str] = {}
    for group in lex.get("aliases") or []:
        names = [str(n) for n in group]
        head = next((n for n in names if n in kinds), names[0])
        aliases.update({n: head for n in names if n != head})
    return kinds, aliases


def canonical(name: str) -> str:
    return kind_lexicon()[1].get(name, name)


@lru_cache(maxsize=None)
def _lexicon_pattern(noun: str) -> re.Pattern | None:
    kinds, aliases = kind_lexicon()
    names = [n for n, k in kinds.items() if k == noun] + [a for a, n in aliases.items() if kinds.get(n) == noun]
    if not names:
        return None
    # Longest first, so 'West Virginia' is not read as 'Virginia'; 'New York City' is a city, not the state.
    alternation = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(r"(?<![\w.])(" + alternation + r")(?![\w]|\s+City)")


@lru_cache(maxsize=1)
def templates() -> dict:
    return yaml.safe_load((Path(__file__).parent.parent / "retrieved_templates.yaml").read_text(encoding="utf-8"))


# --- kinds and the generic query ------------------------------------------------------------------


def _plural(noun: str) -> str:
    heads = tx.lexicon()["heads"]
    if noun in heads:
        return heads[noun]
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def _singular(word: str) -> str:
    """'universities' -> 'university', 'series' -> 'series' (the lexicon's plurals first, then text.stem)."""
    low = word.lower()
    heads = tx.lexicon()["heads"]
    if low in heads:
        return low
    plural_of = {v: k for k, v in heads.items()}
    return plural_of.get(low) or tx.stem(low)


def _kind_word(word: str) -> str | None:
    """A lowercase common noun usable as a kind, singular; None for verbs, vague or odd words."""
    if not re.fullmatch(r"[a-z][a-z\-]{2,}", word):
        return None
    low = _singular(word)
    if low in _VAGUE or low in _stops() or low in tx.lexicon()["verbs"] or low.endswith(("ing", "ly", "ed")):
        return None
    return low


def kind_of_name(name: str) -> str | None:
    """The kind a name carries in its last word ('Yale University' -> 'university'), from the lexicon."""
    if len(tx.words(name)) < 2:
        return None
    head = _head_word(name)
    return head if head in tx.lexicon()["heads"] else None


_COLLECTIVE = frozenset("series group set chain collection network family pair range number kind type form system".split())


def defined_kind(name: str, texts: list[str]) -> str | None:
    """The kind a passage defines a name as: 'Hamlet is a tragedy written by ...' -> 'tragedy',
    'Red Hat OpenShift on IBM Cloud is a Kubernetes-based platform' -> 'platform',
    'The Great Wall of China is a series of fortifications' -> 'fortification'."""
    pattern = re.compile(
        r"(?i:\b" + re.escape(name) + r")(?:\s+(?:on|for|in|of)(?:\s+[A-Z][\w\-]*){1,3})?(?:\s*\([^)]*\))?\s*,?\s+"
        r"(?:is|was|are|were)\s+(?:a|an|the|one of the)\s+([^.;:()]{3,120})"
    )
    for text in texts:
        for m in pattern.finditer(_MARKS.sub("", text)):
            words_ = m.group(1).split()
            if len(words_) > 2 and words_[0].lower() in _COLLECTIVE and words_[1].lower() == "of":
                words_ = words_[2:]  # 'a series of fortifications'
            phrase = []
            for w in words_:
                bare = w.strip(",\"'")
                if bare.lower() in _STOP_NP or w.endswith(","):
                    if w.endswith(",") and bare.lower() not in _STOP_NP:
                        phrase.append(bare)
                    break
                phrase.append(bare)
            if phrase:
                kind = _kind_word(phrase[-1])
                if kind:
                    return kind
    return None


def candidates(standalone: str, passages: list[Passage]) -> list[tx.Entity]:
    """The query's key entity, then its other names: each can be made generic on its own."""
    key = tx.key_entity(standalone, [p.title for p in passages], [p.text for p in passages])
    out = [key] if key else []
    for e in tx.entities(standalone):
        if all(e.end <= o.start or e.start >= o.end for o in out):
            out.append(e)
    return out


def generalize(
    standalone: str, passages: list[Passage], more: Callable[[str], list[Passage]] = lambda name: [], entity: tx.Entity | None = None
) -> Generic | str:
    """The standalone query with its key entity (or `entity`) made a kind phrase, or the reason it cannot be.

    The kind comes from the name ('Yale University'), else from a passage that defines it ('Hamlet is a
    tragedy'): the turn's own passages, then `more(name)` (passages retrieved for the name itself)."""
    entity = entity or tx.key_entity(standalone, [p.title for p in passages], [p.text for p in passages])
    if entity is None:
        return "no key entity in the standalone query"
    if entity.text.endswith(("'s", "’s")):  # the possessive stays in the query: 'the planet's rings'
        entity = tx.Entity(entity.text[:-2], entity.head, entity.start, entity.end - 2)
    if _MARKS.search(entity.text) or re.search(r"\s(?:and|or)\s|,", entity.text):
        return f"'{entity.text}' is not one name"
    if tx.one_of_list(standalone, entity):
        # 'an IRA or a 401K' -> 'the account or a 401K' (read 65, ce-9f53f899fad4a989); 'the moon, Europa, like':
        # an appositive names the thing (read 30, ce-ceb70b284c852c77).
        return f"'{entity.text}' is one of a list; a kind phrase there breaks the question"
    noun = kind_lexicon()[0].get(canonical(entity.text)) or kind_of_name(entity.text) or defined_kind(entity.text, [p.title + "\n" + p.text for p in passages])
    if not noun:
        noun = defined_kind(entity.text, [p.title + "\n" + p.text for p in more(entity.text)])
    toks = tx.words(entity.text)
    if not noun and len(toks) >= 2:
        # A name and its kind noun ('Lite plan' -> 'plan'); a lowercase phrase only with a lexicon kind.
        # A capitalized first word at the start of the query is no sign of a name ('Legal immigration ...').
        named = all(t[:1].isupper() or t[:1].isdigit() for t in toks[:-1]) and standalone[: entity.start].strip() != ""
        word = _kind_word(toks[-1])
        said = " ".join(p.title + "\n" + p.text for p in passages)
        # The word must be used as a noun in the turn's passages ('the plan', 'a plan'), not as a verb ('manage').
        as_noun = bool(word) and re.search(r"(?i)\b(?:a|an|the|this|each)\s+(?:\w+\s+)?" + re.escape(toks[-1]) + r"\b", said)
        noun = word if word and as_noun and (named or word in tx.lexicon()["heads"]) else None
    if not noun:
        return f"no kind noun for '{entity.text}'"
    kind = Kind(noun, _plural(noun))
    last = tx.words(entity.text)[-1].lower()
    if last != noun and _singular(last) == noun:
        return f"'{entity.text}' is plural; its readings would not agree in number"
    if not tx.content_stems(entity.text) - {noun}:
        return f"'{entity.text}' is the kind noun itself"
    phrase = kind.phrase
    before = tx.words(standalone[: entity.start])
    if standalone[: entity.start].endswith(("-", "/")) or (len(before) > 1 and before[-1][:1].isupper()):
        return f"'{entity.text}' is part of a longer name"
    if re.match(r"[\d$£€]", entity.text) or standalone[: entity.start].endswith(("$", "£", "€")):
        return f"'{entity.text}' is an amount"
    if before and before[-1].islower() and before[-1] not in _stops() and (
        before[-1] in tx.ADJECTIVES or (before[-1] not in tx.lexicon()["verbs"] and tx.stem(before[-1]) not in tx.lexicon()["verbs"])
    ):
        # 'a small claims court': the word before belongs to the name; 'a small the court' is no English.
        return f"'{before[-1]}' modifies '{entity.text}'"
    query = tx.replace_entity(standalone, entity, phrase)
    if query == standalone or phrase not in query.lower() or _MARKS.search(query):
        return f"could not generalize '{entity.text}'"
    after = query[query.lower().find(phrase) + len(phrase):]
    if re.match(r"\s+[A-Z]", after):
        return f"generalizing '{entity.text}' splits a name: {query!r}"
    if re.search(r"(?i)\b(?:the|a|an|my|your|our|this|that|its|their|his|her)\s+(?:the|a|an)\b", query):
        return f"generalizing '{entity.text}' breaks the grammar: {query!r}"
    rest = tx.content_stems(query) - {noun}
    if tx.content_stems(entity.text) - {noun} & rest:
        return f"the generic query still names '{entity.text}'"
    if not rest:
        return f"too little left after removing '{entity.text}'"
    if kind.plural != noun and re.search(r"(?i)\b" + re.escape(kind.plural) + r"\b", query):
        return f"the generic query names {kind.plural} and {phrase}: '{query}'"  # 'planets other than the planet'
    first = tx.words(standalone)[:1]
    if first and first[0].lower() in _stops() and tx.words(query)[:1] != first:
        return f"generalizing '{entity.text}' would swallow '{first[0]}'"
    article = bool(re.search(r"(?i)\bthe\s+$", standalone[: entity.start]))
    return Generic(entity, kind, query, article, canonical(entity.text))


# --- entities of a kind in passages ---------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(tx.join_hyphens(_MARKS.sub("", text))) if s.strip()]


def _title_entity(title: str, first_text: str, noun: str) -> str | None:
    """The entity a titled page is about, when it is of the kind: 'Joey (TV series)', 'Yale University'."""
    title = _MARKS.sub("", title).strip()
    m = re.fullmatch(r"(.+?)\s*\(([^)]+)\)", title)
    if m and _singular(tx.words(m.group(2))[-1]) == noun:
        return m.group(1).strip() if _good_name(m.group(1).strip(), strict=False) else None
    name = re.split(r"\s+[-|:–•]\s+|\s*\|\s*", title)[0].strip()
    if not _good_name(name, strict=False):  # page titles are names even in sentence case ('Sickle cell disease')
        return None
    if _head_word(name) == noun:
        return name
    return name if defined_kind(name, [first_text]) == noun else None


def _good_name(name: str, strict: bool = True) -> bool:
    """Named like a thing: capitalized words (the kind noun may be lowercase), not a heading or clause."""
    toks = tx.words(name)
    inner = [t for t in toks[:-1] if t.lower() not in {"of", "the", "de", "and", "for", "&"}] if strict else []
    return (
        0 < len(toks) <= 6
        and toks[0][:1].isupper()
        and toks[0].lower() not in _stops()
        and toks[0].lower() not in tx.lexicon()["wh_words"]
        and not toks[0].lower().endswith("ing")
        and all(t[:1].isupper() or t[:1].isdigit() for t in inner)
        and not all(t.isdigit() for t in toks)
        and not re.search(r"\s(?:and|or|&)\s|,|\.", name)
        and not re.search(r"[a-z]{4,}[A-Z]", name)  # 'CommitteeNew York': words run together in the page
        and not re.search(r"(?<!\bof)\s+the\s", name)  # 'Visit the NASA Eclipse' is a sentence
        and (toks[0].lower() not in tx.lexicon()["verbs"] or tx.opens_name(toks))
        and toks[0].lower() not in _IMPERATIVES
        and not all(t.lower() in tx.genre_words() or _singular(t.lower()) == _head_word(name) for t in toks)  # 'Comedy Series'
    )


def _head_word(name: str) -> str:
    """The noun a name is headed by: 'University of Michigan' -> 'university', 'Penobscot River' -> 'river'."""
    toks = tx.words(name)
    low = [t.lower() for t in toks]
    if "of" in low[1:]:
        return _singular(low[low.index("of", 1) - 1])
    return _singular(low[-1]) if low else ""


def _named_in_text(sentence: str, kind: Kind) -> list[str]:
    """Capitalized names ending in the kind noun ('Harvard University', "Huntington's disease")."""
    nouns = "|".join(sorted({re.escape(kind.noun), re.escape(kind.plural)}, key=len, reverse=True))
    # Not when a name goes on after the kind noun: 'Copyright State of California' names no 'Copyright State'; nor
    # when the kind noun opens a table's field label: '2 : 05 p.m. MST Game weather : ...' names no 'MST Game' (read 35).
    pattern = re.compile(
        r"((?:[A-Z][\w'’&\-]*\s+(?:(?:of|the|de|and)\s+)?){1,4})(?i:(" + nouns + r"))\b"
        r"(?!\s+[A-Z]|\s+of\s+[A-Z]|\s+[a-z]+\s*:)"
    )
    out = []
    for m in pattern.finditer(sentence):
        cut = re.search(r"(?<![\w'’])([A-Z][\w'’&\-]*)\s+$", sentence[: m.start()])
        if cut and cut.group(1).lower() not in _stops():
            # 'the Brooklyn Regional Office of the New York State Attorney General’s Office': a name that goes on to
            # the left past the pattern's reach is cut ('York State ...'), no name (read 67, ce-f678f0c48fccf951).
            continue
        words_ = m.group(1).split()
        dropped = 0
        while words_ and (words_[0].lower() in _stops() or words_[0].lower() in tx.lexicon()["wh_words"]):
            words_, dropped = words_[1:], dropped + 1
        before = sentence[: m.start()] + " ".join(m.group(1).split()[:dropped]) + " "
        if tx.counted_before(before):
            continue  # 'the fifth Shakespearean play': one of several, counted, no name (read 55, ce-80bc8b6f2bc4c273)
        if words_ and words_[-1].lower() in {"of", "the", "de", "and"}:
            continue
        if words_ and m.group(2).lower() == kind.noun:
            name = " ".join(words_ + [m.group(2)])
            if _good_name(name):
                out.append(name)
    return out


def _defined_in_text(sentence: str, noun: str) -> list[str]:
    """'Sickle cell anemia is a disease ...': the subject of a definition of the kind."""
    out = []
    for m in re.finditer(r"^((?:The\s+)?[A-Z][\w'’\-]*(?:\s+[A-Za-z][\w'’\-]*){0,4}?)\s*(?:\([^)]*\))?\s*,?\s+(?:is|was|are|were)\s+(?:a|an|one of the)\s", sentence):
        name = re.sub(r"^The\s+", "", m.group(1))
        if _good_name(name) and defined_kind(name, [sentence]) == noun:
            out.append(name)
    return out


def _listed_in_text(sentence: str, kind: Kind) -> list[str]:
    """Names a sentence lists as things of the kind: 'exchanges such as NYSE and NASDAQ',
    'NYSE and NASDAQ are two different exchanges', 'states ...: Alaska, Florida, Nevada'."""
    plural = re.escape(kind.plural)
    found: list[str] = []
    after = re.search(r"(?i)\b" + plural + r"\b[^.;]{0,40}?(?:such as|including|like|, e\.g\.,?|:)\s+([^.;()]+)", sentence)
    before = re.search(r"^(?:.*?\b)?([A-Z][^.;()]*?)\s+(?:are|were)\s+(?:\w+\s+){0,3}?(?i:" + plural + r")\b", sentence)
    for m in (after, before):
        if not m:
            continue
        pieces = [x.strip() for x in re.split(r",|\band\b|\bor\b", m.group(1)) if x.strip()]
        names = [re.sub(r"^(?:the|The)\s+", "", x) for x in pieces]
        good = [n for n in names if _good_name(n) and len(tx.words(n)) <= 4]
        if len(good) >= 2 and len(good) >= len(names) - 1:  # a real list, not a clause with two names in it
            found.extend(good)
    return found


def fact_about(name: str, sentences: list[str], noun: str) -> str:
    """A short fact the passage states about `name`: 'a private research university in New Haven',
    'founded in 1701', 'which has 14 residential colleges'. Empty when none is found."""
    pattern = re.compile(r"(?<![\w'’])" + re.escape(name) + r"\s*(?:\([^)]*\))?(\s*,)?\s+(.{6,})")
    for sentence in sentences:
        for m in pattern.finditer(sentence):
            if _OBJECT_OF.search(sentence[: m.start()]):
                continue  # 'Every band at the Super Bowl has performed ...' says what the band did (read 30)
            fact = _clause(m.group(2), comma=bool(m.group(1)))
            if fact and noun not in fact.split()[:1]:
                # 'Charlemagne, who inherited the Frankish realm', not 'which' (read 29)
                return re.sub(r"^which\b", "who", fact) if noun in tx.person_kinds() else fact
    return ""


# A name right after a preposition is no subject: the verb after it says what something else did.
_OBJECT_OF = re.compile(r"(?i)\b(?:at|in|on|of|to|for|from|by|with|during|after|before|into|about|than|like)\s+(?:the\s+)?$")

# Verbs whose present tense after a name states a fact ('which measures sea level').
_FACT_VERBS = frozenset(
    "has had measures stores collects returned offers provides covers includes requires supports allows runs hosts "
    "serves flows drains borders contains produces connects manages protects lets uses costs".split()
)


def _clause(after: str, comma: bool = False) -> str:
    """The predicate right after a name, up to the first clause boundary, in one of three safe forms:
    a definition ('is a private research university' -> 'a private research university'), a participle
    ('was founded in 1701', ', founded in 1701' -> 'founded in 1701') or a fact verb ('which measures sea
    level'). At most 10 words; anything else gives no fact rather than half of one."""
    cut = _BOUNDARY.search(after)
    words_ = (after[: cut.start()] if cut else after).rstrip(" .!?\"'").split()
    if len(words_) < 2:
        return ""
    first, second = words_[0].lower(), words_[1].lower()
    participle = re.fullmatch(r"[a-z]{3,}ed", second) and second not in _stops()
    if first in {"is", "are", "was", "were"} and second in {"a", "an"}:
        words_ = words_[1:]
    elif first in {"is", "are", "was", "were"} and participle:
        words_ = words_[1:]
    elif comma and (first in {"a", "an"} or re.fullmatch(r"[a-z]{3,}ed", words_[0])):
        pass  # an appositive or participle set off by a comma
    elif not comma and (words_[0] in _FACT_VERBS or (
        re.fullmatch(r"[a-z]{3,}(?:[^s]s|ed)", words_[0]) and words_[0] not in _stops()
        and re.fullmatch(r"a|an|the|its|their|more|about|over|up|to|in|on|from|\d[\d,.%]*", second)
    )):
        words_ = ["which"] + words_  # a verb with its object: 'which collects particles', 'which returned in 2004'
    else:
        return ""
    if len(words_) > 10 or words_[-1].lower() in _STOP_NP | _stops():
        return ""  # cut inside a phrase: 'which requires that'
    if re.search(r"[\[\]{}<>|*`]", " ".join(words_)):
        return ""  # markup: 'which uses an [eventually consistent](...)' (read 44, ce-69e9aa9ca35a3e0c)
    # 'which is enough' says nothing: a fact needs two content words besides its verb.
    if len(tx.content_stems(" ".join(words_[1:]))) < 2:
        return ""
    return " ".join(words_)


def _same_entity(a: str, b: str, noun: str) -> bool:
    """Aliases and spellings of one thing: 'Yale' / 'Yale University', 'Covid' / 'COVID-19'."""
    if canonical(a) == canonical(b) or tx.same_thing(a, b):
        return True
    ka, kb = tx.content_stems(a) - {noun}, tx.content_stems(b) - {noun}
    if not ka or not kb or ka <= kb or kb <= ka:
        return True
    na, nb = re.sub(r"[^a-z]", "", a.lower()), re.sub(r"[^a-z]", "", b.lower())
    if min(len(na), len(nb)) >= 4 and (na.startswith(nb) or nb.startswith(na)):
        return True
    initials = lambda s: "".join(w[0] for w in tx.words(s) if w.lower() not in _stops()).lower()  # noqa: E731
    return na == initials(b) or nb == initials(a)


# What a passage writes between two names of one thing: ', also referred to as the', ' (', ', or the'.
_ALIAS = re.compile(r"(?i)^\W*(?:also\s+(?:known|referred\s+to|called)\s+as|formerly(?:\s+known\s+as)?|or|\()?\W*(?:the\s+)?$")


def _aliased(a: str, b: str, sentences: list[str]) -> bool:
    """The passage says two names are one thing: 'the Byzantine Empire, also referred to as the Eastern Roman Empire'."""
    for s in sentences:
        i, j = s.find(a), s.find(b)
        if i < 0 or j < 0 or i == j:
            continue
        between = s[i + len(a): j] if i < j else s[j + len(b): i]
        if between.strip() and len(between) <= 40 and re.search(r"(?i)also|formerly|\(|\bor\b", between) and _ALIAS.match(between):
            return True
    return False


# A name said as a yardstick or a vantage point: 'as large as Earth', 'one Earth diameter', 'Earth-sized'.
_YARDSTICK_BEFORE = re.compile(r"(?i)\b(?:as|than|like|from|on|one|two|three|\d[\d.,]*)\s+(?:the\s+)?$")


def _in_passing(sentence: str, start: int, end: int) -> bool:
    """A lexicon name the sentence uses only to measure or place something else, not a thing it is about:
    'polar cyclones as large as Earth', 'the view visible from Earth' in a passage on Jupiter (read 41,
    ce-06e2e19b32808cce offered Earth beside Jupiter for Juno's discoveries)."""
    after = sentence[end:]
    return bool(_YARDSTICK_BEFORE.search(sentence[:start]) or re.match(r"-[a-z]|\s+(?:diameters?|masses|mass|radii|radius)\b", after))


def quote_about(name: str, sentences: list[str], need: frozenset[str]) -> str:
    """The passage's words about `name` that bear on the question: the clause of a sentence naming it
    that shares the most content words with the query, at most 12 words ('Yale was founded in 1701')."""
    best, score = "", 0
    for sentence in sentences:
        if name not in sentence or "http" in sentence or "[" in sentence:
            continue
        for clause in re.split(r";|:|\(|\)|\s[-–—]\s|,\s(?:and|but|while|which|who)\s", sentence):
            words_ = clause.strip(" ,.").split()
            if name not in clause:
                continue  # the clause must be about the name, not about something else in its sentence
            shared = len(tx.content_stems(clause) & need)
            if 4 <= len(words_) <= 12 and shared > score:
                best, score = " ".join(words_), shared
    return best


def kind_options(passages: list[Passage], kind: Kind, query: str = "") -> list[Option]:
    """The distinct entities of `kind` the passages cover, in rank order, each with a fact from its
    passage. A name only listed in passing (no fact, not the page's subject) does not count."""
    out: list[Option] = []
    need = tx.content_stems(query) - {kind.noun} - _stops()
    for p in passages:
        sentences = _sentences(p.text)
        names: list[tuple[str, bool]] = []
        subject = _title_entity(p.title, sentences[0] if sentences else "", kind.noun) if p.title else None
        if subject:
            names.append((subject, True))
        lexicon = _lexicon_pattern(kind.noun)
        for s in sentences:
            if lexicon is not None:  # 'California' is a state by the kind lexicon
                names.extend((canonical(m.group(1)), not _in_passing(s, m.start(), m.end())) for m in lexicon.finditer(s))
            names.extend((n, False) for n in _named_in_text(s, kind) + _defined_in_text(s, kind.noun))
            names.extend((n, True) for n in _listed_in_text(s, kind))  # the passage says it is one of the kind
        for name, is_subject in names:
            last = tx.words(name)[-1].lower()
            if last != kind.noun and _singular(last) == kind.noun:
                continue  # 'Eclipses': a plural page title does not read as one thing of the kind
            if tx.is_title(name, kind.noun):
                continue  # 'Roman Emperor', 'Western emperor': a title many held, no one to pick (read 29)
            if any(_same_entity(name, o.name, kind.noun) for o in out):
                continue
            if any(_aliased(name, o.name, sentences) for o in out):
                continue
            fact = fact_about(name, sentences, kind.noun)
            if fact or is_subject or _head_word(name) == kind.noun:
                quote = "" if fact else quote_about(name, sentences, need)
                out.append(Option(name, fact, p.id, quote))
    return out


def _query_says(got: Generic, name: str) -> bool:
    """The generic query already says words of `name`, its kind noun aside: no reading of its kind phrase."""
    return bool((tx.content_stems(name) - {got.kind.noun}) & (tx.content_stems(got.query) - {got.kind.noun}))


# --- records --------------------------------------------------------------------------------------


def clarification(options: list[Option], kind: Kind, rng: random.Random) -> tuple[str, str]:
    """A hedge (2-3 options) or a list (4-8) naming the passages' candidates; an open question when fewer than two
    are known. A hedge never names three of four or more: 'Do you mean Germany, the United Kingdom or Spain?' over
    five countries says there are no others (read 66, ce-992e774ec1d677d4)."""
    possible = ["open"] if len(options) < 2 else ["hedge"] if len(options) <= 3 else ["list"]
    pattern = rng.choices(possible, weights=[_PATTERN_WEIGHTS[p] for p in possible], k=1)[0]
    template = rng.choice(templates()[pattern])
    if pattern == "list":
        shown = ", ".join(f"{i}) {o.shown()}" for i, o in enumerate(options, start=1))
    else:
        said = [dataclasses.replace(o, name=tx.in_running_text(o.name)).shown() for o in options[:3]]  # 'the Qi wall'
        shown = join_options(said, conjunction(template))  # 'Which league do you have in mind: A, B or C?'
    return template.format(options=shown, head=kind.noun, heads=kind.plural), pattern


def reading(generic: Generic, name: str) -> str | None:
    """The generic query with `name` in place of the kind phrase: one complete interpretation."""
    lexicon_name = name in kind_lexicon()[0]
    if ((tx.words(name)[-1].islower() and not lexicon_name) or (generic.article and not name[:1].islower() and not lexicon_name) or name in tx.lexicon()["definite_names"]) \
            and not re.search(r"['’]s\b", name):
        name = "the " + name  # 'the Lite plan', 'the Snake River' where the query said 'the Penobscot River'
    out = tx.replace_phrase(generic.query, generic.kind.phrase, name)
    if out is None:
        out = tx.replace_phrase(generic.query, f"the {generic.kind.plural}", name)
    return out if out and out != generic.query else None


def _kind_names_in(text: str, options: list[Option], referent: str, kind: Kind) -> list[str]:
    """The distinct things of `kind` that `text` names: the readings it names, the referent, and other
    names of the kind (by the kind lexicon or 'X University'), each once."""
    found = [o.name for o in options if _names(text, o.name, kind.noun)]
    if _names(text, referent, kind.noun):
        found.append(referent)
    lexicon = _lexicon_pattern(kind.noun)
    for s in _sentences(text):
        found.extend(canonical(m.group(1)) for m in (lexicon.finditer(s) if lexicon is not None else ()))
        found.extend(_named_in_text(s, kind))
    out: list[str] = []
    for name in found:
        if not any(_same_entity(name, o, kind.noun) for o in out):
            out.append(name)
    return out


def _prefix_naming_none(history: list[dict[str, str]], names: Callable[[str], list[str]]) -> list[dict[str, str]]:
    """The longest prefix of whole exchanges (user + assistant) in which `names` finds nothing."""
    for i, turn in enumerate(history):
        if names(turn["content"]):
            return history[: i - (i % 2)]  # back to the user turn that opened the exchange
    return history


def _shorter_prefixes(prefix: list[dict[str, str]], n: int) -> list[int]:
    """Up to `n` cuts of whole exchanges shorter than `prefix`, longest first, each keeping one exchange at least."""
    return list(range(len(prefix) - 2, 1, -2))[: max(n, 0)]


def _asked_about(history: list[dict[str, str]], names: list[str], noun: str) -> str | None:
    """The one of `names` the user's own turns ask about, when no user turn names another: the others came only
    from the assistant's replies. The last user turn names it or leans back on it: 'What benefits does it offer?'
    after 'What is Red Hat OpenShift?' still asks about OpenShift (read 62, ce-60a413d1d3d0bd00); a new keyword turn
    ('Virtualization', answered with IBM Cloud Virtualization) has moved on (read 67, ce-ebfaa78e837dda42)."""
    users = [h["content"] for h in history if h["role"] == "user"]
    said = [n for n in names if any(_names(u, n, noun) for u in users)]
    if not users or len(said) != 1:
        return None
    return said[0] if _names(users[-1], said[0], noun) or tx.has_anaphor(users[-1]) else None


def _echoed(said: str, options: list[Option], noun: str) -> tuple[str, str] | None:
    """(option, words) when the history says two or more words of one reading's name that no other reading's
    name has, and none of the others' own words: 'each sample tube collected' points at the Mars Sample
    Collection game, not the Mars Helicopter one. One word is chance ('blood cells': not sickle cell disease)."""
    heard = {w.lower()[:6] for w in tx.words(said)}
    stems = [tx.content_stems(o.name) - {noun} for o in options]
    hits = []
    for i, o in enumerate(options):
        others = set().union(*(st for j, st in enumerate(stems) if j != i))
        own = sorted(w for w in stems[i] - others if len(w) > 3 and not w[:1].isdigit() and w[:6] in heard)
        if own:
            hits.append((o.name, own))
    return (hits[0][0], "', '".join(hits[0][1])) if len(hits) == 1 and len(hits[0][1]) >= 2 else None


def _naming_turn(history: list[dict[str, str]], name: str, noun: str) -> int | None:
    """The latest history turn that names `name` (by `_names`)."""
    for i in range(len(history) - 1, -1, -1):
        if _names(history[i]["content"], name, noun):
            return i
    return None


def _names(text: str, name: str, noun: str) -> bool:
    """True when `text` names `name` (its distinctive words, the kind noun aside)."""
    need = tx.content_stems(name) - {noun}
    return bool(need) and need <= tx.content_stems(text)


def _ks(k: int | list[int]) -> list[int]:
    ks = [k] if isinstance(k, int) else list(k)
    if not ks or any(not isinstance(x, int) or not 1 <= x <= 10 for x in ks):
        raise ValueError(f"retrieved_passages: k must be an integer 1..10 or a list of them, got {k!r}")
    return ks


def _share(name: str, value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"retrieved_passages: {name} must be 0..1, got {value}")
    return value


@register
class RetrievedPassages:
    """The generic query over passages retrieved for it (see the module docstring)."""

    name: ClassVar[str] = "retrieved_passages"
    version: ClassVar[str] = "33"
    needs_corpus: ClassVar[bool] = True
    describe: ClassVar[str] = (
        "The standalone rewrite's key entity made a kind phrase ('When was the university founded?'), with the top-k "
        "passages (k drawn per query from one seeded list, for both labels) BM25 retrieves for that generic query from "
        "the pooled passages of its domain (never the passages the named query retrieved). Two or more entities of the "
        "kind in them (one passage may list several): a positive whose clarification names them with a fact from each "
        "passage, asked after the conversation's own start before it names one of them; exactly one, the query's own "
        "referent: a hard negative the documents resolve after the chat the user's words leaned on, an underspecified_entity "
        "positive naming it when nothing in the chat singles it out (read with other names of the kind only where a passage says "
        "them with the other names the question says); the ambiguous passages after the own history that names the "
        "referent: a hard negative the history resolves. With `prefixes`, shorter starts of that history that name none of "
        "the readings are more same-topic contexts. No positive when the query names something the domain's passages tie "
        "to the referent, nor after a history whose last exchange brings in one thing of the kind without naming it "
        "('your credit score' before 'the score'). A minority is asked with no history or after a block-mate's.")

    def __init__(self, k: int | list[int] = (1, 2, 3, 3, 4, 5, 5, 6, 8), max_entities: int = 3,
                 fresh_share: float = 0.1, donor_share: float = 0.1, alone_rate: float = 0.05,
                 own_history: bool = True, donor_histories: int | None = None, prefixes: int = 1) -> None:
        self.ks = _ks(k)
        if prefixes < 1:
            raise ValueError(f"retrieved_passages: prefixes must be at least 1, got {prefixes}")
        self.prefixes = prefixes  # own-history prefixes naming no thing of the kind, longest first, each a record
        if max_entities < 1:
            raise ValueError(f"retrieved_passages: max_entities must be at least 1, got {max_entities}")
        self.max_entities = max_entities
        self.own_history = own_history
        # fresh_share / donor_share: of the queries asked after their own history, how many are also asked
        # with no history / after a block-mate's; alone_rate: of those with no usable own history, how many
        # are asked at all (with no history or a block-mate's), so most records follow their own conversation.
        self.fresh_share = _share("fresh_share", fresh_share)
        self.donor_share = _share("donor_share", donor_share if donor_histories is None else min(1.0, 0.1 * donor_histories))
        self.alone_rate = _share("alone_rate", alone_rate)

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        if ctx.corpus is None:
            return
        if not tx.is_question(ctx.standalone):
            # "Ah, I'd better go to Google ...": a remark asks nothing a kind phrase could leave open.
            yield ctx.reject(self.name, "the standalone query is no question or request", ctx.standalone)
            return
        passages = ctx.relevant_passages() or ctx.passages
        entities = candidates(ctx.standalone, passages)[: self.max_entities]
        if not entities:
            yield ctx.reject(self.name, "no key entity in the standalone query", ctx.standalone)
        for n, entity in enumerate(entities):
            # Only the kind is read from passages retrieved for the name; they are never shown.
            got = generalize(ctx.standalone, passages, lambda name: ctx.corpus.search(ctx.conv.domain, name, 3), entity)
            if isinstance(got, str):
                yield ctx.reject(self.name, got, ctx.standalone)
                continue
            yield from self._for_generic(ctx, got, n)

    def _for_generic(self, ctx: TurnContext, got: Generic, n: int) -> Iterator[Record | Rejection]:
        method = self.name if n == 0 else f"{self.name}#{n + 1}"  # one pair per generic query of the turn
        rng = ctx.rng(method)
        k = rng.choice(self.ks)  # one seeded draw for every label: the passage count says nothing about it
        # The original query's own passages would leak its answer: retrieval for the generic words decides.
        hits = ctx.corpus.search(ctx.conv.domain, got.query, k, exclude=[p.id for p in ctx.passages])
        if not hits:
            yield ctx.reject(self.name, "no passage retrieved for the generic query", got.query)
            return
        # 'Is rugby similar to rugby?' is no reading: an option the query already names is left out.
        options = [o for o in kind_options(hits, got.kind, got.query) if reading(got, o.name) and not _query_says(got, o.name)]
        referent = got.referent or got.entity.text
        names = lambda text: _kind_names_in(text, options, referent, got.kind)  # noqa: E731
        own: list[tuple[list, dict | None]] = []
        history = ctx.history if self.own_history else []
        prefix = _prefix_naming_none(history, names) if history and options else []
        if history:
            own.append((history, None))
            # Same topic: the conversation's own start, cut before it first names a thing of the kind.
            if prefix and len(prefix) < len(history):
                own.append((prefix, {"conversation_id": ctx.conv.id, "turns": len(prefix)}))
        records = [self._record(ctx, got, k, hits, options, h, s, rng, method) for h, s in own]
        # The minorities are sized on the positives asked after their own history: a turn whose own
        # history only resolves it gets a fresh or block-mate copy at the alone rate, like a turn with none.
        usable = [r for r in records if isinstance(r, Record) and (r.needs_clarification or len(options) < 2)]
        extra: list[str] = []
        if usable:
            extra += ["fresh"] if rng.random() < self.fresh_share else []
            extra += ["donor"] if rng.random() < self.donor_share else []
        elif rng.random() < self.alone_rate:
            total = self.fresh_share + self.donor_share
            extra.append("donor" if total and rng.random() < self.donor_share / total else "fresh")
        for how in extra:
            if how == "donor":
                # A topic switch: a block-mate's history that names no thing of the kind.
                stitched, source = donor_history(ctx, rng, empty_share=0.0, avoid=lambda t: bool(names(t)))
                if stitched:
                    records.append(self._record(ctx, got, k, hits, options, stitched, source, rng, method))
                    continue
                if "fresh" in extra:
                    continue
            records.append(self._record(ctx, got, k, hits, options, [], None, rng, method))
        for cut in _shorter_prefixes(prefix, self.prefixes - 1):
            # Earlier stitch points of the same talk, which name no thing of the kind either: more same-topic
            # contexts, each with its own seeded draw so the records above stay as they were.
            records.append(self._record(ctx, got, k, hits, options, history[:cut], {"conversation_id": ctx.conv.id, "turns": cut},
                                        ctx.rng(f"{method}|prefix|{cut}"), method))
        beside = kd.singled_by_other_name(ctx, referent, got.kind.noun, got.query)
        for record in records:
            if beside and isinstance(record, Record) and record.needs_clarification:
                # 'Is there hydrogen on the planet to make water with the oxygen produced by MOXIE?': MOXIE says which
                # planet, whatever else the passages name (read 25, ce-04859ca72b817973).
                yield ctx.reject(self.name, f"the question still names '{beside}', which the domain's passages name "
                                            f"with '{referent}' and hardly any other {got.kind.noun}; no positive", got.query)
                continue
            yield record

    def _record(self, ctx, got: Generic, k: int, hits, options, history, history_source, rng, method) -> Record | Rejection:
        noun, referent = got.kind.noun, got.referent or got.entity.text
        said = history_text(history)
        where = ("after an unrelated history" if history_source and history_source.get("conversation_id") != ctx.conv.id
                 else "after its own history") if history else "with no history"
        own = [o for o in options if _same_entity(o.name, referent, noun)]
        if len(options) == 0:
            return ctx.reject(self.name, f"the passages name no {noun}", got.query)
        if len(options) == 1 and not own:
            return ctx.reject(self.name, f"the passages name one {noun}, '{options[0].name}', not '{referent}'", got.query)
        if history and kd.owner_named(history, noun, kd.describe_texts(ctx)):
            # 'Where can I find the SDK ...?' after a talk about Cloudant asks for Cloudant's, whatever SDKs the
            # passages name (read 31, ce-9da336eae30217b3).
            return ctx.reject(self.name, f"{where}: the history talks of one product, and the {noun} is a part of it", got.query)
        in_history = _kind_names_in(said, options, referent, got.kind) if history else []
        unknown = [n for n in in_history if not any(_same_entity(n, o.name, noun) for o in options)]
        if unknown and len(in_history) == 1 and _same_entity(unknown[0], referent, noun) and reading(got, unknown[0]):
            # The chat was about the referent: the question is about it, whatever the retriever found.
            return self._negative(ctx, got, k, hits, history, history_source, Option(unknown[0], "", ""), "history", method)
        if unknown:
            return ctx.reject(self.name, f"{where}: the history names '{unknown[0]}', which the passages do not", got.query)
        if len(in_history) == 1:
            # The history singles one out: resolved by it (several passages) or by the documents (one thing in them).
            resolved = next(o for o in options if _same_entity(o.name, in_history[0], noun))
            if len(options) > 1 and _naming_turn(history, resolved.name, noun) is None and _naming_turn(history, in_history[0], noun) is None:
                return ctx.reject(self.name, f"{where}: no single history turn names '{in_history[0]}'", got.query)
            if len(options) == 1:
                return self._negative(ctx, got, k, hits, history, history_source, own[0], "documents", method)
            return self._negative(ctx, got, k, hits, history, history_source, resolved, "history", method, in_history[0])
        asked = _asked_about(history, in_history, noun) if len(in_history) > 1 else None
        if asked is not None:
            # After 'What is Red Hat OpenShift?', 'the benefits of the platform' is OpenShift's, though the reply
            # called it a Kubernetes platform (read 32, ce-859af1264a2c1686; the guide's example).
            resolved = next((o for o in options if _same_entity(o.name, asked, noun)), None)
            if resolved is None:
                return ctx.reject(self.name, f"{where}: the user asked about '{asked}', which the passages do not name", got.query)
            return self._negative(ctx, got, k, hits, history, history_source, resolved, "history", method, asked)
        echo = _echoed(said, options, noun) if history and not in_history and len(options) > 1 else None
        if echo:
            # 'How can I make the game interesting?' after 'each sample tube collected' (read 33, ce-2a982d61e696ef7e).
            return ctx.reject(self.name, f"{where}: the history says '{echo[1]}' of '{echo[0]}' alone", got.query)
        tie = kd.singled_by_history(ctx, referent, noun, history) if history and not in_history and own else None
        if tie:
            # 'the league' after 'Do the Arizona Cardinals play outside the US?' is the NFL in this domain's passages.
            return self._negative(ctx, got, k, hits, history, history_source, own[0], "history", method, tie)
        if history and not in_history and kd.instance_said_last(history, noun):
            # 'Can you explain how the score is calculated?' right after an answer about 'your credit score' asks about
            # that score, whatever scores the passages name (reads 68 and 70, ce-79fb1e34ad5d64ed, ce-afe26083746d9a07).
            return ctx.reject(self.name, f"{where}: the last exchange brings in one {noun} without naming it; "
                                         f"'the {noun}' points back there", got.query)
        place = kd.place_in(history, noun) if history and not in_history else None
        if place:
            # 'Which is the largest river in the country?' after a talk about Maine asks about the United States
            # (read 28, ce-7a86d6e2a3b8bfd7): resolved when the passages name it, else no record.
            inside = next((o for o in options if tx.same_thing(tx.clean_name(o.name), place[1])), None)
            if inside is None:
                return ctx.reject(self.name, f"{where}: the history names '{place[0]}', which lies in "
                                             + (f"{place[1]}, and the passages do not name {place[1]}" if place[1] else
                                                f"one {noun} the record does not name"), got.query)
            return self._negative(ctx, got, k, hits, history, history_source, inside, "history", method, place[0])
        if len(options) == 1:
            if in_history:  # the history names two things of the kind, the passages one
                return ctx.reject(self.name, f"{where}: the history names two {got.kind.plural}, the passages one", got.query)
            if history and history_source is None and not _names(ctx.query, referent, noun):
                # The user's own words leaned on this very history ('when was it founded?'): it settles the
                # question, and the passages agree.
                return self._negative(ctx, got, k, hits, history, history_source, own[0], "documents", method)
            # Retrieval for vague words proves nothing about what the user meant: one university in the
            # passages, and nothing in the chat singling it out, is still 'which university?'.
            return self._single(ctx, got, k, hits, own[0], history, history_source, rng, method)
        # 'Rome' read as an empire is named 'Roman Empire' (the city is another reading).
        options = [dataclasses.replace(o, name=tx.kind_named(o.name, noun)) for o in options]
        shown = list(options[:8])
        rng.shuffle(shown)
        question, pattern = clarification(shown, got.kind, rng)
        readings = [reading(got, o.name) for o in options[:8]]  # the guide's most: eight readings
        return self._positive(ctx, got, k, hits, history, history_source, "multiple_interpretations", readings, question,
                              pattern, method)

    def _single(self, ctx, got: Generic, k: int, hits, found: Option, history, history_source, rng, method) -> Record | Rejection:
        """One thing of the kind in the passages, none in the chat: the clarification names the passages' one and asks
        which; the readings are it and names of the kind asked about in the block or domain."""
        # 'the account or a 401K' is not read as 'the 401K account or a 401K' (read 41, ce-8574d85eda6a508f)
        # Its words tie the question to the one the passages name when no passage says another with them: 'Was Japan
        # better off as a result of the general not criminalizing the Emperor?' is MacArthur's alone (read 59).
        others = [n for n in kd.pool_of_kind(ctx, got.kind.noun, query=got.query, tied=True)
                  if not _same_entity(n, found.name, got.kind.noun) and not _query_says(got, n)]
        readings = [r for r in (reading(got, n) for n in others) if r]
        first = reading(got, found.name)
        if first is None or not readings:
            return ctx.reject(self.name, f"the passages name one {got.kind.noun} and no other name of the kind is known", got.query)
        template = rng.choice(templates()["single"])
        question = template.format(option=found.shown(), head=got.kind.noun, heads=got.kind.plural)
        return self._positive(ctx, got, k, hits, history, history_source, "underspecified_entity", [first, *readings[:3]], question,
                              "hedge", method)

    def _positive(self, ctx, got: Generic, k: int, hits, history, history_source, category: str, readings: list[str],
                  question: str, pattern: str, method: str) -> Record:
        return self._post_record(ctx, got, k, hits, history, history_source, method, needs_clarification=True,
                                 category=category, interpretations=readings, target={"clarification": question},
                                 clarification_pattern=pattern)

    def _negative(self, ctx, got: Generic, k: int, hits, history, history_source, resolved: Option, source: str, method: str,
                  named: str = "") -> Record:
        resolution = {
            "source": source,
            "turn_index": _naming_turn(history, resolved.name, got.kind.noun) if source == "history" else None,
            "document_id": resolved.passage_id if source == "documents" else None,
            "referent": resolved.name,
            "resolved_query": reading(got, resolved.name),
        }
        if source == "history" and resolution["turn_index"] is None:
            resolution["turn_index"] = _naming_turn(history, named or got.entity.text, got.kind.noun)
        return self._post_record(ctx, got, k, hits, history, history_source, method, needs_clarification=False,
                                 category="hard_negative", interpretations=[resolution["resolved_query"]],
                                 target=clear_target(), resolution=resolution)

    def _post_record(self, ctx, got: Generic, k: int, hits, history, history_source, method: str, **label) -> Record:
        """The generic query with its retrieved passages; `label` holds the fields that differ by label."""
        return Record(domain=ctx.conv.domain, setting="post_retrieval", history=history, query=got.query,
                      documents=[p.as_document() for p in hits], pair_id=pair_id(ctx, method),
                      provenance=self._provenance(ctx, got, k, history_source), **label)

    def _provenance(self, ctx, got: Generic, k: int, history_source: dict | None) -> dict:
        # The passages come from the domain pool, not from other conversations' turns: only this
        # conversation's text (query, history) ties the record to a split group.
        prov = ctx.provenance(self.name, self.version, history_source=history_source, docs=[ctx.conv.id])
        prov["retrieval"] = {"method": corpus_mod.METHOD, "k": k, "query": got.query}
        return prov
