"""Easy negatives: the fully specified query, before or after retrieval."""

from __future__ import annotations

import re
from typing import Iterator

from builder.record import Record, clear_target
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, register
from builder.synthesize.context import TurnContext, donor_history

PERSONAL_PRONOUNS = frozenset({"it", "they", "them", "he", "him", "his", "she", "her", "these", "those"})
# 'What about Residential Yard Waste?': even a rewrite that opens so leans on what was said before it.
LEANS_BACK = ("what about ", "how about ", "and ", "or ", "same for ")


_POINTED = re.compile(r"(?i)\b(?:the|this|that|these|those|which|other|another|some)\s+[a-z]|\bsome\W*$")
# 'the difference with the dialog node': a comparison that says one of its two sides.
_ONE_SIDED = re.compile(r"(?i)\bthe\s+differences?\s+(?:with|from|to)\b")
_TWO_SIDES = re.compile(r"(?i)\b(?:between|vs\.?|versus|and)\b")
# 'What does OTS stand for?': an acronym has many expansions; only the talk before or the passages say which.
_ACRONYM_ASKED = re.compile(r"(?i:\s*what\s+(?:does|do|is)\s+(?:the\s+)?(?:acronym\s+|abbreviation\s+)?)"
                            r"[A-Z][A-Z0-9]{1,5}s?(?i:\s+(?:stand\s+for|mean)\b)")


_THE_OTHER = re.compile(r"(?i)\bthe\s+others?\b(?!\s+hand\b)")
# 'the Soviet orbit made three years earlier': earlier than something said before; 'earlier than 1950' says what.
_UNANCHORED_TIME = re.compile(r"(?i)\b(?:years?|months?|weeks?|days?|decades?|centuries|century)\s+(?:earlier|later)\b(?!\s+than\b)")
# Where a question is set: rules, fees and help differ from one place to the next.
_PLACE_KINDS = ("state", "country", "city", "county")


def _places(text: str) -> bool:
    """The text names a place: a state, country, city or county (capitalised and of that kind, or the lexicon's)."""
    return any(tx.named_of_kind(text, kind) or any(tx.says(text, n) for n in tx.lexicon_names().get(kind, []))
               for kind in _PLACE_KINDS)


def lost_place(query: str, history: list[dict[str, str]]) -> bool:
    """The user's turns before name a place and the rewrite names none: 'I need to register my boat and boat
    trailer' after a talk set in New York (read 50, ce-3f1c2c7a4478523f). Only that talk says where it is asked."""
    users = "\n".join(t["content"] for t in history if t["role"] == "user")
    return bool(users) and _places(users) and not _places(query)


_CLOSING_THAT = re.compile(r"(?i)\b(?:that|those)\W*$")
_CLAUSES = re.compile(r"(?i)[?,;]|\b(?:and|if|when|so|then)\b")


def _bare_demonstrative(query: str) -> bool:
    """'this' with no noun of its own ('Isn't this where ...', 'What does this mean?', 'Is this a fast way to ...?'):
    a pointer to what was said before; so is a closing 'that' in a one-clause question ('why don't you provide
    that?', read 63, ce-a772062d1829452d). ('Can I extend the web chat? if so, how can I do that?' points inside its
    own question, so that 'that' stays.)"""
    if _CLOSING_THAT.search(query) and not _CLAUSES.search(_CLOSING_THAT.sub("", query)):
        return True
    toks = [w.lower() for w in tx.words(query)]
    for i, w in enumerate(toks):
        after = toks[i + 1] if i + 1 < len(toks) else None
        if w == "this" and (after is None or after in tx.stopwords() or after in tx.lexicon()["verbs"]):
            return True
    return False


def _names_something(query: str, texts: list[str]) -> bool:
    """A name, beyond a common word capitalized only because it opens the query ('Worker node'): the first word
    counts when the texts (the turn's passages) also capitalize it mid-sentence ('Kubernetes cluster')."""
    ws = tx.words(query)
    for e in tx.entities(query):
        rest = tx.words(e.text)[1:]
        if e.start > query.find(ws[0]) or ws[0].isupper() or not all(w[:1].islower() for w in rest):
            return True
        mid = re.compile(r"[a-z,;][ \t]+" + re.escape(ws[0]) + r"\b")
        if any(mid.search(t) for t in texts):
            return True
    return False


@register
class StandaloneClear:
    """Easy negatives: the fully specified query, before or after retrieval. Half of the later turns
    are asked with no history, as in a fresh chat: otherwise an empty history would almost always mean
    'needs clarification' and a model could learn that shortcut instead of reading the query."""

    name = "standalone_clear"
    version = "24"
    default_rate = 0.6
    describe = ("MTRAG's human standalone rewrite of a turn, asked after its own history, in a fresh chat, or (a "
                "topic switch) after another conversation's history, and for a share of turns also with the turn's "
                "relevant passages: an easy negative. A full question after a topic switch is clear; a question "
                "asking what an acronym stands for is clear only after its own talk or over its passages, and one whose "
                "talk named a place it leaves out only after its own talk. A rewrite that still points back (a bare "
                "'this', a closing 'that' in a one-clause question, 'three years earlier' with nothing to count from) makes no "
                "record.")

    def __init__(self, post_share: float = 0.5, switch_share: float = 0.3) -> None:
        for key, value in (("post_share", post_share), ("switch_share", switch_share)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{key} must be between 0 and 1, got {value}")
        self.post_share = post_share  # share of turns that also get a post-retrieval copy
        self.switch_share = switch_share  # share of turns asked after a block-mate's history instead

    def generate(self, ctx: TurnContext) -> Iterator[Record | Rejection]:
        method, version = self.name, self.version
        query = ctx.standalone
        texts = [p.text for p in ctx.relevant_passages()]
        if tx.words(query) and any(w.lower() in PERSONAL_PRONOUNS for w in tx.words(query)):
            # 'wasn't he in captain america?': a first turn can be ambiguous too; it is no easy negative.
            yield ctx.reject(method, "standalone form contains a pronoun", query)
            return
        if _bare_demonstrative(query):
            # 'Isn't this where NASA technology comes in?': 'this' stands for something said before (read 44,
            # ce-886805cf61ea40e6); the rewrite is no standalone question.
            yield ctx.reject(method, "standalone form has a bare 'this' (or a closing 'that') pointing back", query)
            return
        if _THE_OTHER.search(query):
            # 'What is the difference between an Earth satellite orbit and the other orbits?': other than what was
            # said before (read 49, ce-206614a49df1c53b)
            yield ctx.reject(method, "standalone form says 'the other ...', pointing back", query)
            return
        if _UNANCHORED_TIME.search(query):
            # 'Did the Soviet orbit made three years earlier map a different region?' as a clear topic switch (read
            # 66, ce-ca2f8dd358406f32): MTRAG's first turn, which its assistant could not place either
            yield ctx.reject(method, f"standalone form says '{_UNANCHORED_TIME.search(query).group(0)}' with nothing to count from", query)
            return
        if tx.bare_ordinal(query):
            # 'When is the next?': the next of something said before
            yield ctx.reject(method, f"standalone form has '{tx.bare_ordinal(query)}' with no noun, pointing back", query)
            return
        if not tx.is_question(query) and (query.rstrip().endswith((".", "!")) or not tx.content_stems(query)):
            # 'omg.', 'ok, diversified is good.': a remark, nothing to answer. Keyword queries ('Time series
            # data', 'IBM Cloudant legacy') are what people type into a search box: they stay.
            yield ctx.reject(method, "standalone form is a remark, no question or request", query)
            return
        if query.strip().lower().startswith(LEANS_BACK):
            yield ctx.reject(method, "standalone form leans on the turn before ('what about ...')", query)
            return
        if len(tx.words(query)) == 1 and not tx.names_in(query):
            # 'Clusters': one common noun names a topic, not what is asked about it; no clear question.
            yield ctx.reject(method, "standalone form is a single common word", query)
            return
        if tx.is_fragment(query) and not tx.is_question(query) and not _names_something(query, texts):
            # 'process for contractor', 'secondary source', 'Worker node': a keyword query that names nothing leaves
            # open what it is about (reads 20 and 23); 'IBM Cloudant legacy' names its topic and stays.
            yield ctx.reject(method, "standalone form is a keyword fragment that names nothing", query)
            return
        if tx.not_understood(ctx.answer):
            # 'any example of code for cart ahh sauce rather?': the assistant could not tell what was asked (read 25).
            yield ctx.reject(method, "the assistant's reply says it did not understand the turn", query)
            return
        if len(tx.content_stems(query)) < 2 and not tx.names_in(query) and _POINTED.search(query):
            # 'What is the value?', 'Which type can I create?': one common word, pointed at and named nowhere; which
            # one only the talk before says (read 34). 'What is cryptoshredding?' stays.
            yield ctx.reject(method, "standalone form points at one common word and names nothing", query)
            return
        if _ONE_SIDED.search(query) and not _TWO_SIDES.search(query):
            # 'What is the difference with the dialog node?': the other side of the comparison was said before (read 34).
            yield ctx.reject(method, "standalone form compares with one side only", query)
            return
        phrase = tx.unresolved_kind_phrase(query)
        if phrase:
            # 'Does the program ...?' with nothing saying which program: no clear question either.
            yield ctx.reject(method, f"standalone form leaves '{phrase}' open", query)
            return
        rng = ctx.rng(method)
        own = lost_place(query, ctx.history)  # asked anywhere else, the question would lose where it is set
        history = ctx.history if rng.random() < 0.5 or own else []
        source = None
        switch = ctx.rng(f"{method}|switch")
        # Only a question that names its topic is clear after a talk about something else: 'How can I get
        # enforcement support?' after a compost talk leaves open what is enforced (read 21); 'Retention time for
        # conversations?' after a VPC talk, whose capital opens the query and names nothing, leaves open whose (read 26).
        acronym = bool(_ACRONYM_ASKED.match(query))
        if switch.random() < self.switch_share and _names_something(query, texts) and not acronym and not own:
            donor, where = donor_history(ctx, switch, empty_share=0.0)
            if donor:
                history, source = donor, where
        docs = [p.as_document() for p in ctx.relevant_passages()[:3]]
        settings = ["pre_retrieval"] + (["post_retrieval"] if docs and rng.random() < self.post_share else [])
        if acronym and not history:
            settings.remove("pre_retrieval")  # in a fresh chat nothing says which expansion (read 35)
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
                provenance=ctx.provenance(method, version, history_source=source, docs=[ctx.conv.id] if post else None),
            )
