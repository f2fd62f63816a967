"""The LLM generators of a config's `llm:` section: settings, the synthesize step's LLM part, the dry run,
and the figures that go into the manifest and the build summary."""

from __future__ import annotations

from typing import Any, Callable

from builder.build.inputs import input_path, read_input, source_name
from builder.build.workdir import WorkDir
from builder.config import BuildConfig
from builder.conversation import Conversation
from builder.errors import InputError
from builder.io import read_json, write_json, write_jsonl


def engine_config(config: BuildConfig, cache_dir: str | None = None, no_cache: bool = False):
    from builder.llm import EngineConfig

    return EngineConfig(**config.llm.endpoint.model_dump(), cache_dir=cache_dir, no_cache=no_cache)


def llm_settings(config: BuildConfig):
    from builder.synthesize.llm.base import LLMSettings

    s = config.llm
    return LLMSettings(model=s.model, temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed,
                       generators=dict(s.generators), verify=s.verify, naturalize=s.naturalize)


def llm_methods(settings) -> dict[str, dict[str, Any]]:
    """Method versions and prompts of the LLM steps this config runs (from the registry), for the manifest and card."""
    from builder.synthesize.llm.run import methods

    return methods(settings)


def llm_contexts(config: BuildConfig, conversations: list[Conversation], source: str,
                 blocks: dict[str, str] | None = None):
    """One turn context per user turn, without the rule generators' corpus. `blocks` are the ones synthesize
    already assigned (the same seeded function of the same inputs); the dry run has none and assigns them."""
    from builder.synthesize import assign_blocks, turn_contexts

    if blocks is None:
        blocks = assign_blocks(conversations, config.synthesize.block_size, config.seed)
    return turn_contexts(conversations, blocks, config.seed, source)


def llm_synthesize(config: BuildConfig, work: WorkDir, conversations: list[Conversation], result, source: str,
                   candidates: list[dict], rejections: list[dict], cache_dir: str | None, no_cache: bool,
                   llm_progress: Callable[[Any], None] | None = None) -> tuple[list[dict], list[dict]]:
    """Append the LLM generators' records; optionally naturalize rule-based ones; verify what an LLM wrote."""
    from builder.llm import RunStats
    from builder.synthesize.llm.run import llm_synthesize as generate, naturalize, verify

    engine, settings = engine_config(config, cache_dir, no_cache), llm_settings(config)
    stats = RunStats(listener=llm_progress)
    records, lost = generate(llm_contexts(config, conversations, source, result.blocks), settings, engine, stats)
    written = [r.to_dict() for r in records]
    if settings.naturalize:
        edited, candidates = naturalize(candidates, settings, engine, stats)
        written += edited
    verdicts = verify(written, settings, engine, stats)
    rejections = rejections + [r.to_dict() for r in lost] + [
        {"method": d["record"]["provenance"]["method"], "reason": d["reason"],
         "conversation_id": d["record"]["provenance"]["conversation_id"], "turn": d["record"]["provenance"]["turn"],
         "query": d["record"]["query"]} for d in verdicts.dropped]
    run = stats.as_dict()
    # How every unique request ended (answered, or failed with its reason), also when the build stops below.
    write_jsonl(work.llm_requests, sorted(stats.outcomes, key=lambda o: (o["prompt"], o["key"])))
    check_llm_failures(config, work, run)
    write_jsonl(work.llm_flagged, ({"id": d["id"], "reason": d["reason"]} for d in verdicts.flagged))
    write_json(work.llm_stats, {
        # Same on every run of the same config, cached or not: these go into the manifest.
        "model": settings.model,
        "requests": run["unique"],
        "failed": run["failed"],
        "structured_output": dict(sorted(run["modes"].items())),  # how the replies were asked for, per mode
        "records": len(written),
        "rejected": len(lost),
        "verify": {"mode": settings.verify, "dropped": len(verdicts.dropped), "flagged": len(verdicts.flagged)},
        "methods": llm_methods(settings),
        # This run only (cache hits, requests on the wire, tokens paid, time): work dir and build summary only.
        "run": run,
    })
    return candidates + verdicts.kept, rejections


def check_llm_failures(config: BuildConfig, work: WorkDir, run: dict[str, Any]) -> None:
    """Stop the build, before anything is released, when too many LLM requests got no usable reply."""
    total, failed, limit = run["unique"], run["failed"], config.llm.max_failure_rate
    if not total or failed / total <= limit:
        return
    report = work.llm_failures
    reasons = sorted(run["failure_reasons"].items(), key=lambda kv: (-kv[1], kv[0]))
    write_json(report, {"requests": total, "failed": failed, "max_failure_rate": limit,
                        "first_error": run["first_error"], "reasons": dict(reasons[:50]), "run": run})
    raise InputError(
        f"{config.llm.endpoint.base_url}: {failed} of {total} LLM requests failed ({failed / total:.1%}, more than "
        f"the {limit:.1%} allowed by llm.max_failure_rate / --max-llm-failure-rate). First error: "
        f"{run['first_error']}. Nothing was released; every reason is in {report}")


def llm_dry_run(config: BuildConfig, conversations: list[Conversation], cache_dir: str | None = None,
                no_cache: bool = False) -> dict[str, Any]:
    """Requests and estimated input tokens the LLM generators would need, calling nothing."""
    from builder.synthesize.llm.run import dry_run

    contexts = llm_contexts(config, conversations, source_name(config, input_path(config)))
    engine, settings = engine_config(config, cache_dir, no_cache), llm_settings(config)
    plan = dry_run(contexts, settings, engine)
    if settings.verify != "off":  # one judge call per expected LLM record
        plan = dry_run(contexts, settings, engine, n_records=plan["exact_requests"])
    return plan


def plan_llm(config: BuildConfig, cache_dir: str | None = None, no_cache: bool = False) -> dict[str, Any]:
    """The dry run: read the input, then count the LLM requests it needs (see llm_dry_run); writes nothing."""
    return llm_dry_run(config, read_input(config), cache_dir, no_cache)


def llm_manifest(config: BuildConfig, work: WorkDir) -> dict[str, Any] | None:
    """The LLM figures that are the same on every run of the config: the manifest's `llm`."""
    if config.llm is None:
        return None
    stats = read_json(work.need(work.llm_stats, "synthesize"))
    return {k: v for k, v in stats.items() if k != "run"}


def llm_run(config: BuildConfig, work: WorkDir) -> dict[str, Any] | None:
    """This run's LLM figures (cache hits, attempts, tokens; never in the manifest), when config.llm ran."""
    if config.llm is None:
        return None
    return read_json(work.need(work.llm_stats, "synthesize"))["run"]
