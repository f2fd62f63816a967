"""Synthesize stage: conversations -> candidate records (and rejections with reasons).

Every enabled generator of the registry (`builder/synthesize/rules/`, see `base.py`) runs over every user
turn. Histories are only borrowed within a block of conversations of the same domain, so that the split
stage can keep every block in one split and no conversation ever feeds two splits.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from builder.conversation import Conversation
from builder.record import Record
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection, load_rules
from builder.synthesize.context import TurnContext, names_by_kind

# `config` below is a builder.config.SynthesizeConfig. It is not imported: the config imports the registry to
# check its keys, and the import graph stays one-way.


@dataclass
class SynthesisResult:
    candidates: list[Record] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    turns: list[tuple[str, int]] = field(default_factory=list)  # every input user turn
    blocks: dict[str, str] = field(default_factory=dict)  # conversation id -> block id


def _hash(*parts: object) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def assign_blocks(conversations: list[Conversation], size: int, seed: int) -> dict[str, str]:
    """Group conversations of one domain into seeded blocks of `size` (a short tail joins the last block)."""
    by_domain: dict[str, list[Conversation]] = {}
    for conv in conversations:
        by_domain.setdefault(conv.domain, []).append(conv)
    blocks: dict[str, str] = {}
    for domain, convs in sorted(by_domain.items()):
        convs = sorted(convs, key=lambda c: _hash(seed, c.id))
        n_blocks = max(1, len(convs) // size)
        for i, conv in enumerate(convs):
            blocks[conv.id] = f"{domain}-{min(i // size, n_blocks - 1):03d}"
    return blocks


def turn_contexts(
    conversations: list[Conversation], blocks: dict[str, str], seed: int, source: str, corpus: Any = None
) -> list[TurnContext]:
    """One context per user turn; each knows its block-mates' conversations, entities and turn contexts."""
    members: dict[str, list[Conversation]] = {}
    by_domain: dict[str, list[Conversation]] = {}
    for conv in conversations:
        members.setdefault(blocks[conv.id], []).append(conv)
        by_domain.setdefault(conv.domain, []).append(conv)
    block_names = {block: names_by_kind(convs) for block, convs in members.items()}
    domain_names = {domain: names_by_kind(convs) for domain, convs in by_domain.items()}
    contexts = []
    for conv in conversations:
        block = members[blocks[conv.id]]
        donors = [c for c in block if c.id != conv.id]
        entities = [
            (e.text, c.id, n)
            for c in block
            for n, i in enumerate(c.user_turn_indices(), start=1)
            for e in tx.entities(c.turns[i].rewrite or c.turns[i].text)
        ]
        for n, index in enumerate(conv.user_turn_indices(), start=1):
            contexts.append(TurnContext(conv, n, index, seed, source, donors, entities, corpus=corpus,
                                        block_names=block_names[blocks[conv.id]], domain_names=domain_names[conv.domain]))
    by_block: dict[str, list[TurnContext]] = {}
    for ctx in contexts:
        by_block.setdefault(blocks[ctx.conv.id], []).append(ctx)
    for ctx in contexts:
        ctx.partners = [o for o in by_block[blocks[ctx.conv.id]] if o is not ctx]
    return contexts


def _sampled(ctx: TurnContext, name: str, rate: float) -> bool:
    if rate >= 1.0:
        return True
    return int(_hash(ctx.seed, ctx.conv.id, ctx.turn, "rate", name)[:8], 16) / 0xFFFFFFFF < rate


def enabled_generators(config: Any) -> list[tuple[Any, float]]:
    """(generator instance, rate) for every enabled generator, in config order."""
    registry = load_rules()
    out = []
    for name, gen_config in config.generators.items():
        if name not in registry:
            raise ValueError(f"unknown generator {name!r}; known: {sorted(registry)}")
        if gen_config.enabled:
            out.append((registry[name](**gen_config.options()), gen_config.rate))
    return out


def _corpus(conversations: list[Conversation], generators: list[tuple[Any, float]]) -> Any:
    """The pooled passages of the build, made only when an enabled generator reads them."""
    if not any(getattr(g, "needs_corpus", False) for g, _ in generators):
        return None
    from builder.synthesize.corpus import Corpus

    return Corpus.from_conversations(conversations)


def synthesize(
    conversations: list[Conversation],
    config: Any,
    seed: int,
    source_dataset: str,
    progress: Callable[[Iterable], Iterable] = lambda it: it,
) -> SynthesisResult:
    """Run every enabled generator over every user turn."""
    generators = enabled_generators(config)
    blocks = assign_blocks(conversations, config.block_size, seed)
    contexts = turn_contexts(conversations, blocks, seed, source_dataset, _corpus(conversations, generators))
    result = SynthesisResult(blocks=blocks, turns=[(c.conv.id, c.turn) for c in contexts])
    for ctx in progress(contexts):
        for generator, rate in generators:
            if not _sampled(ctx, generator.name, rate):
                continue
            for out in generator.generate(ctx):
                (result.candidates if isinstance(out, Record) else result.rejections).append(out)
    return result


def method_versions() -> dict[str, str]:
    """Every registered rule generator's version, by name (the manifest's `generators`)."""
    return {name: cls.version for name, cls in load_rules().items()}


def generator_descriptions() -> dict[str, str]:
    """How each registered rule generator makes its records (its `describe`), by name: for the dataset card."""
    return {name: " ".join(getattr(cls, "describe", "").split()) for name, cls in load_rules().items()}


def __getattr__(name: str) -> Any:
    # METHOD_VERSIONS is read from the registry when asked for, so importing this package loads no rules.
    if name == "METHOD_VERSIONS":
        return method_versions()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["synthesize", "SynthesisResult", "assign_blocks", "turn_contexts", "method_versions", "generator_descriptions",
           "METHOD_VERSIONS"]
