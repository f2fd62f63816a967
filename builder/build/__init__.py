"""The staged build: conversations -> candidates -> validated -> deduplicated -> split -> release.

`build` runs every step of builder.build.steps in order and returns a BuildReport; the CLI only renders it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from builder.build.llm import engine_config, llm_run, llm_settings, plan_llm
from builder.build.report import BuildReport
from builder.build.steps import (Context, Progress, no_progress, run_dedup, run_ingest, run_release, run_split,
                                 run_synthesize, run_validate)
from builder.build.workdir import Work, WorkDir, default_work_dir
from builder.config import BuildConfig

STEPS = (run_ingest, run_synthesize, run_validate, run_dedup, run_split)  # then run_release


def build(config: BuildConfig, out: Path, work_dir: Path | None = None, progress: Progress = no_progress,
          cache_dir: str | None = None, no_cache: bool = False,
          llm_progress: Callable[[Any], None] | None = None) -> BuildReport:
    """Run every stage; returns what the build made (see BuildReport). `llm_progress` gets a
    builder.llm.Tally as each LLM batch starts and after each of its requests ends."""
    ctx = Context(config, WorkDir(work_dir or default_work_dir(config, out)), progress, cache_dir, no_cache,
                  llm_progress)
    for step in STEPS:
        step(ctx)
    release, manifest = run_release(ctx, out)
    return BuildReport.of(release, manifest, llm_run(config, ctx.work))


__all__ = ["build", "BuildReport", "Context", "Progress", "STEPS", "Work", "WorkDir", "default_work_dir",
           "engine_config", "llm_settings", "plan_llm", "run_ingest", "run_synthesize", "run_validate", "run_dedup",
           "run_split", "run_release"]
