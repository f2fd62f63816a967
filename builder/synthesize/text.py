"""Small text analysis used by the rule-based generators: tokens, entities, referents."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’.\-]*[A-Za-z0-9]|[A-Za-z0-9]")


@lru_cache(maxsize=1)
def lexicon() -> dict:
    # Every entry is a word as written: YAML 1.1 would read 'on' and 'no' as booleans, '529' as a number.
    return yaml.load((Path(__file__).parent / "lexicon.yaml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    return frozenset(lexicon()["stopwords"])


@lru_cache(maxsize=1)
def anaphora() -> frozenset[str]:
    return frozenset(lexicon()["anaphora"])


def words(text: str) -> list[str]:
    return [w.strip(".'’-") for w in _WORD.findall(text) if w.strip(".'’-")]


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """Crude plural folding: enough to match 'clinics' with 'clinic'."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def content_stems(text: str) -> frozenset[str]:
    return _content_stems(text)


@lru_cache(maxsize=1 << 15)
def _content_stems(text: str) -> frozenset[str]:
    # Cached: the same passages and histories are looked at by many generators.
    stops = stopwords()
    return frozenset(stem(w) for w in words(text) if w.lower() not in stops and len(w) > 1)


_BE = frozenset({"is", "are", "was", "were", "be", "been", "will", "would", "could", "should", "might", "may",
                 "must", "can", "seem", "seems", "appear", "appears", "exist", "exists", "'s", "isn't", "aren't",
                 "wasn't", "weren't"})


def has_anaphor(text: str) -> str | None:
    """The first anaphoric word of the query ("it", "this", ...), if any. An existential 'there'
    ('Is there a minimum?', 'there are fees') refers to nothing and is skipped."""
    ana = anaphora()
    ws = [w.lower() for w in words(text)]
    for i, w in enumerate(ws):
        if w not in ana:
            continue
        if w == "there" and ((i + 1 < len(ws) and ws[i + 1] in _BE) or (i > 0 and ws[i - 1] in _BE)):
            continue
        return w
    return None


_PERSONAL = frozenset("it its they them their theirs he him his she her hers".split())
_DEMONSTRATIVES = frozenset("this that these those".split())


def bare_pronoun(text: str) -> str | None:
    """A pronoun that stands for a thing by itself ('it', 'they', 'that' in 'how is that calculated?'), not a
    determiner of a kind noun ('that game'). After any history it reads as about what that history is about."""
    ws = [w.lower() for w in words(text)]
    for i, w in enumerate(ws):
        if w in _PERSONAL:
            return w
        if w in _DEMONSTRATIVES:
            nxt = ws[i + 1] if i + 1 < len(ws) else ""
            if not nxt or not _nounish(nxt):  # 'that is', 'that calculated'; not 'that game'
                return w
    return None


def is_elliptical(text: str) -> bool:
    low = text.strip().lower()
    return any(low.startswith(o) for o in lexicon()["ellipsis_openers"])


_ORDINAL_HEADS = frozenset("next other others previous last latter former same rest first second third".split())
_WHOLE_AFTER = frozenset({"to", "as", "of"})


def bare_ordinal(text: str) -> str | None:
    """'the next' with no noun of its own ('So what is the next after The Office?'): the phrase stands for a thing of
    a list said before."""
    toks = [w.lower() for w in words(text)]
    for i, w in enumerate(toks[:-1]):
        after = toks[i + 2] if i + 2 < len(toks) else None
        # 'the first to climb it', 'the same as', 'the rest of the plays' are whole phrases
        if w == "the" and toks[i + 1] in _ORDINAL_HEADS and (after is None or after in stopwords()) and after not in _WHOLE_AFTER:
            return f"the {toks[i + 1]}"
    return None


def is_fragment(text: str) -> bool:
    """Very short, or with no wh-word and no verb-like auxiliary: 'refund policy?', 'Renters'."""
    ws = [w.lower() for w in words(text)]
    # 'What are ETFs?' is short but a whole question.
    return len(ws) <= 3 and not (ws and ws[0] in lexicon()["wh_words"])


@dataclass(frozen=True)
class Entity:
    text: str  # as written in the query
    head: str | None  # generic kind ("river"), if known
    start: int
    end: int


def head_of(entity: str) -> str | None:
    heads = lexicon()["heads"]
    toks = words(entity)
    if len(toks) > 1 and toks[-1] == "General" and toks[-2][:1].isupper():
        return None  # 'Attorney General', 'Surgeon General': an office, no general to pick
    for i in range(len(toks) - 1, -1, -1):
        w = toks[i]
        head = stem(w) if stem(w) in heads else (w.lower() if w.lower() in heads else None)
        if head is None:
            continue
        if i < len(toks) - 1 and (w.lower() != head or (i == len(toks) - 2 and _plural_word(toks[-1]))):
            # 'Services and Software' (a menu heading: a group), 'Service Credentials' (credentials, whatever
            # 'Service' says): the kind noun modifies the name's head, it is not its head.
            return None
        if i < len(toks) - 2 and all(t[:1].isupper() for t in toks[i + 1 : i + 3]):
            # 'Alameda County Household Hazardous Waste Facility' is a facility: a kind noun with two or more
            # name words after it is inside a longer name (read 31).
            return None
        return head
    return None


def _plural_word(word: str) -> bool:
    return word[:1].isupper() and len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))


def plural(head: str) -> str:
    return lexicon()["heads"].get(head, head + "s")


def kind_word(head: str) -> str:
    """How a kind is written: 'clinic', but 'SDK' (from its plural 'SDKs')."""
    many = plural(head)
    return many[:-1] if many != many.lower() and many.endswith("s") and " " not in many else head


_INTERJECTIONS = frozenset({"yes", "no", "okay", "ok", "sure", "hello", "hi", "thanks", "well", "indeed"})
_CAP_SPAN = re.compile(
    r"(?:(?:[A-Z][A-Za-z0-9'’&\-]*|[A-Z0-9]{2,}[a-z]?)(?:[ \t]+(?:of|the|and|for|de|du|la|&)[ \t]+|[ \t]+)?)+"
)


def entities(text: str) -> list[Entity]:
    """Capitalized spans ('Penobscot River', 'IBM Cloud Kubernetes Service'), excluding a lone sentence-initial word."""
    found: list[Entity] = []
    for m in _CAP_SPAN.finditer(text):
        span = m.group(0).rstrip()
        span = re.sub(r"\s+(?:of|the|and|for|de|du|la|&)$", "", span)
        start = m.start()
        toks = words(span)
        if not toks:
            continue
        # Drop a leading question/auxiliary word capitalized only because it starts the sentence.
        while toks and (toks[0].lower() in stopwords() or toks[0] in {"I", "I'm", "I've", "I'd"}):
            cut = span.find(toks[0]) + len(toks[0])
            span = span[cut:].lstrip()
            start = text.find(span, start)
            toks = words(span)
        if toks and toks[0].lower() == "the":
            span = span[4:].lstrip()
            start = text.find(span, start)
            toks = words(span)
        if not toks:
            continue
        # 'my FICO score': a capitalized modifier takes the noun it modifies; a name of no kind takes the kind
        # noun after it ('Standard Next plan'). 'Understanding bond prices' opens a sentence: no name.
        tail = re.match(r"([ \t]+[a-z][a-z\-]+)(?=[\s?.,!]|$)", text[start + len(span):])
        # 'Jupiter's rings': a possessive owns the noun after it, it does not name a thing with it.
        possessive = span.endswith(("'s", "’s"))
        if tail and not possessive and all(_nounish(w) for w in tail.group(1).split()) and not _sentence_word(text, start, toks):
            noun = tail.group(1).strip()
            # ('Credit Karma shows your score': after a name of two words a plural is its verb)
            if len(toks) == 1 or (head_of(toks[-1]) is None and singular(noun) in lexicon()["heads"] and singular(noun) == noun):
                span = span + tail.group(1)
                toks = words(span)
        if len(toks) == 1 and (start == _first_word_start(text) or _sentence_word(text, start, toks)):
            continue
        if len(toks) == 1 and (toks[0].lower() in stopwords() or toks[0].lower() in _INTERJECTIONS):
            continue  # 'Yes, the Europa Clipper ...' opens an answer; 'Yes' is no thing
        if toks[0] == "I":
            continue
        found.append(Entity(text=span, head=head_of(span), start=start, end=start + len(span)))
    return found


def _sentence_word(text: str, start: int, toks: list[str]) -> bool:
    """A lone word capitalized only because it opens a sentence: a word the text also writes in lower case, an
    adverb ('Generally'), or a gerund ('Understanding bond prices') the text never capitalizes mid-sentence
    (as it does 'the Ming')."""
    if len(toks) != 1 or not re.search(r"(?:^|[.!?:]\s+|\n\s*)$", text[:start]):
        return False
    word, low = toks[0], toks[0].lower()
    if low.endswith("ly") or re.search(r"(?<![\w-])" + re.escape(low) + r"(?![\w-])", text):
        return True
    return low.endswith("ing") and not re.search(r"[\w,;][ \t]+" + re.escape(word) + r"(?![\w-])", text)


def _first_word_start(text: str) -> int:
    m = re.search(r"\S", text)
    return m.start() if m else 0


def mentions(text: str, phrase: str) -> bool:
    """True when all content words of `phrase` occur in `text` (plural-insensitive)."""
    need = content_stems(phrase)
    return bool(need) and need <= content_stems(text)


def mentions_any(text: str, phrase: str) -> bool:
    need = content_stems(phrase)
    return bool(need & content_stems(text))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The text cut at sentence ends and line breaks."""
    return _SENTENCE_END.split(text)


def added_referent(original: str, rewrite: str, things_only: bool = True) -> str | None:
    """The phrase the standalone rewrite adds to the original turn: what the turn left implicit.

    Consecutive rewrite words that are content words absent from the original (bridging small
    function words) form candidate spans; the longest wins. With `things_only`, a span is a thing, not a
    verb ('Byzantine Empire founded' -> 'Byzantine Empire'; 'using' alone is none).
    """
    orig = content_stems(original)
    toks = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(rewrite)]
    spans: list[tuple[int, int, int]] = []  # (n_content, start, end)
    cur: list[tuple[str, int, int]] = []
    pending: list[tuple[str, int, int]] = []
    stops = stopwords()

    def close() -> None:
        if cur:
            spans.append((sum(1 for w, _, _ in cur if w.lower() not in stops), cur[0][1], cur[-1][2]))

    for tok in toks:
        w = tok[0].strip(".'’-")
        low = w.lower()
        is_new = low not in stops and len(w) > 1 and stem(w) not in orig
        if is_new:
            cur.extend(pending)
            pending = []
            cur.append(tok)
        elif cur and low in {"of", "the", "and", "for", "in", "on", "to", "de"} and len(pending) < 2:
            pending.append(tok)
        else:
            close()
            cur, pending = [], []
    close()
    if not spans:
        return None
    for _, start, end in sorted(spans, key=lambda s: (-s[0], s[1])):  # the longest first, then the earliest
        phrase = rewrite[start:end].strip(" ,.?!")
        phrase = _trim_verbs(phrase) if things_only else phrase
        if phrase:
            return phrase
    return None


def _trim_verbs(span: str) -> str:
    """A referent is a thing: 'Byzantine Empire founded' -> 'Byzantine Empire'; a lone 'using' is none. It
    ends in a noun, not a preposition, a possessive or an adjective ('taxes on' -> 'taxes', 'legal' is none)."""
    toks = span.split()
    while toks and toks[-1].islower() and (verb_or_adverb(low := toks[-1].lower()) or low in stopwords()
                                           or re.search(r"['’]s$|ly$", low) or low in ADJECTIVES):
        toks.pop()
    if len(toks) == 1 and toks[0].islower() and toks[0].endswith("ing"):
        return ""
    return " ".join(toks).rstrip(" ,")


def replace_phrase(text: str, phrase: str, replacement: str) -> str | None:
    """Replace `phrase` (case-insensitive, with an optional leading 'the') once; None when absent."""
    pattern = re.compile(r"(?i)\b(?:the\s+)?" + re.escape(phrase) + r"(?:'s|’s)?\b")
    m = pattern.search(text)
    if not m:
        return None
    possessive = m.group(0).lower().endswith(("'s", "’s"))
    rep = replacement + ("'s" if possessive else "")
    out = text[: m.start()] + rep + text[m.end() :]
    return out[0].upper() + out[1:] if m.start() == 0 else out


def _proper(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in stopwords() and word.lower() not in lexicon()["verbs"]


# Irregular participles the -ed rule misses ('China built' is no name plus its noun).
_PARTICIPLES = frozenset("built made known done given taken seen found held born written sold paid kept left meant "
                         "run set put got gotten brought bought thought told shown grown drawn chosen spent sent".split())


def _nounish(word: str) -> bool:
    low = word.lower()
    return (
        len(low) > 2
        and low not in stopwords()
        and "'" not in low
        and "’" not in low
        and not low.endswith(("ing", "ed", "ly"))
        and not low.isdigit()
        and not verb_or_adverb(low)  # 'FAANG pays', 'the Berlin Wall came down', 'built'
    )


def keyword_fragment(text: str, drop: str, max_words: int = 2) -> str | None:
    """'What is the annual fee of the Horizon Card?' minus 'Horizon Card' -> 'annual fee?': the first run of
    adjacent keywords, as a person types a noun phrase ('usage quota?', 'strong economy?'), never two words
    from across the question ('parts world?' for 'How does the storm drain work in other parts of the world?'),
    and its last words, where its head noun is ('historical play?', not 'popular historical?'); with no such run,
    the first keyword alone."""
    skip = content_stems(drop)
    runs: list[list[str]] = [[]]
    for w in words(text):
        if (_nounish(w) or (w.islower() and head_of(w))) and stem(w) not in skip:  # 'play' is a kind noun too
            runs[-1].append(w)
        elif runs[-1]:
            runs.append([])
    runs = [r for r in runs if r]
    if not runs or max(len(w) for r in runs for w in r) < 4:
        return None
    keep = next((r for r in runs if len(r) >= 2), runs[0])
    return " ".join(keep[-max_words:]).lower() + "?"


_SUBJECT_BEFORE = {"do", "does", "did", "is", "are", "was", "were", "can", "could", "will", "would", "should",
                   "has", "have", "had", "may", "might", "and", "but", "when", "where", "why", "how", "what", "which", "if"}


_AUXILIARIES = frozenset(_SUBJECT_BEFORE - {"and", "but", "if"})


def opens_a_question(text: str) -> bool:
    """Opens as a full question or request does: a wh-word, an auxiliary or a request verb ('Have there been
    ...?', 'Tell me ...'), not a keyword or a phrase ('Others in the past?', 'and for students?')."""
    ws = [w.lower() for w in words(text)]
    return bool(ws) and (ws[0] in lexicon()["wh_words"] or ws[0] in _AUXILIARIES or ws[0] in _REQUEST_OPENERS)


def _ngrams(tokens: list[str], n: int) -> list[tuple[int, int]]:
    return [(i, i + n) for i in range(len(tokens) - n + 1)]


def key_entity(query: str, titles: list[str], texts: list[str]) -> Entity | None:
    """What the query is about: a named entity, else a phrase shared with the passage titles,
    else the longest multi-word phrase found verbatim in the passages."""
    named = [e for e in entities(query) if not re.search(r"\s(?:and|or|&)\s|,", e.text)]  # a list is not one entity
    if named:
        return _with_modified_noun(query, next((e for e in named if e.head), named[0]))
    spans = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(query)]
    toks = [s[0] for s in spans]
    stops = stopwords()
    title_stems = [content_stems(t) for t in titles if t]
    haystack = join_hyphens(" ".join(texts)).lower().replace("-", " ")
    for n in range(min(5, len(toks)), 0, -1):
        for i, j in _ngrams(toks, n):
            words_ = toks[i:j]
            if not (_nounish(words_[0]) or _proper(words_[0])) or not (_nounish(words_[-1]) or _proper(words_[-1])):
                continue  # 'update the cluster' is not a thing
            need = {stem(w) for w in words_ if w.lower() not in stops}
            phrase = query[spans[i][1] : spans[j - 1][2]]
            if n == 1 and not words_[0][:1].isupper():
                continue  # a lone lowercase word is too often a verb ('schedule')
            in_title = any(need <= ts for ts in title_stems)
            in_text = n >= 2 and phrase.lower().replace("-", " ") in haystack
            if in_title or in_text:
                # A common phrase is a thing of the kind its last word says: 'service support' is support, not a
                # service, 'money for income tax purposes' no tax (read 25).
                head = (head_of(words_[-1]) if words_[-1][:1].islower() else head_of(phrase)) if n > 1 else None
                return Entity(text=phrase, head=head, start=spans[i][1], end=spans[j - 1][2])
    return None


def _with_modified_noun(query: str, entity: Entity) -> Entity:
    """'the MOXIE instrument': a name used as a modifier takes its noun, which also gives the kind."""
    if entity.head:
        return entity
    m = re.match(r"\s+([a-z][a-z\-]+)\b", query[entity.end :])
    if m and (m.group(1) in lexicon()["heads"] or stem(m.group(1)) in lexicon()["heads"]):
        end = entity.end + m.end()
        return Entity(query[entity.start : end], head_of(query[entity.start : end]), entity.start, end)
    return entity


_NP_OPENERS = frozenset("the a an this that these those its their his her our your my most more least".split())
# Adjectives the lexicon's verb list also holds: before a name they modify it ('a small claims court').
ADJECTIVES = frozenset("worse better best good bad new old main big small large different same other possible "
                       "important common available certain legal potential charitable lower higher significant "
                       "specific annual".split())


def lowercase_modifier(text: str, entity: Entity) -> bool:
    """A lowercase word right before the entity that belongs to its noun phrase ('a small claims court',
    'Immutable data Immutable Object Storage'): no verb, function word or determiner."""
    before = words(text[: entity.start])
    if not before or not before[-1].islower():
        return False
    w = before[-1]
    if w in stopwords() or w in ("no", "not", "yes", "on", "off"):
        return False
    if w in ADJECTIVES:
        return True
    verb_like = w in lexicon()["verbs"] or stem(w) in lexicon()["verbs"] or w.endswith(("ing", "ed"))
    # Inside a noun phrase only after a determiner, a possessive or a capitalised word ('the song Grenade',
    # 'Immutable data X'); after 'to' or a subject it is a verb ('to explore Jupiter', 'I contract COVID-19').
    pp = before[-2] if len(before) > 1 else ""
    if w.endswith("ed") and pp.endswith("ing") and pp.islower() and pp not in ("having", "being", "getting"):
        return True  # 'buying discounted company stock': a participle after a verb describes the noun
    in_np = pp.lower() in _NP_OPENERS or (pp[:1].isupper() and pp != "I") or pp.endswith(("'s", "’s"))
    return not verb_like and in_np


# 'soccer and American football', 'an IRA or a 401K', 'between X and Y': the entity is one member of a list.
# A clause after 'and' ('Carthage and where can I get it?') or a comma ('North Carolina, given that ...') is no list.
_CLAUSE_OPENER = ("what|where|when|why|how|who|which|whose|is|are|was|were|do|does|did|can|could|should|would|will|"
                  "has|have|had|if|it|they|i|you|we")
_LIST_AFTER = re.compile(rf"^\s*(?:,?\s*(?i:and|or)\b(?!\s+(?i:{_CLAUSE_OPENER})\b)|,\s*(?:the\s+)?(?!I\b)[A-Z0-9]|&|"
                         r"(?i:vs)\.?\b|(?i:versus)\b)")
_LIST_BEFORE = re.compile(r"(?i)(?:,|\band|\bor|&|\bvs\.?|\bversus|\bbetween|\bamong|\bcompare)\s+(?:the\s+|a\s+|an\s+)?$")


def one_of_list(text: str, entity: Entity) -> bool:
    """The entity is one member of a list or comparison: swapping one member for a kind phrase or a pronoun
    breaks the question ('the difference between soccer and the sport', 'the account or a 401K')."""
    return bool(_LIST_AFTER.match(text[entity.end:]) or _LIST_BEFORE.search(text[: entity.start]))


_COUNTING_WORDS = frozenset("one two three four five six seven eight nine ten some many several few both all any "
                             "these those other".split())


def not_a_kind_name(standalone: str, entity: Entity) -> str:
    """Why the words taken for '<name> <kind noun>' are no such name, or ''. 'Where do the Arizona Cardinals play':
    after 'do' and a plural name the kind noun is the verb ('Where do the play'); 'Name two spacecraft': a number
    says how many, not which (read 33)."""
    toks = words(entity.text)
    bare = re.sub(r"(?i)^(?:the|a|an|this|that|these|those)\s+", "", entity.text.strip()).lower()
    if bare in (entity.head, plural(entity.head).lower()):
        # 'the Moon', 'this SDK', 'the Office of ...': the kind's own word, capitalized, names nothing beside it; its
        # generic form is the query again ('Will there be a return result using this sdk?', read 37).
        return f"'{entity.text}' is the word '{entity.head}' itself; no name to read with others"
    if len(toks) < 2:
        return ""
    before = words(standalone[: entity.start])
    plural_name = toks[-2][:1].isupper() and re.search(r"[^su'’]s$", toks[-2])
    if plural_name and toks[-1].islower() and not toks[-1].endswith("s") and any(
            w.lower() in ("do", "did") for w in before[-3:]):
        return f"'{toks[-1]}' follows 'do' and the plural name '{toks[-2]}': a verb, not a kind noun"
    if any(w.lower() in _COUNTING_WORDS for w in toks[:-1]):
        return f"'{entity.text}' counts things of the kind; it names none"
    if toks[-1].islower() and stem(toks[-1]) == entity.head and toks[-1].lower() != entity.head:
        # 'Have any European teams participated ...?': a plural kind noun after its modifier names a class of
        # things, no one name to read with others ('Have any Arizona Cardinals participated', read 36).
        return f"'{entity.text}' names a class of {toks[-1]}, no one of them"
    return ""


_NOUN_STOPWORDS = frozenset("kind kinds type types thing things way ways".split())


def inside_longer_name(query: str, entity: Entity, texts: list[str]) -> str | None:
    """The longer name the entity ends, as the question or the texts capitalise it ('the Office of the New York
    State Attorney General'; 'the great wall of China': 'Great Wall of China'); a pronoun or kind phrase in its
    place breaks that name ('the Office of it'). None when the words before it are no part of a name."""
    m = re.search(r"((?:[A-Za-z]+\s+){1,3})of\s+(the\s+)?$", query[: entity.start])
    if not m:
        return None
    before = m.group(1).split()
    of = " of the " if m.group(2) else " of "
    initial = len(before) == 1 and not query[: m.start(1)].strip()  # 'History of the Roman Empire?': a capital anyway
    if before[-1][:1].isupper() and before[-1].lower() not in stopwords() and not initial:
        run = len(before) - next((i for i, w in enumerate(reversed(before)) if not w[:1].isupper()), len(before))
        return " ".join(before[run:]) + of + entity.text
    for n in range(len(before), 0, -1):
        phrase = " ".join(w.capitalize() for w in before[-n:]) + of + entity.text
        if any(phrase in t for t in texts) and not all(w.lower() in stopwords() for w in before[-n:]):
            return phrase
    return None


def defines_type(query: str, entity: Entity) -> str | None:
    """'What is a Lite account in IBM Cloud?' asks what a type is: made generic, 'What is the account in IBM
    Cloud?' asks what an account is. Returns the words before the entity ('What is a')."""
    m = re.match(r"(?i)\s*(?:what|who)(?:\s+(?:is|are|was|were)|'s)\s+an?\s+$", query[: entity.start])
    return m.group(0).strip() if m else None


def modifies_noun(query: str, entity: Entity) -> bool:
    """True when a lowercase noun-like word follows the entity ('Europa Clipper mission')."""
    m = re.match(r"\s+([a-z][a-z0-9\-]+)\b", query[entity.end :])  # 'this service v4' too
    word = m.group(1) if m else ""
    if word in _NOUN_STOPWORDS:  # 'the Lite account type': a stopword to keyword rules, a noun here
        return True
    return bool(word) and word not in stopwords() and not verb_or_adverb(word)


# Past forms and adverbs that follow a subject name ('the Berlin Wall came down', 'Is Richard III historically
# accurate?') without the suffixes verb_or_adverb reads.
_IRREGULAR = _PARTICIPLES | frozenset("came went took fell began begun won lost became grew ran gave saw fought rose "
                                      "risen led caught met said stood first ever never already often usually".split())


def verb_or_adverb(word: str) -> bool:
    """'founded', 'stopped', 'performs', 'historically': a word after a name that is no noun it modifies."""
    w = word.lower()
    if w in lexicon()["verbs"] or w in _IRREGULAR:
        return True
    # No '-ing': after a name it is mostly a noun ('the SEC filing', 'IBM Cloud pricing').
    for suffix, back in (("ies", "y"), ("ied", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e")):
        base = w[: -len(suffix)] + back if w.endswith(suffix) else ""
        if base and (base in lexicon()["verbs"] or (len(base) > 2 and base[-1] == base[-2] and base[:-1] in lexicon()["verbs"])):
            return True
    if len(w) >= 5 and w.endswith("ed") and not w.endswith("eed"):
        return True  # a regular past participle: 'the Byzantine Empire founded'
    return (len(w) >= 6 and w.endswith("ly") and not w.endswith(("ily", "ply", "bly", "aly", "oly"))
            and w not in _LY_ADJECTIVES)


_LY_ADJECTIVES = frozenset("hourly weekly monthly yearly quarterly biweekly friendly costly elderly lonely likely timely "
                           "orderly".split())  # 'the VPC hourly price': these modify the noun after them


_DETERMINERS = frozenset("the a an this that these those its their his her our your my".split())
_INTENSIFIERS = frozenset("most more least less very much".split())


_PRONOUN_BLOCKERS = frozenset("which what whose each every any some no another other all both".split())


def ends_noun_phrase(text: str, entity: Entity) -> bool:
    """True when the entity is the head of a noun phrase that starts with a determiner and has words before it
    ('the most popular Hamlet', 'the spacecraft Juno'), or right after a determiner a pronoun cannot follow
    ('which FAANG pays the most?'): a pronoun in its place leaves 'the most popular it', 'which it'."""
    before = words(text[: entity.start])
    if before and before[-1].lower() in _PRONOUN_BLOCKERS:
        return True
    passed = 0
    for w in reversed(words(text[: entity.start])):
        low = w.lower()
        if low in _DETERMINERS:
            return passed > 0
        if (low in stopwords() and low not in _INTENSIFIERS) or low in lexicon()["verbs"] or w[:1].isupper():
            return False
        passed += 1
    return False


def pronoun_for(text: str, entity: Entity) -> str:
    """'it' / 'they' / 'them' / 'its' / 'their' for an entity at its place in `text`."""
    toks = words(re.sub(r"['’]s$", "", entity.text))
    last = toks[-1].lower() if toks else ""
    single_name = len(toks) == 1 and toks[0][:1].isupper()
    plural_ = not single_name and last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3
    after = text[entity.end : entity.end + 2]
    if after in ("'s", "’s") or re.search(r"['’]s$", entity.text):
        return "their" if plural_ else "its"
    before = words(text[: entity.start])
    prev = before[-1].lower() if before else ""
    if prev == "the" and len(before) > 1:
        prev = before[-2].lower()
    subject = not before or prev in _SUBJECT_BEFORE or (prev == "the" and len(before) == 1)
    if plural_:
        return "they" if subject else "them"
    return "it"


def generic_phrase(entity: Entity) -> str:
    """'the river' / 'the lakes': the kind of thing, in the entity's own number."""
    last = words(entity.text)[-1].lower()
    if last.endswith(("'s", "’s")):  # "Alameda County's" is one county ("the county's", not "the counties's")
        return f"the {entity.head}"
    plural_ = last != entity.head and stem(last) == entity.head
    return f"the {plural(entity.head) if plural_ else entity.head}"


_COMPANY_SUFFIX = re.compile(r",?\s+(?:Inc|Ltd|LLC|Corp|Co|plc)\b")
_DOUBLE_DETERMINER = re.compile(r"(?i)\b(?:the|a|an|this|that|my|your|our)\s+(?:the|a|an|this|that|these|those)\b")


def broken_replacement(text: str, entity: Entity, query: str) -> str | None:
    """Why swapping the entity of `text` out (giving `query`) leaves no English a person would type, or None:
    'the cloud® Container Registry', 'them, Inc.', 'this the mission'."""
    if text[entity.end : entity.end + 1] in ("®", "™"):
        return f"'{entity.text}' is part of a trademarked name"
    if _COMPANY_SUFFIX.match(text[entity.end :]):
        return f"'{entity.text}' is part of a company name"
    if re.match(r"\s+v\d", text[entity.end :]):
        return f"'{entity.text}' carries a version ('this service v4')"
    if _DOUBLE_DETERMINER.search(query):
        return f"two determiners in a row: {query!r}"
    return None


def replace_entity(text: str, entity: Entity, replacement: str) -> str:
    """Swap the entity (with a leading 'the' and a trailing possessive) for `replacement`."""
    start, end = entity.start, entity.end
    before = text[:start]
    m = re.search(r"(?i)\b(the|a|an|my|your|our|this|that)\s+$", before)
    if m and (replacement in ("it", "they", "them", "its", "their") or m.group(1).lower() == "the"):
        start = m.start()
    elif m and m.group(1).lower() in ("a", "an") and replacement.startswith("the "):
        start = m.start()  # 'an FHA loan' -> 'the loan'
    elif m and replacement.startswith("the "):
        replacement = replacement[4:]  # 'this Deep Impact mission' -> 'this mission', not 'this the mission'
    elif re.search(r"(?i)(?:[’']s|\b(?:his|her|its|their|second|first|new|another|each|every|any|which|what))\s+$", before) and replacement.startswith("the "):
        replacement = replacement[4:]  # "NASA's the mission" -> "NASA's mission"
    if text[end : end + 2] in ("'s", "’s") and replacement in ("its", "their"):
        end += 2
    elif re.search(r"['’]s$", entity.text) and replacement.startswith(("the ", "this ", "that ")):
        replacement += entity.text[-2:]  # "President Roosevelt's involvement" -> "the president's involvement"
    out = text[:start] + replacement + text[end:]
    of = re.search(r"\b([Tt])he((?:\s+[a-z][a-z\-]*){1,4})\s+of\s+$", text[:start]) if replacement in ("it", "them") else None
    if of and not set(of.group(2).split()) & _NO_POSSESSIVE:
        # 'What was the religion of it?' is no English a person types: 'What was its religion?' (read 28).
        owner = "its" if replacement == "it" else "their"
        out = text[: of.start()] + (owner.capitalize() if of.group(1) == "T" else owner) + of.group(2) + text[end:]
        start = of.start()
    return out[0].upper() + out[1:] if start == 0 else out


# 'the rest of it', 'the number of them in ...': a part or a count, not a thing the pronoun owns.
_NO_POSSESSIVE = frozenset("rest part parts half most all some none one each any many few number amount lot "
                           "of in on to for from with at by about".split())


# --- kinds of things ------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _singular_of() -> dict[str, str]:
    return {plural_.lower(): head for head, plural_ in lexicon()["heads"].items() if " " not in plural_}


@lru_cache(maxsize=1)
def kind_lexicon() -> dict[str, str]:
    """Names whose kind their words do not say ('NASA' -> agency), written from general knowledge."""
    return {str(name).lower(): kind for kind, names in lexicon()["kinds"].items() for name in names}


@lru_cache(maxsize=1)
def lexicon_names() -> dict[str, list[str]]:
    """kind -> the kind lexicon's names, as written there."""
    return {kind: [str(n) for n in names] for kind, names in lexicon()["kinds"].items()}


@lru_cache(maxsize=1)
def person_kinds() -> frozenset[str]:
    """Kinds of people, for whom 'it' is no pronoun."""
    return frozenset(str(k) for k in lexicon().get("person_kinds", []))


@lru_cache(maxsize=1)
def genre_words() -> frozenset[str]:
    """Medium and genre words ('TV', 'comedy'): capitalized or not, they name no show."""
    return frozenset(str(k).lower() for k in lexicon().get("genre_words", []))


def layer_kinds() -> frozenset[str]:
    """Kinds whose named things are mostly parts of one product family ('IBM Cloud VPC' is no rival of 'IBM
    Cloud'): no kind phrase is made of them."""
    return frozenset(str(k) for k in lexicon().get("layer_kinds", []))


def umbrella_kinds() -> frozenset[str]:
    """Kinds that any product a talk names belongs to ('the service', 'this tool')."""
    return frozenset(str(k) for k in lexicon().get("umbrella_kinds", []))


@lru_cache(maxsize=1)
def _brand_prefix() -> re.Pattern:
    brands = sorted((str(b) for b in lexicon().get("brand_prefixes", [])), key=len, reverse=True)
    return re.compile(r"^(?:(?:" + "|".join(re.escape(b) for b in brands) + r")(?:'s|’s)?\s+)+") if brands else re.compile(r"(?!)")


def without_brand(name: str) -> str:
    """A product name without the maker's name that opens it ('IBM Cloud Object Storage' -> 'Object Storage');
    the name itself when nothing else would be left."""
    rest = _brand_prefix().sub("", name)
    return rest if content_stems(rest) else name


def default_referent(kind: str) -> str | None:
    """The one thing a bare kind phrase means when nothing else is said ('this planet' -> Earth)."""
    value = lexicon().get("default_referents", {}).get(kind)
    return str(value) if value else None


def kin_of(kind: str) -> list[str]:
    """Kinds close to `kind`, in lexicon order ('clinic' -> center, hospital, office)."""
    for group in lexicon().get("kin", []):
        if kind in group:
            return [k for k in group if k != kind]
    return []


def singular(word: str) -> str | None:
    """The head noun a (possibly plural) word names, if it is one ('clinics' -> 'clinic')."""
    low = word.lower()
    heads = lexicon()["heads"]
    if low in heads:
        return low
    return _singular_of().get(low) or (stem(low) if stem(low) in heads else None)


@lru_cache(maxsize=1 << 14)
def _kind_patterns(name: str) -> tuple[tuple[re.Pattern, int], ...]:
    n = re.escape(name)
    window = r"((?:[A-Za-z][\w\-]*\s+){0,3}[a-z]+)"
    return (
        (re.compile(rf"\b{n}(?:\s*\([^)]*\))?(?:,|\s+(?:is|was|are|were))\s+(?:a|an|the|one of the)\s+{window}"), 2),
        (re.compile(rf"\bthe\s+([a-z]+)\s+(?:called\s+|named\s+)?{n}\b"), 2),
        (re.compile(rf"\bthe\s+(state|city|province|county|town|village|kingdom|island|country)\s+of\s+{n}\b"), 2),
        (re.compile(rf"\b{n}\s*\(([a-z]+)[^)]*\)"), 2),  # a disambiguated title: 'Grenade (song)'
        (re.compile(rf"\b{n}\s+([a-z]+)\b"), 1),  # 'the NodeSync service'; counts only when seen twice
    )


def _first_kind(phrase: str) -> str | None:
    found = None
    # The last of the first run of kind nouns: 'a bank account'. A capitalised word is part of a name, not its
    # kind ('the end of the Ming, the Great Wall helped ...' says nothing of what Ming is).
    for k in (singular(w) if w[:1].islower() else None for w in phrase.split()):
        if k:
            found = k
        elif found:
            break
    return found


def kind_in_text(name: str, texts: list[str]) -> str | None:
    """The kind the texts give a name: 'Lake Tahoe is a large freshwater lake', 'the state of Maine',
    'Grenade (song)', 'the NodeSync service' (twice). The best-supported kind wins."""
    score: dict[str, int] = {}
    compounds: dict[str, int] = {}  # 'the NodeSync service': the kind noun right after the name
    followers: set[str] = set()  # every word right after it that is no function word or verb
    for text in texts:
        if name not in text:
            continue
        for pattern, weight in _kind_patterns(name):
            for m in pattern.finditer(text):
                phrase = next(g for g in m.groups() if g)
                kind = _first_kind(phrase)
                if weight == 1:
                    if phrase not in stopwords() and phrase not in lexicon()["verbs"]:
                        followers.add(stem(phrase))
                    if kind:
                        compounds[kind] = compounds.get(kind, 0) + 1
                elif kind:
                    score[kind] = score.get(kind, 0) + weight
    # An acronym before several nouns modifies them ('VPC volume', 'VPC subnet'): they say nothing of its kind.
    if not (name.isupper() and len(followers) > 1):
        for kind, count in compounds.items():
            score[kind] = score.get(kind, 0) + count
    best = sorted(score.items(), key=lambda kv: -kv[1])
    return best[0][0] if best and best[0][1] >= 2 else None


def kind_of(name: str, texts: list[str] = ()) -> str | None:
    """A named thing's kind: from its own words ('Penobscot River'), the kind lexicon, or how the texts
    describe it."""
    listed = kind_lexicon().get(name.lower()) or kind_lexicon().get(clean_name(name).lower())
    head = head_of(name)
    if listed and head and words(name)[-1].lower() not in (head, plural(head)):
        return listed  # 'association football', 'Kansas City Chiefs': the kind noun in them only modifies the name
    return head or listed or _alias_kind(name) or (kind_in_text(name, list(texts)) if texts else None)


def _alias_kind(name: str) -> str | None:
    """The kind of a lexicon name that `name` is an alias of ('USA' -> country, 'Covid' -> disease)."""
    group = _alias_group(name)
    if group is None:
        return None
    for other in lexicon()["aliases"][group]:
        kind = kind_lexicon().get(clean_name(str(other)).lower())
        if kind:
            return kind
    return None


def clean_name(name: str) -> str:
    """'IBM Cloud's' -> 'IBM Cloud'; 'the Byzantine Empire' -> 'Byzantine Empire'."""
    name = re.sub(r"(?:'s|’s)$", "", name.strip())
    name = re.sub(r"^\S+(?:'s|’s)\s+(?=\S)", "", name)  # "IBM’s Immutable Object Storage" -> "Immutable Object Storage"
    return re.sub(r"(?i)^(?:the|a|an)\s+", "", name).strip()


def opens_name(toks: list[str]) -> bool:
    """'New York', 'Old Faithful': an adjective that the verbs list keeps out of fragments, opening a capitalised
    name."""
    return len(toks) > 1 and toks[0][:1].isupper() and toks[1][:1].isupper() and toks[0].lower() in lexicon()["name_openers"]


def is_name(name: str, kind: str | None) -> bool:
    """A named thing, not the bare kind or a clause: 'Roman Empire' yes; 'Empire', 'Keys table' no."""
    toks = words(name)
    if not 0 < len(toks) <= 6 or not any(t[:1].isupper() or t[:1].isdigit() for t in toks):
        return False
    if re.search(r"[‚Äú”“]|â€|Ã", name):
        return False  # mis-decoded quotes from the source text are no part of a name
    first = toks[0].lower()
    if len(toks) > 1 and first in lexicon()["headline_openers"]:
        return False  # 'Cons of Buying Discounted Company Stock': a user's headline, no name of a stock
    if first in stopwords() or first in lexicon()["wh_words"] or (first in lexicon()["verbs"] and not opens_name(toks)) \
            or all(t.isdigit() for t in toks):
        return False
    last = toks[-1].lower()
    if kind and last != kind and singular(last) == kind and plural(kind).lower() != kind:
        return False  # 'Southern states', '401k accounts': a group, not one thing to pick
    if is_title(name, kind):
        return False
    if len(toks) == 1 and is_demonym(toks[0]) and name.lower() not in kind_lexicon():
        return False  # 'Shakespearean' (of 'a Shakespearean play'): an adjective, no name of one thing (read 28)
    capitalized = [t for t in toks if t[:1].isupper()]
    if capitalized and toks[-1][:1].islower() and all(is_demonym(t) for t in capitalized) \
            and name.lower() not in kind_lexicon():  # 'American football' is a sport's name
        return False  # 'Indian economy', 'Christian church': a nationality and a common noun
    rest = [t for t in toks if not (kind and singular(t) == kind) and t.lower() not in stopwords()
            and t.lower() not in genre_words()]  # 'TV series', 'Comedy Series': a kind of show, not one
    # Something besides the kind noun must be a name: 'Lite plan', '401k plan'; not '300 state'.
    return any(t[:1].isupper() or (t[:1].isdigit() and any(ch.isalpha() for ch in t)) for t in rest)


def is_title(name: str, kind: str | None) -> bool:
    """A person's kind noun after a modifier is a title that many held ('Roman Emperor', 'Western emperor',
    'French king'), not a name of one person."""
    toks = words(name)
    return bool(kind) and kind in person_kinds() and len(toks) >= 2 and singular(toks[-1].lower()) == kind


def is_demonym(word: str) -> bool:
    """'American', 'Roman', 'Chinese': a people's adjective, no name of one thing."""
    return bool(re.search(r"(?:ian|ean|ese|ish|ican)$", word)) or word in lexicon()["demonyms"]


def named_of_kind(text: str, kind: str, describe: list[str] = ()) -> list[str]:
    """Names of things of `kind` in a text, each once ('IRA account' and 'IRA accounts' are one)."""
    out: list[str] = []
    plain = _plain(text)
    for e in entities(plain):
        if quantified(plain, e):
            continue
        for name in _listed(clean_name(e.text)):
            if is_name(name, kind) and kind_of(name, [text, *describe]) == kind and not any(same_thing(name, o) for o in out):
                out.append(name)
    return out


# 'CocoaPods, Carthage, or from the source': items of one list, joined by a comma, 'and', 'or' or a slash.
_LIST_GAP = re.compile(r"\s*(?:,\s*(?:(?:and|or)\s+)?|\s(?:and|or)\s+|/\s*)")
_COORDINATOR = re.compile(r"\s*(?:,\s*)?(?:and|or)\b")


def listed_with_unknown(text: str, name: str) -> list[str]:
    """Names of no known kind listed side by side with `name` in an 'and'/'or' list: one list holds things of one
    kind, so 'the tool' after 'using CocoaPods, Carthage, or from the source directory' is not CocoaPods alone
    (read 43, ce-7f9f4012ade73a77). Such names are too rough to be readings ('Madison County, NY'), only doubt."""
    plain = _plain(text)
    found = [e for e in entities(plain) if not quantified(plain, e)]
    runs: list[list[Entity]] = []
    for e in found:
        if runs and _LIST_GAP.fullmatch(" " + plain[runs[-1][-1].end:e.start]):
            runs[-1].append(e)
        else:
            runs.append([e])
    out: list[str] = []
    for run in runs:
        gaps = [plain[a.end:b.start] for a, b in zip(run, run[1:])] + [plain[run[-1].end:run[-1].end + 8]]
        names = [clean_name(e.text) for e in run]
        if len(run) < 2 or not any(_COORDINATOR.match(g) for g in gaps) or not any(same_thing(n, name) for n in names):
            continue
        out += [n for n in names if not same_thing(n, name) and kind_of(n) is None and n not in out]
    return out


def same_thing(a: str, b: str) -> bool:
    """Aliases and spellings of one thing ('COVID-19' / 'Covid', 'IRA' / 'IRA account', 'IBM Cloud VPC' /
    'IBM Cloud Virtual Private Cloud'), but not a thing and something named after it ('Berlin' / 'Berlin Wall')."""
    ga, gb = _alias_group(a), _alias_group(b)
    if ga is not None or gb is not None:
        if ga == gb:
            return True
    da, db = re.findall(r"\d+", a), re.findall(r"\d+", b)
    if da and db and da != db:
        return False  # 'Type 1 diabetes' / 'Type 2 diabetes', 'Apollo 11' / 'Apollo 12'
    if _acronym_of(a, b) or _acronym_of(b, a):
        return True
    wa, wb = without_brand(a), without_brand(b)
    if (wa == a) != (wb == b) and (_acronym_of(wa, wb) or _acronym_of(wb, wa)):
        return True  # 'IBM Cloud VPC' / 'Virtual Private Cloud': the maker's name aside, one spells the other
    sa, sb = content_stems(a), content_stems(b)
    if not sa or not sb:
        return False
    if sa == sb or _same_but_demonym(sa, sb):
        return True
    ka, kb = _alias_key(a), _alias_key(b)
    if len(ka) >= 3 and ka == kb:
        return True
    if clean_name(a).lower() == clean_name(b).lower() or _misspelt(a, b):
        return True  # "NASA’s Europa Clipper mission" / 'Europa Clipper mission'; one name typed two ways
    if _one_name_in_the_other(a, b):
        return True
    if not (sa < sb or sb < sa):
        return _kind_word_short_form(a, b) or _kind_word_short_form(b, a)
    short, long_, extra = (a, b, sb - sa) if sa < sb else (b, a, sa - sb)
    vendor = {stem(w) for w in words(long_) if w.isupper() and len(w) > 1}  # 'IBM Cloud X' is 'Cloud X'
    kind = kind_of(clean_name(short))
    extra = extra - vendor
    # 'West Nile' / 'West Nile virus': a disease is called by its virus's noun too (lexicon `called_alike`).
    alike = {stem(k) for group in lexicon().get("called_alike", []) if kind in group for k in group}
    return not extra or (extra <= {kind} | alike if kind else all(singular(x) for x in extra))


def _spelled_out(name: str, other: str) -> str:
    """`name` with each acronym that spells a run of `other`'s capitalised words replaced by that run ('NY safety
    certificate' against 'New York State ...' -> 'New York safety certificate')."""
    wo = words(other)
    out = []
    for tok in words(name):
        starts = _initials_runs(tok, wo)
        out.extend(wo[starts[0]:starts[0] + len(tok)] if starts else [tok])
    return " ".join(out)


def _one_name_in_the_other(a: str, b: str) -> bool:
    """Two names of one thing of a kind: both end in the kind noun and the shorter's other words (two or more, its
    initials spelled out, a word said short) are all in the longer: 'NY safety certificate' / 'New York Safe
    Boating Certificate' / 'New York State Boating Safety Certificate'. One word apart is no name of the same thing
    ('Roman Empire' / 'Holy Roman Empire', 'Causeway VA Clinic' / 'Maplewood VA Clinic')."""
    a, b = without_brand(a), without_brand(b)  # 'IBM Cloud service' is no name of 'IBM Cloud Secrets Manager service'
    ta, tb = words(clean_name(_spelled_out(a, b))), words(clean_name(_spelled_out(b, a)))
    if len(ta) < 3 or len(tb) < 3 or singular(ta[-1].lower()) != singular(tb[-1].lower()):
        return False
    kind = stem(ta[-1])
    sa, sb = content_stems(" ".join(ta)) - {kind}, content_stems(" ".join(tb)) - {kind}
    short, long_ = (sa, sb) if len(sa) <= len(sb) else (sb, sa)
    return len(short) >= 2 and all(
        any(x == y or min(len(x), len(y)) >= 4 and (x.startswith(y) or y.startswith(x)) for y in long_) for x in short)


def _same_but_demonym(sa: frozenset[str], sb: frozenset[str]) -> bool:
    """The same words, one place said as its people's adjective: 'Indian economy' / 'Economy of India', 'Roman
    Empire' / 'Empire of Rome' (read 40, ce-3e8e00eb03311dfe). A place alone stays apart ('India' / 'Indian')."""
    only_a, only_b = sa - sb, sb - sa
    if len(only_a) != 1 or len(only_b) != 1 or not sa & sb:
        return False
    (x,), (y,) = only_a, only_b
    return _adjective_of(x, y) or _adjective_of(y, x)


def _adjective_of(place: str, adjective: str) -> bool:
    return len(place) >= 4 and adjective in {place + "n", place + "an", place + "ian", place[:-1] + "an", place[:-1] + "ian"}


def _kind_word_short_form(a: str, b: str) -> bool:
    """`a` is part of `b`'s name with the kind noun after it ('Clipper spacecraft' / 'Europa Clipper'; read 29):
    a kind noun in lower case describes, it does not name ('Roman Empire' / 'Holy Roman Empire' stay two)."""
    toks = words(clean_name(a))
    kind = kind_of(clean_name(a))  # 'Indian economy' has no kind: no short form of 'Indian Ocean'
    if len(toks) < 2 or not toks[-1].islower() or not kind or singular(toks[-1]) != kind:
        return False
    rest, other = content_stems(" ".join(toks[:-1])), content_stems(b)
    return bool(rest) and rest < other and stem(toks[-1]) not in other and all(t[:1].isupper() for t in toks[:-1])


def _misspelt(a: str, b: str) -> bool:
    """One name typed two ways ('MSL All-Star game' / 'MLS All-Star Game'): one word of it with two letters
    swapped, or one left out or added, and no number in it."""
    from rapidfuzz.distance import DamerauLevenshtein

    wa, wb = words(clean_name(a).lower()), words(clean_name(b).lower())
    if len(wa) != len(wb) or len(wa) < 2:
        return False
    differ = [(x, y) for x, y in zip(wa, wb) if x != y]
    if len(differ) != 1 or min(map(len, differ[0])) < 3 or re.search(r"\d", "".join(differ[0])):
        return False
    x, y = differ[0]
    # a letter swapped ('msl' / 'mls'), left out or doubled ('clippr', 'carollina'); a letter replaced is too often
    # another word ('Key Protect' / 'Key Project'), two letters apart another name ('Western' / 'Eastern')
    return DamerauLevenshtein.distance(x, y) == 1 and (len(x) != len(y) or sorted(x) == sorted(y))


def _acronym_of(a: str, b: str) -> bool:
    """`a` spells a run of `b`'s capitalised words by their initials, and the rest of the two names agree
    ('VPC' / 'Virtual Private Cloud', 'IBM Cloud VPC' / 'IBM Cloud Virtual Private Cloud')."""
    wa, wb = words(clean_name(a)), words(clean_name(b))
    for i, tok in enumerate(wa):
        for j in _initials_runs(tok, wb):
            if {stem(w) for w in wa[:i] + wa[i + 1:]} == {stem(w) for w in wb[:j] + wb[j + len(tok):]}:
                return True
    return False


def _initials_runs(tok: str, toks: list[str]) -> list[int]:
    """Where in `toks` a run of capitalised words starts whose initials spell the acronym `tok` ('VPC' in
    'Virtual Private Cloud'); [] when `tok` is no acronym."""
    n = len(tok)
    if not (tok.isupper() and tok.isalpha() and 2 <= n <= 6):
        return []
    return [j for j in range(len(toks) - n + 1)
            if all(w[:1].isupper() for w in toks[j:j + n]) and "".join(w[0] for w in toks[j:j + n]) == tok]


_RESTRICTING = frozenset("of that which who whom whose where for in on at with from called named".split())
# An ordinal or such before the noun picks no one thing either: 'the last Emperor', 'the famous basketball player'.
_PICKS_NONE = r"(?:(first|last|second|third|final|current|latest|previous|next|original|famous|main|new|old)\s+)?"
_DEMONSTRATIVE_OR_THE = re.compile(r"\b(the|this|that|these|those)\s+" + _PICKS_NONE + r"([A-Za-z][\w\-]*)(?:\s+(\S+))?", re.I)


_WHICH_ONE = re.compile(r"\b(?:which|this|that|the other)\s+ones?\b", re.I)
# 'for similar purposes', 'have others used it': compared with something said before the question.
_COMPARED_TO_BEFORE = re.compile(r"(?i)\b(?:similar|such)\s+[a-z]+s\b|\b(?:have|were|are|did)\s+(?:there\s+been\s+)?others\b")


def unresolved_kind_phrase(query: str) -> str | None:
    """'the program', 'this planet', 'this context', 'which one', 'similar purposes': a bare kind noun after a definite or demonstrative
    determiner (any noun after 'this' / 'these' / 'those'), neither named ('the Lite plan') nor restricted by what
    follows ('the capital of France'); None when there is none."""
    one = _WHICH_ONE.search(query) or _COMPARED_TO_BEFORE.search(query)
    if one:
        return one.group(0)
    for m in _DEMONSTRATIVE_OR_THE.finditer(query):
        det, adjective, noun, rest = m.group(1).lower(), m.group(2), m.group(3), m.group(4) or ""
        after = rest.strip("?,.!;:").lower()
        low = noun.lower()
        demonstrative_noun = det in ("this", "these", "those") and low not in stopwords() and low not in lexicon()["verbs"] \
            and low not in lexicon()["wh_words"] and not low.endswith(("ly", "ing"))
        # A capitalized kind noun is a title ('the Senate') unless a word before it says it is one of many.
        if (noun[:1].isupper() and not (adjective and singular(noun))) or (singular(noun) is None and not demonstrative_noun):
            continue
        if det == "that" and noun.lower() in lexicon()["verbs"]:
            continue
        if after in _RESTRICTING or rest[:1].isupper():
            continue
        return " ".join(w for w in (m.group(1), adjective, noun) if w)
    return None


@lru_cache(maxsize=1)
def _alias_groups() -> dict[str, int]:
    return {clean_name(str(n)).lower(): i for i, group in enumerate(lexicon().get("aliases", [])) for n in group}


def _alias_group(name: str) -> int | None:
    return _alias_groups().get(clean_name(name).lower())


def aliases_of(name: str) -> list[str]:
    """The names of the lexicon's alias group of `name` (only `name` when it has none)."""
    group = _alias_group(name)
    return [name] if group is None else [str(a) for a in lexicon()["aliases"][group]]


def kind_named(name: str, kind: str | None, text: str = "") -> str:
    """The name of its alias group that says its kind, when `name` does not ('Rome' read as an empire is the
    'Roman Empire': 'When was Rome founded?' asks about the city); else the name with its kind noun when the
    text writes them so ('Ming wall': 'the length of Ming' is no question)."""
    if not kind or kind in content_stems(name) or name in bare_names():
        return name  # 'COVID-19' is said so, not 'Coronavirus Disease'
    alias = next((a for a in aliases_of(name) if kind in content_stems(a)), None)
    if alias:
        return alias
    m = re.search(rf"\b{re.escape(name)}\s+({re.escape(kind)})\b", text, re.I) if text else None
    return f"{name} {m.group(1).lower()}" if m and name.lower() not in kind_lexicon() else name


def says(text: str, name: str) -> bool:
    """The text mentions the name or one of its aliases ('flu' says influenza)."""
    return any(mentions(text, a) and not _only_in_region(text, a) for a in aliases_of(name))


# 'North America' is a continent, not America (the United States).
_COMPASS = "north|south|east|west|central|latin|northern|southern|eastern|western|middle"


def is_compass(name: str) -> bool:
    """'East', 'Northern': a direction, no name (the 'East' of 'from East to West Germany')."""
    return bool(re.fullmatch(rf"(?i)\s*(?:{_COMPASS})\s*", name))


def _only_in_region(text: str, alias: str) -> bool:
    """Every time the text writes the one-word alias, a compass word opens a longer name with it."""
    if len(words(alias)) != 1:
        return False
    seen = list(re.finditer(rf"(?i)\b(?:({_COMPASS})\s+)?{re.escape(alias)}\b", text))
    return bool(seen) and all(m.group(1) for m in seen)


def _alias_key(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower().split("-")[0])


_QUANTIFIERS = frozenset("any every each no all".split())


# An ordinal, a quantifier or a superlative right before a capitalized word and a kind noun counts things of a
# sort: 'the fifth Shakespearean play', 'the most popular Shakespearean play' name no play.
_COUNTED = re.compile(r"(?i)\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th)|"
                      r"another|every|each|any|no|other|(?:most|least)\s+[a-z]+)\s+$")


def counted_before(text: str) -> bool:
    """The text (what comes before a name) ends in an ordinal, a quantifier or a superlative."""
    return bool(_COUNTED.search(text))


def quantified(text: str, entity: Entity) -> bool:
    """'any Act of Congress': a capitalised kind used generically, no named thing."""
    before = words(text[: entity.start])
    return bool(before) and before[-1].lower() in _QUANTIFIERS


def _listed(name: str) -> list[str]:
    """'Portugal and Greece' names two things when each part has a kind and the whole has none; 'Health and
    Human Services' stays one name."""
    parts = [p.strip() for p in re.split(r"\s+(?:and|&)\s+", name)]
    if len(parts) < 2 or kind_of(name) or not all(p and kind_of(p) for p in parts):
        return [name]
    return parts


def names_in(text: str) -> list[str]:
    """The distinct named things of a text, whatever their kind."""
    out: list[str] = []
    plain = _plain(text)
    for e in entities(plain):
        if quantified(plain, e):
            continue
        for name in _listed(clean_name(e.text)):
            if is_name(name, head_of(name)) and not any(same_thing(name, o) for o in out):
                out.append(name)
    return out


_REQUEST_OPENERS = frozenset({"tell", "explain", "describe", "list", "give", "show", "name", "compare", "define",
                              "summarize", "help", "find", "recommend", "suggest"})


_NOT_UNDERSTOOD = re.compile(r"(?i)\b(?:(?:do|did)(?:n['’]t| not) (?:understand|follow)|not sure (?:what|which) you mean|"
                             r"(?:could|can) you (?:please )?(?:clarify|rephrase))\b")


def not_understood(answer: str) -> bool:
    """A short reply saying it could not tell what was asked ("I'm sorry, but I don't understand what you mean.")."""
    return len(answer) < 300 and bool(_NOT_UNDERSTOOD.search(answer))


def is_question(text: str) -> bool:
    """A question or a request someone would type: 'Does ...?', 'Tell me about ...'."""
    ws = [w.lower() for w in words(text)]
    if not ws:
        return False
    return text.rstrip().endswith("?") or ws[0] in lexicon()["wh_words"] or ws[0] in _SUBJECT_BEFORE or ws[0] in _REQUEST_OPENERS


_SPACED_HYPHEN = re.compile(r"(?<=[A-Za-z0-9])[ \t]+-[ \t]+(?=[A-Za-z0-9])")


def join_hyphens(text: str) -> str:
    """Tokenized passages write 'All - Star Game' for 'All-Star Game'."""
    return _SPACED_HYPHEN.sub("-", text)


def _plain(text: str) -> str:
    """'IBM Cloud® Kubernetes Service' is one name; so is 'All - Star Game'."""
    return join_hyphens(text.replace("®", "").replace("™", ""))


def fit_article(before: str, name: str, plural_: bool = False) -> str:
    """The words before a name with 'a' / 'an' made to fit it ('an IRA' -> 'a Roth IRA'; a plural takes none)."""
    if name in bare_names():
        return re.sub(r"(?i)\b(?:the|a|an)\s+$", "", before)  # 'mandated by FINRA', not 'by the FINRA'
    article = re.search(r"(?i)\b(a|an)\s+$", before)
    if not article:
        return before
    word = "" if plural_ else ("an " if name[:1].lower() in "aeiou" else "a ")
    if article.group(1)[:1].isupper():
        word = word.capitalize()
    return before[: article.start()] + word


@lru_cache(maxsize=1)
def bare_names() -> frozenset[str]:
    """Names said without an article ('NASA', 'COVID-19'), though a kind phrase before them had one."""
    return frozenset(str(n) for n in lexicon().get("bare_names", []))


@lru_cache(maxsize=1)
def _the_kinds() -> frozenset[str]:
    return frozenset(str(k) for k in lexicon().get("the_kinds", []))


def in_running_text(name: str, kind: str = "") -> str:
    """A name as a sentence says it: 'the Roman Empire', 'the Qi wall', 'the Sun'; 'Hamlet' and 'Yale University'
    stay bare, as does a name that opens with its own determiner or is said bare ('NASA'). An agency or account
    called by initials takes 'the' ('the IRS', 'the Roth IRA'; read 29)."""
    toks = words(name)
    if not toks or toks[0].lower() in {"the", "a", "an", "this", "that", "my", "your"} or name in bare_names():
        return name
    if opens_with_owner(name):
        return name
    if name in lexicon()["definite_names"] or singular(toks[-1].lower()) in _the_kinds():
        return "the " + name
    if kind in _INITIALS_TAKE_THE and toks[-1].isupper() and toks[-1].isalpha() and len(toks[-1]) > 1:
        return "the " + name
    return name


def opens_with_owner(name: str) -> bool:
    """"NASA's Deep Impact mission": the owner is the name's determiner, so no article goes before it."""
    return bool(re.match(r"[\w.-]+['’]s\s", name))


# Kinds whose names are said bare unless the lexicon's `definite_names` has them ('Great Britain', 'Wells Fargo').
BARE_KINDS = frozenset({"country", "state", "city", "province", "county", "town", "continent", "bank"})
_INITIALS_TAKE_THE = frozenset({"agency", "department", "administration", "bureau", "commission", "account"})


def takes_the(before: str, name: str, kind: str = "") -> bool:
    """Whether running text puts 'the' before `name` (`in_running_text`) where `before` stands, which has no 'a'
    or 'an' ('create a Lite account' stays indefinite)."""
    return in_running_text(name, kind) != name and not re.search(r"(?i)\b(?:a|an)\s+$", before)


def with_possessive(name: str, replaced: str) -> str:
    """`name` in the place of `replaced`, keeping its possessive: "Byzantine Empire's" -> "Roman Empire's"."""
    m = re.search(r"['’]s$", replaced)
    return name + m.group(0) if m and not re.search(r"['’]s?$", name) else name


def with_the(before: str) -> str:
    """The words before a name that takes 'the' ('the size of the Sun'), whatever determiner stood there; none
    after a modifier of the phrase ('the most popular Premier League', not 'the most popular the Premier League')."""
    if re.search(r"(?i)\bthe\s+$", before):
        return before
    last = words(before)[-1].lower() if words(before) else ""
    if last and last not in stopwords() and not re.search(r"(?i)\b(?:this|that|an?)\s+$", before) \
            and re.search(r"(?i)\b(?:the|a|an|this|that|its|their)\s+(?:\w+\s+){1,3}$", before):
        return before
    return re.sub(r"(?i)\b(?:this|that|an?)\s+$", "", before) + "the "


def without_name_article(before: str, name: str) -> str:
    """The words before a name, less a 'the' that belonged to the replaced name ('to The Office series' ->
    'to Saturday Night Live') or that the name brings itself ('the' + 'The Office'; read 31)."""
    if re.search(r"(?<=\w )The\s+$", before) or (re.match(r"(?i)the\s", name) and re.search(r"(?i)\bthe\s+$", before)):
        return re.sub(r"(?i)\bthe\s+$", "", before)
    return before


def substitute(text: str, phrase: str, name: str) -> str | None:
    """`text` with its first `phrase` (case-insensitive, whole words) replaced by `name`; the words around stay
    ('the Byzantine Empire' -> 'Rome', not 'the Rome')."""
    m = re.search(r"(?i)(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", text)
    if not m:
        return None
    before = text[: m.start()]
    toks = words(name)
    if name in lexicon()["definite_names"]:
        before = with_the(before)
    elif name in bare_names():
        before = fit_article(before, name)
    elif len(toks) == 1 and not name.isupper() and toks[0][:1].isupper() and not singular(toks[0]):
        before = re.sub(r"(?i)\bthe\s+$", "", before)
    after = text[m.end() :]
    appositive = re.match(r",\s+(?:the\s+)?[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*,", after)
    if appositive and phrase[:1].islower():
        # "Jupiter's moon, Europa," read as Io: the appositive and the owner belong to the replaced thing, so
        # they go with it ('the surface of Io', not "of Jupiter's Io, Europa,"; read 33).
        after = after[appositive.end() :]
        before = re.sub(r"\b[A-Z][\w-]*(?:'s|’s)\s+$", "", before)
    out = without_name_article(agree_auxiliary(before, phrase, name), name) + name + after
    return out[0].upper() + out[1:]


def agree_auxiliary(before: str, phrase: str, name: str) -> str:
    """The words before a plural phrase replaced by a singular name, with an opening auxiliary made singular: 'Do
    US-based companies have to ...' read as IBM is 'Does IBM have to ...' (read 33)."""
    if not _plural_phrase(phrase) or re.search(r"[^s]s$", name):  # 'the Arizona Cardinals' may be plural
        return before
    return re.sub(r"^(\s*)(do|are|were|have)(\s+)$", lambda a: a[1] + _SINGULAR_AUX[a[2].lower()] + a[3],
                  before, flags=re.I)


_SINGULAR_AUX = {"do": "does", "are": "is", "were": "was", "have": "has"}


def _plural_phrase(phrase: str) -> bool:
    """A phrase that ends in the plural of a kind noun ('US-based companies')."""
    ws = words(phrase)
    return bool(ws) and ws[-1].lower().endswith("s") and singular(ws[-1]) not in (None, ws[-1].lower())


_RENAMED = r"\s*(?:,|\(|--)?\s*(?:(?:which|that)\s+)?(?:later\s+|eventually\s+|then\s+)?(?:became|is now|are now|now|was renamed(?: to)?|were renamed(?: to)?|renamed)\s+(?:the\s+)?"


def renamed_merged(names: list[str], text: str) -> list[str]:
    """Drop a name that the text says became another of the names ('The Chicago Cardinals became the St. Louis
    Cardinals in 1960 and eventually moved and became the Arizona Cardinals', 'the Chicago Cardinals (now the
    Arizona Cardinals)'): one thing under its old and new names, not two rivals."""
    def renamed(old: str) -> bool:
        return any(re.search(re.escape(old) + r"\b[^.]{0,80}?" + _RENAMED + re.escape(new) + r"\b(?!['’]s)", text, re.IGNORECASE)
                   for new in names if new != old and not same_thing(new, old))
    return [n for n in names if not renamed(n)]
