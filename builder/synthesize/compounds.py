"""Lowercase 'modifier noun' compounds that a talk compares ('the short-term bonds', 'a private cloud'): the
common-noun things of one kind that a bare 'the bonds' or 'the cloud' could mean."""

from __future__ import annotations

import re
from dataclasses import dataclass

from builder.synthesize import text as tx

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*")
# Words that stand before a modifier used as an adjective or noun ('the personal loan', 'for student loans'), not
# after a verb or a noun ('offer more loans', 'holding short-term bonds').
_BEFORE = frozenset({"the", "a", "an", "of", "for", "in", "on", "with", "and", "or", "between", "about", "from",
                     "your", "my", "their", "its", "his", "her", "our", "this", "that", "these", "those", "both",
                     "each", "any", "some", "no", "than", "versus", "vs", "into", "at", "by", "as", "like",
                     "per", "over", "under", "via", "all", "two", "three", "four", "five", "most", "many", "more"})


@dataclass(frozen=True)
class Compound:
    modifier: str  # 'long-term', 'facilitated'
    head: str  # the head noun as written: 'bonds'
    noun: str  # its singular: 'bond'
    start: int
    end: int

    @property
    def phrase(self) -> str:
        return f"{self.modifier} {self.head}"


def modifier_word(word: str, gerund: bool = False) -> bool:
    """A lowercase word that can name a kind of the noun after it; with `gerund`, an -ing word too ('withholding
    taxes'), which elsewhere is more often a verb ('holding short-term bonds')."""
    low = word.lower()
    lex = tx.lexicon()
    return (word == low and len(low) >= 3 and low not in tx.stopwords() and low not in lex["verbs"]
            and low not in tx.anaphora() and low not in lex.get("generic_modifiers", []) and not low.endswith("ly")
            and (gerund or not low.endswith("ing")) and "'" not in low and "’" not in low and not _plural_form(low))


def _plural_form(low: str) -> bool:
    """'scooters industry', 'collects information': a plural or a verb's -s form modifies no noun."""
    return low.endswith("s") and not low.endswith(("ss", "us", "ics", "ings", "is"))


def _head_noun(word: str) -> str | None:
    low = word.lower()
    if word != low or len(low) < 3 or low in tx.stopwords() or low in tx.lexicon()["verbs"] or low.endswith(("ly", "ing", "ed")):
        return None
    return tx.singular(low) or (low[:-1] if low.endswith("s") and not low.endswith("ss") else low)


def compounds(text: str, anywhere: bool = False, gerund: bool = False) -> list[Compound]:
    """Lowercase 'modifier noun' pairs that a determiner or preposition opens ('the long-term bonds', 'for student
    loans'): the common-noun things a talk compares. With `anywhere`, whatever stands before (a query's own words);
    with `gerund`, -ing modifiers too."""
    toks = [(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]
    out: list[Compound] = []
    for i in range(len(toks) - 1):
        (mod, ms, me), (head, hs, he) = toks[i], toks[i + 1]
        if text[me:hs] != " " or not modifier_word(mod, gerund) or not (noun := _head_noun(head)):
            continue
        if i + 2 < len(toks) and text[he:toks[i + 2][1]] == " " and _head_noun(toks[i + 2][0]) \
                and toks[i + 2][0].lower() not in tx.stopwords():
            continue  # 'credit card fees': the compound runs on; its head is the last noun
        # What stands right before: a word, or nothing (the text's start, a list after ':' or ',', a new line).
        before = toks[i - 1][0].lower() if i > 0 and text[toks[i - 1][2]:ms] == " " else ""
        if not anywhere and before and before not in _BEFORE:
            continue
        if before and modifier_word(toks[i - 1][0]) and text[toks[i - 1][2]:ms] == " " and not anywhere:
            continue
        out.append(Compound(mod.lower(), head, noun, ms, he))
    return out


def rivals_of(text: str, noun: str) -> list[Compound]:
    """The distinct compounds of `noun` that a text names, first mention of each modifier."""
    return _first_of_each(compounds(text), noun)


def any_named(text: str, noun: str) -> list[Compound]:
    """Every compound of `noun` a text might name, wherever it stands ('includes employer-paid payroll taxes', the
    quoted '"withholding taxes"'): before a text counts as naming only one, none of these may be another."""
    return _first_of_each(compounds(text, anywhere=True, gerund=True), noun)


def _first_of_each(found: list[Compound], noun: str) -> list[Compound]:
    seen: dict[str, Compound] = {}
    for c in found:
        if c.noun == noun and c.modifier not in seen:
            seen[c.modifier] = c
    return list(seen.values())


def kinds_of_one(text: str, found: list[Compound]) -> list[Compound]:
    """Drop a compound that the text calls a kind of another one: 'index-based mutual funds' makes index funds
    mutual funds, no rival reading of 'the funds' (read 30, ce-4710a361eee34ae6)."""
    def within(a: Compound, b: Compound) -> bool:
        pattern = rf"(?i)\b{re.escape(a.modifier)}(?:-based)?\s+{re.escape(b.modifier)}\s+{re.escape(b.head[:len(b.noun)])}"
        return a.modifier != b.modifier and re.search(pattern, text) is not None

    return [a for a in found if not any(within(a, b) for b in found)]
