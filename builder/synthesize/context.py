"""What every generator looks at: one user turn (`TurnContext`) and the helpers generators share
(donor histories from the stitching block, the pair hash, history lookups)."""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Iterator

from builder.conversation import Conversation, Passage
from builder.record import Record, clear_target
from builder.synthesize import text as tx
from builder.synthesize.rejection import Rejection


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
    block_names: dict[str, list[str]] = field(default_factory=dict, repr=False)  # kind -> names asked about in the block
    domain_names: dict[str, list[str]] = field(default_factory=dict, repr=False)  # kind -> names asked about in the domain
    partners: list[TurnContext] = field(default_factory=list, repr=False)  # the block's other turns
    corpus: Any = field(default=None, repr=False)  # the build's pooled passages (builder.synthesize.corpus.Corpus)

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
    def answer(self) -> str:
        """The assistant's reply to the turn ('' when the conversation ends on it)."""
        after = self.conv.turns[self.index + 1 : self.index + 2]
        return after[0].text if after and after[0].role == "assistant" else ""

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


def pair_id(ctx: TurnContext, method: str) -> str:
    """The id shared by the records of one contrastive pair (one turn, one method)."""
    return "pair-" + hashlib.sha256(f"{ctx.conv.id}|{ctx.turn}|{method}".encode()).hexdigest()[:12]


def history_of(conv: Conversation, index: int) -> list[dict[str, str]]:
    return [{"role": t.role, "content": t.text} for t in conv.turns[:index]]


def history_text(history: list[dict[str, str]]) -> str:
    return "\n".join(h["content"] for h in history)


NO_HISTORY = {"conversation_id": "", "turns": 0}


def donor_history(
    ctx: TurnContext, rng: random.Random, empty_share: float = 0.25, avoid: Callable[[str], bool] | None = None
) -> tuple[list[dict], dict]:
    """An unrelated history: a prefix of a block-mate conversation, or none at all.

    `avoid(text)` rejects a history that would resolve the query; up to three donors are tried,
    then the empty history (which resolves nothing) is used."""
    usable = [d for d in ctx.donors if len(d.user_turn_indices()) >= 2]
    if not usable or rng.random() < empty_share:
        return [], dict(NO_HISTORY)
    rng.shuffle(usable)
    for donor in usable[:3]:
        user_idx = donor.user_turn_indices()
        cut = user_idx[rng.randint(1, min(2, len(user_idx) - 1))]  # one or two full exchanges
        history = history_of(donor, cut)
        if avoid is None or not avoid(history_text(history)):
            return history, {"conversation_id": donor.id, "turns": cut}
    return [], dict(NO_HISTORY)


def unrelated_contexts(
    ctx: TurnContext, rng: random.Random, avoid: Callable[[str], bool], empty_share: float = 1.0
) -> list[tuple[list[dict], dict]]:
    """An unrelated history from the block and, for `empty_share` of the turns, no history at all too."""
    first = donor_history(ctx, rng, empty_share=0.0, avoid=avoid)
    empty = ([], dict(NO_HISTORY))
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
    """Index of the latest history turn that mentions `phrase` or says it by another name ('COVID-19' for
    'Coronavirus Disease')."""
    for i in range(len(history) - 1, -1, -1):
        if tx.mentions(history[i]["content"], phrase) or tx.says(history[i]["content"], phrase):
            return i
    return None


def pick_pattern_options(ctx: TurnContext, head: str, exclude: str) -> list[str]:
    """Other entities of the same kind, from this conversation and its block-mates."""
    seen = tx.content_stems(exclude)
    out: list[str] = []
    for name, _, _ in ctx.block_entities:
        # 'The Office' is 'Office series' said short: content words, not 'The', decide (read 33)
        if (tx.head_of(name) == head and tx.is_name(tx.clean_name(name), head)
                and not (tx.content_stems(name) <= seen) and name not in out
                and not any(tx.same_thing(name, o) for o in [exclude, *out])):  # 'Virtual Private Cloud' is 'IBM Cloud VPC'
            out.append(name)
    return out


def resolved_by_history(
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


def names_by_kind(conversations: list[Conversation]) -> dict[str, list[str]]:
    """kind -> the distinct names the conversations' user turns ask about, in conversation order. The kind
    comes from the name's words, the kind lexicon, or how the turn's passages describe it."""
    out: dict[str, list[str]] = {}
    for conv in sorted(conversations, key=lambda c: c.id):
        for i in conv.user_turn_indices():
            turn = conv.turns[i]
            texts = [p.title + "\n" + p.text for p in turn.passages]
            for e in tx.entities(turn.rewrite or turn.text):
                name = tx.clean_name(e.text)
                kind = tx.kind_of(name, texts)
                if kind and tx.is_name(name, kind):
                    # 'The Office series' names the lexicon's 'The Office': no reading says 'Office series'.
                    bare = re.sub(rf"(?i)\s+{re.escape(kind)}$", "", name).lower()
                    name = next((n for n in tx.lexicon_names().get(kind, []) if n.lower() in (bare, f"the {bare}")), name)
                    names = out.setdefault(kind, [])
                    if not any(tx.same_thing(name, o) for o in names):
                        names.append(tx.kind_named(name, kind, "\n".join([turn.rewrite or turn.text, *texts])))
    said = _renaming_sentences(conversations)
    return {kind: tx.renamed_merged(names, said) if said and len(names) > 1 else names for kind, names in out.items()}


_RENAMING_WORD = re.compile(r"(?i)\b(?:became|now|renamed)\b")


def _renaming_sentences(conversations: list[Conversation]) -> str:
    """The sentences of the conversations' turns that may say a thing took a new name ('the Chicago Cardinals (now
    the Arizona Cardinals)'): one franchise is one reading of 'the team', not two. Only these are searched, so a
    domain's names are weighed against a few lines, not its whole talk."""
    sentences = (s for conv in conversations for turn in conv.turns
                 for s in re.split(r"(?<=[.!?])\s+|\n", turn.text) if _RENAMING_WORD.search(s))
    return ".\n".join(dict.fromkeys(sentences))


# Passage counts a RAG system shows, drawn per record for either label: the count says nothing about the label.
RETRIEVAL_KS = (1, 2, 3, 3, 4, 5, 5, 6, 8)


def with_retrieval(ctx: TurnContext, record: Record, share: float, ks: tuple[int, ...] = RETRIEVAL_KS,
                   reread: Callable[[Record, list[Passage]], Record] | None = None) -> Record | None:
    """For `share` of the records, the same question in the post-retrieval setting, with the top-k passages BM25
    finds for its own words in the domain's pool (never the turn's own passages: the named query found those).

    The label stands. Passages retrieved for vague words ('this clinic') do not single out what the chat left
    open, and do not unsettle the one thing of the kind the chat named. `reread`, given the copy and its passages,
    may read it with what the passages name."""
    if ctx.corpus is None or share <= 0.0:
        return None
    rng = ctx.rng(f"{record.provenance['method']}|retrieval|{record.id}")
    if rng.random() >= share:
        return None
    k = rng.choice(ks)
    hits = ctx.corpus.search(ctx.conv.domain, record.query, k, exclude=[p.id for p in ctx.passages])
    if not hits:
        return None
    from builder.synthesize.corpus import METHOD  # the index module loads bm25s lazily

    provenance = dict(record.provenance, document_sources=[ctx.conv.id],
                      retrieval={"method": METHOD, "k": k, "query": record.query})
    pair = record.pair_id and "pair-" + hashlib.sha256(f"{record.pair_id}|post_retrieval".encode()).hexdigest()[:12]
    copy = replace(record, setting="post_retrieval", documents=[p.as_document() for p in hits],
                   provenance=provenance, pair_id=pair, id="")
    return reread(copy, hits) if reread else copy


def checked_retrieved_share(name: str, value: float) -> float:
    """A generator's `retrieved_share` option, checked: the share of its records also asked post-retrieval."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name}: retrieved_share must be 0..1, got {value}")
    return value


def also_retrieved(ctx: TurnContext, outputs: Iterable[Record | Rejection], share: float,
                   reread: Callable[[Record, list[Passage]], Record] | None = None) -> Iterator[Record | Rejection]:
    """Each output, and after each record its post-retrieval copy (`with_retrieval`) where one is drawn."""
    for out in outputs:
        yield out
        copy = with_retrieval(ctx, out, share, reread=reread) if isinstance(out, Record) else None
        if copy is not None:
            yield copy
