"""LLM-backed generators, interchangeable with the rule-based ones: ambiguate (+ clarify), hard_negative,
verify (an independent judge) and naturalize (post-edit of rule-based text).

Each stage is one batch through builder.llm, so the endpoint sees full concurrency and every call is
cached: a rerun of a build makes zero requests. Randomness (category, pattern, form, donor history)
comes from TurnContext.rng, so the same config always asks the same questions.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Sequence

from builder.conversation import Passage
from builder.llm import EngineConfig, RequestSpec, Result, RunStats, estimate, load_prompt, run_requests
from builder.record import POSITIVE_CATEGORIES, Record, clear_target
from builder.synthesize.base import Rejection
from builder.synthesize.context import TurnContext, donor_history, pair_id

PATTERNS = ("hedge", "list", "open")
AMBIGUOUS_KINDS = ("underspecified_entity", "unresolved_reference", "missing_parameter", "multiple_interpretations")


@dataclass
class LLMSettings:
    """What a build config's `llm:` section holds (the endpoint itself is an EngineConfig)."""

    model: str = "gpt-4o-mini"
    temperature: float = 0.7
    max_tokens: int = 512
    seed: int | None = 13
    generators: dict[str, float] = field(default_factory=lambda: {"ambiguate": 1.0, "hard_negative": 1.0})
    verify: str = "drop"  # off | drop | flag: what a disagreement with the judge does
    naturalize: bool = False  # post-edit rule-based records (then re-verify)

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.seed is not None:
            out["seed"] = self.seed
        return out


def _docs(passages: Sequence[Passage]) -> list[dict[str, str]]:
    return [p.as_document() for p in passages]


def _prompt_info(*names: str) -> dict[str, str]:
    prompts = [load_prompt(n) for n in names]
    if len(prompts) == 1:
        return prompts[0].info()
    joined = "".join(p.sha256 for p in prompts)
    return {"name": "+".join(p.name for p in prompts), "version": "+".join(p.version for p in prompts),
            "sha256": hashlib.sha256(joined.encode()).hexdigest()}


def _method_version(*names: str) -> str:
    return "+".join(f"{n}@{load_prompt(n).version}" for n in names)


def _sampled(ctx: TurnContext, name: str, rate: float) -> bool:
    return rate >= 1.0 or ctx.rng(f"llm-rate-{name}").random() < rate


def _failed(ctx: TurnContext, method: str, result: Result, query: str | None = None) -> Rejection:
    return ctx.reject(method, f"llm: {result.error}", query)


# --- ambiguate + clarify -------------------------------------------------------------------------------


@dataclass
class _AmbiguateJob:
    ctx: TurnContext
    history: list[dict[str, str]]
    history_source: dict
    category: str
    documents: list[dict[str, str]]


def _ambiguate_jobs(contexts: Sequence[TurnContext], rate: float) -> list[_AmbiguateJob]:
    jobs = []
    for ctx in contexts:
        docs = _docs(ctx.relevant_passages())
        if not docs or not _sampled(ctx, "ambiguate", rate):
            continue
        rng = ctx.rng("llm_ambiguate")
        history, source = donor_history(ctx, rng)
        jobs.append(_AmbiguateJob(ctx, history, source, rng.choice(AMBIGUOUS_KINDS), docs))
    return jobs


def _ambiguate_specs(jobs: list[_AmbiguateJob], s: LLMSettings) -> list[RequestSpec]:
    prompt = load_prompt("ambiguate")
    return [prompt.spec(s.model, s.params(), query=j.ctx.standalone, documents=j.documents, history=j.history,
                        category=j.category) for j in jobs]


def _clarify_specs(items: list[tuple[str, list, list, list[str], str]], s: LLMSettings) -> list[RequestSpec]:
    prompt = load_prompt("clarify")
    return [prompt.spec(s.model, s.params(), query=q, history=h, documents=d, interpretations=i, pattern=p)
            for q, h, d, i, p in items]


def ambiguate(contexts: Sequence[TurnContext], settings: LLMSettings, engine: EngineConfig,
              stats: RunStats | None = None, rate: float = 1.0) -> tuple[list[Record], list[Rejection]]:
    """Clear grounded turn -> ambiguous rewrite after an unrelated history, with its clarifying question."""
    method = "llm_ambiguate"
    jobs = _ambiguate_jobs(contexts, rate)
    rejected: list[Rejection] = []
    drafts = []
    for job, res in zip(jobs, run_requests(_ambiguate_specs(jobs, settings), engine, stats)):
        if not res.ok:
            rejected.append(_failed(job.ctx, method, res))
            continue
        out = res.value
        query = out["ambiguous_query"].strip()
        if query.lower() == job.ctx.standalone.strip().lower():
            rejected.append(job.ctx.reject(method, "llm: the rewrite equals the clear query", query))
            continue
        pattern = job.ctx.rng("llm_clarify").choice(PATTERNS)
        drafts.append((job, out, query, pattern))
    items = [(q, j.history, [], out["interpretations"], p) for j, out, q, p in drafts]
    records = []
    for (job, out, query, pattern), res in zip(drafts, run_requests(_clarify_specs(items, settings), engine, stats)):
        if not res.ok:
            rejected.append(_failed(job.ctx, method, res, query))
            continue
        question = res.value["question"].strip()
        if not question.endswith("?"):
            rejected.append(job.ctx.reject(method, "llm: the clarification is not a question", query))
            continue
        category = out["category"] if out["category"] in POSITIVE_CATEGORIES else job.category
        prov = job.ctx.provenance(method, _method_version("ambiguate", "clarify"), job.history_source,
                                  [d["id"] for d in job.documents])
        prov["prompt"] = _prompt_info("ambiguate", "clarify")
        records.append(Record(
            domain=job.ctx.conv.domain, setting="pre_retrieval", history=job.history, query=query, documents=[],
            needs_clarification=True, category=category, interpretations=list(out["interpretations"]),
            target={"clarification": question}, provenance=prov, resolution=None,
            pair_id=pair_id(job.ctx, method), clarification_pattern=res.value["pattern"],
        ))
    return records, rejected


# --- hard negatives -------------------------------------------------------------------------------------


def hard_negatives(contexts: Sequence[TurnContext], settings: LLMSettings, engine: EngineConfig,
                   stats: RunStats | None = None, rate: float = 1.0) -> tuple[list[Record], list[Rejection]]:
    """Standalone turn -> elliptical/pronominal follow-up that its own history resolves (answer, don't ask)."""
    method = "llm_hard_negative"
    jobs = [c for c in contexts if c.turn > 1 and c.history and _sampled(c, "hard_negative", rate)]
    prompt = load_prompt("hard_negative")
    forms = [c.rng(method).choice(("elliptical", "pronominal")) for c in jobs]
    specs = [prompt.spec(settings.model, settings.params(), query=c.standalone, history=c.history, form=f)
             for c, f in zip(jobs, forms)]
    records, rejected = [], []
    for ctx, res in zip(jobs, run_requests(specs, engine, stats)):
        if not res.ok:
            rejected.append(_failed(ctx, method, res))
            continue
        out = res.value
        rewrite = out["rewrite"].strip()
        if rewrite.lower() == ctx.standalone.strip().lower():
            rejected.append(ctx.reject(method, "llm: the rewrite is still standalone", rewrite))
            continue
        turn = out["resolving_turn"] if out["resolving_turn"] < len(ctx.history) else None
        prov = ctx.provenance(method, _method_version("hard_negative"))
        prov["prompt"] = _prompt_info("hard_negative")
        records.append(Record(
            domain=ctx.conv.domain, setting="pre_retrieval", history=ctx.history, query=rewrite, documents=[],
            needs_clarification=False, category="hard_negative", interpretations=[ctx.standalone],
            target=clear_target(), provenance=prov,
            resolution={"source": "history", "turn_index": turn, "document_id": None,
                        "referent": out["referent"].strip() or ctx.standalone, "resolved_query": ctx.standalone},
            pair_id=None, clarification_pattern=None,
        ))
    return records, rejected


# --- verify and naturalize -------------------------------------------------------------------------------


def verify_specs(records: Sequence[dict], settings: LLMSettings) -> list[RequestSpec]:
    prompt = load_prompt("verify")
    judge = {**settings.params(), "temperature": 0.0}  # a judge should not be creative
    return [prompt.spec(settings.model, judge, history=r["history"], query=r["query"], documents=r["documents"],
                        setting=r["setting"]) for r in records]


@dataclass
class Verdicts:
    kept: list[dict] = field(default_factory=list)
    dropped: list[dict] = field(default_factory=list)  # {"id", "reason", "record"}
    flagged: list[dict] = field(default_factory=list)  # kept but disputed (mode "flag")


def verify(records: Sequence[dict], settings: LLMSettings, engine: EngineConfig,
           stats: RunStats | None = None) -> Verdicts:
    """An independent judge re-labels each record; a disagreement on needs_clarification drops or flags it."""
    out = Verdicts()
    if settings.verify == "off":
        out.kept = list(records)
        return out
    for record, res in zip(records, run_requests(verify_specs(records, settings), engine, stats)):
        if not res.ok:
            reason = f"verify: no verdict ({res.error})"
        elif res.value["needs_clarification"] != record["needs_clarification"]:
            said = "needs clarification" if res.value["needs_clarification"] else "clear"
            reason = f"verify: judge says {said} ({res.value['reason'][:160]})"
        else:
            out.kept.append(record)
            continue
        entry = {"id": record["id"], "reason": reason, "record": record}
        if settings.verify == "flag":
            out.kept.append(record)
            out.flagged.append(entry)
        else:
            out.dropped.append(entry)
    return out


def naturalize(records: Sequence[dict], settings: LLMSettings, engine: EngineConfig,
               stats: RunStats | None = None) -> tuple[list[dict], list[dict]]:
    """Post-edit query and clarification wording; labels are kept. Returns (edited, unchanged-on-failure).
    The edited records get new ids (the query changed) and should be verified again."""
    prompt = load_prompt("naturalize")
    specs = [prompt.spec(settings.model, settings.params(), history=r["history"], query=r["query"],
                         clarification=r["target"]["clarification"]) for r in records]
    edited, kept = [], []
    for record, res in zip(records, run_requests(specs, engine, stats)):
        clear = record["target"]["clarification"] == "CLEAR"
        if not res.ok or (clear and res.value["clarification"].strip() != "CLEAR"):
            kept.append(record)
            continue
        new = dict(record, id="", query=res.value["query"].strip(),
                   target={"clarification": res.value["clarification"].strip()})
        prov = dict(record["provenance"])
        prov["method"] = f"{prov['method']}+naturalize"
        prov["method_version"] = f"{prov['method_version']}+naturalize@{prompt.version}"
        prov["prompt"] = prompt.info()
        new["provenance"] = prov
        edited.append(Record.from_dict(new).to_dict())  # id recomputed from the new text
    return edited, kept


# --- one call for the synthesize stage -------------------------------------------------------------------


def llm_synthesize(contexts: Sequence[TurnContext], settings: LLMSettings, engine: EngineConfig,
                   stats: RunStats | None = None) -> tuple[list[Record], list[Rejection]]:
    records: list[Record] = []
    rejected: list[Rejection] = []
    rates = settings.generators
    if rates.get("ambiguate", 0) > 0:
        got, lost = ambiguate(contexts, settings, engine, stats, rates["ambiguate"])
        records += got
        rejected += lost
    if rates.get("hard_negative", 0) > 0:
        got, lost = hard_negatives(contexts, settings, engine, stats, rates["hard_negative"])
        records += got
        rejected += lost
    return records, rejected


def dry_run(contexts: Sequence[TurnContext], settings: LLMSettings, engine: EngineConfig, n_records: int = 0) -> dict:
    """Requests the LLM generators would send and their estimated input tokens, calling nothing.
    Clarify and verify depend on earlier replies, so they are counted one per expected record."""
    specs: list[RequestSpec] = []
    rates = settings.generators
    if rates.get("ambiguate", 0) > 0:
        jobs = _ambiguate_jobs(contexts, rates["ambiguate"])
        specs += _ambiguate_specs(jobs, settings)
    first = estimate(specs, engine)
    if rates.get("hard_negative", 0) > 0:
        jobs = [c for c in contexts if c.turn > 1 and c.history and _sampled(c, "hard_negative", rates["hard_negative"])]
        prompt = load_prompt("hard_negative")
        specs += [prompt.spec(settings.model, settings.params(), query=c.standalone, history=c.history,
                              form=c.rng("llm_hard_negative").choice(("elliptical", "pronominal"))) for c in jobs]
    est = estimate(specs, engine)
    followups = first.unique + (n_records if settings.verify != "off" else 0)  # clarify per draft, verify per record
    per_followup = est.input_tokens // max(1, est.requests) if est.requests else 400
    return {"requests": est.requests + followups, "cached": est.cached,
            "estimated_input_tokens": est.input_tokens + followups * per_followup,
            "exact_requests": est.requests, "dependent_requests_estimated": followups}
