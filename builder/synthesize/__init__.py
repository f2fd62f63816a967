"""Synthesize stage: conversations -> candidate records (and rejections with reasons).

Histories are only borrowed within a block of conversations of the same domain, so that the split
stage can keep every block in one split and no conversation ever feeds two splits.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Iterable

from builder.config import SynthesizeConfig
from builder.conversation import Conversation
from builder.record import Record
from builder.synthesize import text as tx
from builder.synthesize.generators import GENERATORS, METHOD_VERSIONS, Rejection, TurnContext


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


def turn_contexts(conversations: list[Conversation], blocks: dict[str, str], seed: int, source: str) -> list[TurnContext]:
    members: dict[str, list[Conversation]] = {}
    for conv in conversations:
        members.setdefault(blocks[conv.id], []).append(conv)
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
            contexts.append(TurnContext(conv, n, index, seed, source, donors, entities))
    return contexts


def _sampled(ctx: TurnContext, name: str, rate: float) -> bool:
    if rate >= 1.0:
        return True
    return int(_hash(ctx.seed, ctx.conv.id, ctx.turn, "rate", name)[:8], 16) / 0xFFFFFFFF < rate


def synthesize(
    conversations: list[Conversation],
    config: SynthesizeConfig,
    seed: int,
    source_dataset: str,
    progress: Callable[[Iterable], Iterable] = lambda it: it,
) -> SynthesisResult:
    """Run every enabled generator over every user turn."""
    blocks = assign_blocks(conversations, config.block_size, seed)
    contexts = turn_contexts(conversations, blocks, seed, source_dataset)
    by_block: dict[str, list[TurnContext]] = {}
    for ctx in contexts:
        by_block.setdefault(blocks[ctx.conv.id], []).append(ctx)
    result = SynthesisResult(blocks=blocks, turns=[(c.conv.id, c.turn) for c in contexts])
    for ctx in progress(contexts):
        for name, gen_config in config.generators.items():
            if name not in GENERATORS:
                raise ValueError(f"unknown generator {name!r}; known: {sorted(GENERATORS)}")
            if not gen_config.enabled or not _sampled(ctx, name, gen_config.rate):
                continue
            if name == "passage_twins":
                partners = [o for o in by_block[blocks[ctx.conv.id]] if (o.conv.id, o.turn) != (ctx.conv.id, ctx.turn)]
                outputs = GENERATORS[name](ctx, partners)
            elif name == "standalone_clear":
                outputs = GENERATORS[name](ctx, config.clear_post_share)
            else:
                outputs = GENERATORS[name](ctx)
            for out in outputs:
                (result.candidates if isinstance(out, Record) else result.rejections).append(out)
    return result


__all__ = ["synthesize", "SynthesisResult", "assign_blocks", "METHOD_VERSIONS"]
