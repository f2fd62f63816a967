"""Judge-based suspects: the build's independent verify prompt (prompts/verify.md), run over a release
through the LLM engine; records where the judge disagrees with the label, with the judge's reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder.audit.release import AuditRelease
from builder.audit.suspects import Suspect
from builder.errors import InputError

# A disagreement on needs_clarification matters more than one on the category alone.
LABEL_DISAGREEMENT = 1.0
CATEGORY_DISAGREEMENT = 0.5


@dataclass
class JudgeRun:
    suspects: list[Suspect]
    failed: list[dict[str, str]] = field(default_factory=list)  # {"record_id", "error"}: no verdict
    judged: int = 0
    stats: dict[str, Any] = field(default_factory=dict)


def judge_settings(config: Path | None, base_url: str | None, model: str | None,
                   cache_dir: str | None = None, no_cache: bool = False):
    """(LLMSettings, EngineConfig) from a build config's `llm:` section, with CLI overrides."""
    from builder.config import apply_overrides, load_config
    from builder.build.llm import engine_config, llm_settings

    build = load_config(config)
    if build.llm is None and config is not None and not base_url:
        raise InputError(f"{config}: no 'llm' section; add one or pass --base-url and --llm-model")
    build = apply_overrides(build, base_url=base_url, llm_model=model, default_llm=True)
    return llm_settings(build), engine_config(build, cache_dir, no_cache)


def judge_suspects(release: AuditRelease, settings, limit: int | None = None) -> JudgeRun:
    from builder.llm import RunStats, run_requests
    from builder.synthesize.llm.verify import Verify

    llm, engine = settings
    ids = release.ordered[:limit] if limit else release.ordered
    records = [release.records[i] for i in ids]
    stats = RunStats()
    results = run_requests([r.spec for r in Verify(llm).plan(records)], engine, stats)
    run = JudgeRun([], judged=len(records), stats=stats.as_dict())
    for record, result in zip(records, results):
        if not result.ok:
            run.failed.append({"record_id": record["id"], "error": str(result.error)})
            continue
        verdict = result.value
        label_differs = verdict["needs_clarification"] != record["needs_clarification"]
        if not label_differs and verdict["category"] == record["category"]:
            continue
        said = "needs clarification" if verdict["needs_clarification"] else "clear"
        run.suspects.append(
            Suspect(
                record_id=record["id"],
                score=LABEL_DISAGREEMENT if label_differs else CATEGORY_DISAGREEMENT,
                reason=f"labelled {record['category']}; judge says {said}, {verdict['category']}: {verdict['reason']}",
                method="judge",
                split=record["split"],
                label=record["category"],
                predicted=verdict["category"],
                given_p=0.0,
                predicted_p=1.0,
                confident=label_differs,
            )
        )
    run.suspects.sort(key=lambda s: (-s.score, s.record_id))
    for rank, s in enumerate(run.suspects, start=1):
        s.rank = rank
    return run
