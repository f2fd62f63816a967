"""The build's steps, one per stage: each reads the previous stage's files in the work directory and writes its own,
so a curator can rerun one stage alone. Every step takes a Context and returns its counts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from builder.build.inputs import input_path, read_input, source_name
from builder.build.llm import llm_synthesize
from builder.build.manifest import manifest, stage_counts
from builder.build.workdir import WorkDir
from builder.config import BuildConfig
from builder.conversation import Conversation
from builder.dedup import dedup
from builder.io import read_jsonl, write_json, write_jsonl
from builder.record import SPLITS
from builder.release import published, write_release
from builder.release.card import card_assets, render_card
from builder.rows import Assignment
from builder.split import SplitError, split
from builder.synthesize import synthesize
from builder.validate import validate

Progress = Callable[[Iterable, str], Iterable]


def no_progress(items: Iterable, label: str) -> Iterable:
    return items


@dataclass(frozen=True)
class Context:
    """What every step gets: the config, the work directory, and how to report progress and use the LLM cache."""

    config: BuildConfig
    work: WorkDir
    progress: Progress = no_progress
    cache_dir: str | None = None  # LLM response cache; None: $CLARIEDGE_CACHE_DIR or the user cache folder
    no_cache: bool = False
    llm_progress: Callable[[Any], None] | None = None  # gets a builder.llm.Tally per LLM batch and request


def run_ingest(ctx: Context) -> dict[str, int]:
    conversations = read_input(ctx.config)
    write_jsonl(ctx.work.conversations, (c.to_dict() for c in conversations))
    return {"conversations": len(conversations)}


def run_synthesize(ctx: Context) -> dict[str, int]:
    config, work = ctx.config, ctx.work
    conversations = [Conversation.from_dict(r) for r in read_jsonl(work.need(work.conversations, "ingest"))]
    source = source_name(config, input_path(config))
    result = synthesize(conversations, config.synthesize, config.seed, source,
                        lambda it: ctx.progress(it, "synthesize"))
    candidates = [r.to_dict() for r in result.candidates]
    rejections = [r.to_dict() for r in result.rejections]
    if config.llm is not None:
        candidates, rejections = llm_synthesize(config, work, conversations, result, source, candidates, rejections,
                                                ctx.cache_dir, ctx.no_cache, ctx.llm_progress)
    write_jsonl(work.candidates, candidates)
    write_jsonl(work.rejected, rejections)
    write_jsonl(work.turns, ({"conversation_id": c, "turn": t, "block": result.blocks[c]} for c, t in result.turns))
    return {"candidates": len(candidates), "rejected": len(rejections)}


def run_validate(ctx: Context) -> dict[str, int]:
    work = ctx.work
    valid, quarantined = validate(read_jsonl(work.need(work.candidates, "synthesize")))
    write_jsonl(work.validated, valid)
    write_jsonl(work.quarantine, (q.to_dict() for q in quarantined))
    return {"validated": len(valid), "quarantined": len(quarantined)}


def run_dedup(ctx: Context) -> dict[str, int]:
    work = ctx.work
    result = dedup(read_jsonl(work.need(work.validated, "validate")), ctx.config.dedup.query_threshold)
    write_jsonl(work.deduplicated, result.kept)
    write_jsonl(work.duplicates, (d.to_dict() for d in result.dropped))
    return {"deduplicated": len(result.kept), "duplicates": len(result.dropped)}


def run_split(ctx: Context) -> dict[str, int]:
    config, work = ctx.config, ctx.work
    records = read_jsonl(work.need(work.deduplicated, "dedup"))
    blocks = {t["conversation_id"]: t["block"] for t in read_jsonl(work.need(work.turns, "synthesize"))}
    for stale in (work.split, work.split_dropped):  # a failed split must leave nothing for `clariedge release`
        stale.unlink(missing_ok=True)
    if not records:
        counts = stage_counts(work, {})
        raise SplitError(f"{work.deduplicated}: no record left to split ({counts['candidates']} candidates, "
                         f"{counts['rejected_by_generators']} rejected by the generators, {counts['quarantined']} "
                         f"quarantined, {counts['duplicates']} duplicates): every split would be empty")
    result = split(records, config.split.model_dump(), config.seed, config.dedup.query_threshold, blocks)
    write_jsonl(work.split_dropped, (d.to_dict() for d in result.dropped))
    write_json(work.split_report, {"groups": result.groups, "leakage": result.leakage, "quality": result.quality})
    write_jsonl(work.split, (Assignment(s, r).to_dict() for s in SPLITS for r in result.splits[s]))
    return {s: len(result.splits[s]) for s in SPLITS} | {"dropped_by_split": len(result.dropped)}


def run_release(ctx: Context, out: Path, bump: str | None = None) -> tuple[Path, dict[str, Any]]:
    """Write OUT/<name>/<version>/; returns its directory and the manifest written there."""
    from builder.release.versioning import decide_version

    config, work = ctx.config, ctx.work
    splits = {s: [] for s in SPLITS}
    for row in read_jsonl(work.need(work.split, "split")):
        splits[row["split"]].append(published(row["record"]))  # as they read back: diffs compare like with like
    # --bump: version computed from the newest release in OUT/<name>/ and checked against the changes.
    decision = decide_version(Path(out) / config.name, config.version, splits, bump)
    data, accounting = manifest(config, work, splits, decision)
    card = render_card(
        splits,
        name=config.name,
        version=decision.version,
        license=config.license,
        source_datasets=config.source_datasets,
        methods=data["generators"],
        changelog=decision.changelog,
        descriptions=data["generator_descriptions"],
    )
    target = Path(out) / config.name / decision.version
    release = write_release(target, splits, data, card, extra_files={"accounting.jsonl": accounting},
                            assets=card_assets(splits))
    return release, data
