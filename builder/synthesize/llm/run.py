"""The build's LLM glue: plan every request, send them through builder.llm (cache first), parse each reply.

Each round is one engine batch, so the endpoint sees full concurrency: round one holds the first requests of
every active turn generator, later rounds their follow-ups. Every call is cached under the hash of its
request, and parsing runs after the cache, so a rerun makes zero requests and an edited parser re-pays
nothing. Randomness (category, pattern, form, donor history, sampling) comes from TurnContext.rng, so the
same config always asks the same questions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from builder.record import Record
from builder.synthesize.context import TurnContext
from builder.synthesize.llm.base import LLMGenerator, LLMSettings, Request, load_llm, prompt_info, turn_generators
from builder.synthesize.rejection import Rejection


def sampled(ctx: TurnContext, name: str, rate: float) -> bool:
    return rate >= 1.0 or ctx.rng(f"llm-rate-{name}").random() < rate


def active_generators(settings: LLMSettings) -> list[LLMGenerator]:
    """The turn generators the settings give a rate above 0, in registry (name) order."""
    return [cls(settings) for cls in turn_generators().values() if cls.active(settings)]


def plan(generator: LLMGenerator, contexts: Sequence[TurnContext], settings: LLMSettings) -> list[Request]:
    rate = settings.generators[generator.name]
    return generator.plan([c for c in contexts if sampled(c, generator.name, rate)])


def ask(requests: Sequence[Request], engine: Any, stats: Any = None) -> list[tuple[Request, Any]]:
    """(request, engine Result) pairs, in order: one engine batch."""
    from builder.llm import run_requests

    return list(zip(requests, run_requests([r.spec for r in requests], engine, stats)))


def llm_synthesize(contexts: Sequence[TurnContext], settings: LLMSettings, engine: Any,
                   stats: Any = None) -> tuple[list[Record], list[Rejection]]:
    """Every active turn generator's records and rejections, generator by generator (name order)."""
    generators = {g.name: g for g in active_generators(settings)}
    records: dict[str, list[Record]] = {name: [] for name in generators}
    rejected: dict[str, list[Rejection]] = {name: [] for name in generators}
    pending = [r for g in generators.values() for r in plan(g, contexts, settings)]
    while pending:
        followups = []
        for request, reply in ask(pending, engine, stats):
            out = generators[request.generator].parse(request, reply)
            if isinstance(out, Request):
                followups.append(out)
            elif isinstance(out, Record):
                records[request.generator].append(out)
            elif isinstance(out, Rejection):
                rejected[request.generator].append(out)
            else:
                raise TypeError(f"LLM generator {request.generator}: parse() returned {type(out).__name__}, "
                                "not a Record, Rejection or Request")
        pending = followups
    return [r for name in generators for r in records[name]], [r for name in generators for r in rejected[name]]


@dataclass
class Verdicts:
    kept: list[dict] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)  # {"id", "reason", "record"}
    flagged: list[dict] = field(default_factory=list)  # kept but disputed (mode "flag")


def verify(records: Sequence[dict], settings: LLMSettings, engine: Any, stats: Any = None) -> Verdicts:
    """The judge's verdict on each record: a disputed one is dropped or, in mode "flag", kept and listed."""
    out = Verdicts()
    judge = load_llm()["verify"](settings)
    if not judge.active(settings):
        out.kept = list(records)
        return out
    for request, reply in ask(judge.plan(records), engine, stats):
        record, reason = request.data["record"], judge.parse(request, reply)
        if reason is None:
            out.kept.append(record)
            continue
        entry = {"id": record["id"], "reason": reason, "record": record}
        if settings.verify == "flag":
            out.kept.append(record)
            out.flagged.append(entry)
        else:
            out.dropped.append(entry)
    return out


def naturalize(records: Sequence[dict], settings: LLMSettings, engine: Any,
               stats: Any = None) -> tuple[list[dict], list[dict]]:
    """(edited, unchanged): the post-edited records (new ids, to verify again) and those kept as they were."""
    editor = load_llm()["naturalize"](settings)
    edited, kept = [], []
    for request, reply in ask(editor.plan(records), engine, stats):
        new = editor.parse(request, reply)
        if new is None:
            kept.append(request.data["record"])
        else:
            edited.append(new)
    return edited, kept


def methods(settings: LLMSettings) -> dict[str, dict[str, Any]]:
    """Method version and prompts of every LLM step these settings run, by method: for the manifest and card."""
    return {cls.method: {"version": cls.version, "prompt": prompt_info(cls.prompts)}
            for cls in load_llm().values() if cls.active(settings)}


def dry_run(contexts: Sequence[TurnContext], settings: LLMSettings, engine: Any, n_records: int = 0) -> dict:
    """Requests the LLM generators would send and their estimated input tokens, calling nothing.
    Follow-ups (clarify) and verify depend on earlier replies, so they are counted from the generators'
    `followups` and one verify per expected record."""
    from builder.llm import estimate

    specs = []
    followups = 0
    for generator in active_generators(settings):
        planned = [r.spec for r in plan(generator, contexts, settings)]
        specs += planned
        if getattr(generator, "followups", 0):
            followups += estimate(planned, engine).unique * generator.followups
    est = estimate(specs, engine)
    if load_llm()["verify"].active(settings):
        followups += n_records
    per_followup = est.input_tokens // max(1, est.requests) if est.requests else 400
    return {"requests": est.requests + followups, "cached": est.cached,
            "estimated_input_tokens": est.input_tokens + followups * per_followup,
            "exact_requests": est.requests, "dependent_requests_estimated": followups}
