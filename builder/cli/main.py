"""`clariedge` command line. Heavy imports stay inside commands so `--help` is instant."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from builder.cli_options import error_line, old_option, renamed
from builder.errors import InputError

app = typer.Typer(
    name="clariedge",
    help="Build, audit, publish and evaluate ClariEdge, a grounded query-clarification set for RAG.",
    no_args_is_help=False,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from builder import __version__

        typer.echo(f"clariedge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Build, audit, publish and evaluate ClariEdge, a grounded query-clarification set for RAG."""


ConfigOpt = typer.Option(None, "--config", "-c", help="Build config YAML (see configs/). Default: the embedded demo corpus.", exists=False)
InputOpt = typer.Option(None, "--input", "-i", help="One conversations file (generic JSONL or MTRAG conversations.json); overrides the config's input.")
FormatOpt = typer.Option("auto", "--format", help="Input format: auto, generic or mtrag.")
OutOpt = typer.Option(Path("dist"), "--out", "-o", help="Release root: the release goes to OUT/<name>/<version>/.")
WorkOpt = typer.Option(None, "--work", help="Work directory for stage files. Default: OUT/.work/<name>/<version>.")


def _config(config: Optional[Path], input: Optional[Path] = None, fmt: str = "auto", seed: Optional[int] = None):
    from builder.config import apply_overrides, load_config

    return apply_overrides(load_config(config), input=input, fmt=fmt, seed=seed, name_from_input=config is None)


def _work_dir(cfg, out: Path, work: Optional[Path]) -> Path:
    from builder.build import default_work_dir

    return work.resolve() if work else default_work_dir(cfg, out)


def _work(cfg, out: Path, work: Optional[Path]):
    from builder.build import WorkDir

    return WorkDir(_work_dir(cfg, out, work))


def _ctx(cfg, out: Path, work: Optional[Path], **options):
    from builder.build import Context

    return Context(cfg, _work(cfg, out, work), **options)


class _Bars:
    """The build's one live display: a bar per stage, and per LLM batch a bar with its answered and failed
    counts and ETA."""

    def __init__(self, console):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.bars = Progress(TextColumn("{task.description:>17}"), BarColumn(bar_width=10), MofNCompleteColumn(),
                             TextColumn("{task.fields[counts]}"), TextColumn("eta"), TimeRemainingColumn(),
                             console=console)
        self.llm_tasks: dict[int, int] = {}

    def __enter__(self) -> "_Bars":
        self.bars.start()
        return self

    def __exit__(self, *exc) -> None:
        self.bars.stop()

    def stage(self, items, label):
        items = list(items)
        task = self.bars.add_task(label, total=len(items), counts="")
        for item in items:
            yield item
            self.bars.advance(task)
        self.bars.remove_task(task)

    def llm(self, tally) -> None:
        counts = f"[green]answered {tally.answered}[/] · [red]failed {tally.failed}[/]"
        if tally.cached:
            counts += f" · cached {tally.cached}"
        task = self.llm_tasks.get(tally.batch)
        if task is None:
            task = self.llm_tasks[tally.batch] = self.bars.add_task(f"llm {tally.label}", total=tally.total,
                                                                    counts=counts)
        self.bars.update(task, completed=tally.done, counts=counts)


def _console():
    from rich.console import Console

    return Console(stderr=True)


@app.command()
def build(
    config: Optional[Path] = ConfigOpt,
    input: Optional[Path] = InputOpt,
    format: str = FormatOpt,
    out: Path = OutOpt,
    work: Optional[Path] = WorkOpt,
    seed: Optional[int] = typer.Option(None, help="Override the config's seed."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint for the config's llm: section, e.g. http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:11434/v1 (Ollama)."),
    llm_model: Optional[str] = typer.Option(None, "--llm-model", help="Model name for the LLM generators (overrides llm.model)."),
    cache: Optional[Path] = typer.Option(None, "--cache-dir", help="LLM response cache folder. Default: $CLARIEDGE_CACHE_DIR or the user cache folder."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the LLM cache (every call is paid again)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the LLM requests and estimated input tokens the build needs; call nothing, build nothing."),
    max_llm_failure_rate: Optional[float] = typer.Option(None, "--max-llm-failure-rate", min=0.0, max=1.0, help="Share of LLM requests that may fail (no usable reply) before the build stops and releases nothing. Default: llm.max_failure_rate (0.05)."),
    old_model: Optional[str] = old_option("--model", "--llm-model"),
    old_cache: Optional[Path] = old_option("--cache", "--cache-dir"),
) -> None:
    """Run every stage: ingest, synthesize, validate, dedup, split, release.

    With no arguments it builds the embedded demo corpus into ./dist. A config with an `llm:` section
    (configs/demo-llm.yaml, configs/mtrag-llm.yaml) also runs the LLM generators against its endpoint;
    the key is read from the variable named in llm.endpoint.api_key_env and never written anywhere.
    """
    from builder.cli.summary import render_build
    from builder.config import apply_overrides
    from builder.build import build as run_build

    llm_model = renamed(llm_model, old_model, "--model", "--llm-model")
    cache = renamed(cache, old_cache, "--cache", "--cache-dir")
    cfg = _config(config, input, format, seed)
    if cfg.llm is None and (base_url or llm_model or dry_run or max_llm_failure_rate is not None):
        raise InputError(f"{config or 'the demo config'}: --base-url, --llm-model, --dry-run and --max-llm-failure-rate "
                         "need a config with an `llm:` section (e.g. configs/demo-llm.yaml)")
    cfg = apply_overrides(cfg, base_url=base_url, llm_model=llm_model, max_llm_failure_rate=max_llm_failure_rate)
    work_dir = _work_dir(cfg, out, work)
    cache_dir = str(cache.resolve()) if cache else None
    console = _console()
    if dry_run:
        from builder.build import plan_llm

        plan = plan_llm(cfg, cache_dir, no_cache)
        console.print(f"dry run, {cfg.llm.model} at {cfg.llm.endpoint.base_url}: nothing was called")
        typer.echo(f"requests {plan['requests']} ({plan['exact_requests']} known, "
                   f"{plan['dependent_requests_estimated']} estimated follow-ups; {plan['cached']} already cached)")
        typer.echo(f"estimated input tokens {plan['estimated_input_tokens']}")
        return
    with _Bars(console) as bars:
        report = run_build(cfg, out, work_dir, bars.stage, cache_dir, no_cache, bars.llm)
    render_build(report, console)
    typer.echo(str(report.release))


@app.command()
def ingest(config: Optional[Path] = ConfigOpt, input: Optional[Path] = InputOpt, format: str = FormatOpt,
           out: Path = OutOpt, work: Optional[Path] = WorkOpt) -> None:
    """Read conversations and write WORK/conversations.jsonl."""
    from builder.build import run_ingest

    ctx = _ctx(_config(config, input, format), out, work)
    typer.echo(f"{run_ingest(ctx)['conversations']} conversations -> {ctx.work.conversations}")


@app.command()
def synthesize(config: Optional[Path] = ConfigOpt, input: Optional[Path] = InputOpt, out: Path = OutOpt,
               work: Optional[Path] = WorkOpt, seed: Optional[int] = typer.Option(None)) -> None:
    """Run the generators: WORK/conversations.jsonl -> candidates.jsonl and rejected.jsonl."""
    from builder.build import run_synthesize

    cfg = _config(config, input, seed=seed)
    with _Bars(_console()) as bars:
        ctx = _ctx(cfg, out, work, progress=bars.stage, llm_progress=bars.llm)
        counts = run_synthesize(ctx)
    typer.echo(f"{counts} -> {ctx.work.candidates}")


@app.command()
def validate(config: Optional[Path] = ConfigOpt, input: Optional[Path] = InputOpt, out: Path = OutOpt,
             work: Optional[Path] = WorkOpt) -> None:
    """Check candidates against the record schema: validated.jsonl and quarantine.jsonl."""
    from builder.build import run_validate

    ctx = _ctx(_config(config, input), out, work)
    typer.echo(f"{run_validate(ctx)} -> {ctx.work.validated}")


@app.command()
def dedup(config: Optional[Path] = ConfigOpt, input: Optional[Path] = InputOpt, out: Path = OutOpt,
          work: Optional[Path] = WorkOpt) -> None:
    """Drop exact and near duplicates: deduplicated.jsonl and duplicates.jsonl (with the kept id)."""
    from builder.build import run_dedup

    ctx = _ctx(_config(config, input), out, work)
    typer.echo(f"{run_dedup(ctx)} -> {ctx.work.deduplicated}")


@app.command("split")
def split_command(config: Optional[Path] = ConfigOpt, input: Optional[Path] = InputOpt, out: Path = OutOpt,
                  work: Optional[Path] = WorkOpt) -> None:
    """Grouped, stratified train/validation/test split: split.jsonl and split_report.json."""
    from builder.build import run_split

    ctx = _ctx(_config(config, input), out, work)
    typer.echo(f"{run_split(ctx)} -> {ctx.work.split}")


@app.command()
def release(config: Optional[Path] = ConfigOpt, input: Optional[Path] = InputOpt, out: Path = OutOpt,
            work: Optional[Path] = WorkOpt,
            bump: Optional[str] = typer.Option(None, "--bump", help="major (schema changed) | minor (records added/removed) | patch (label/text fixes): next version after the newest in OUT/<name>/, checked against the changes.")) -> None:
    """Write OUT/<name>/<version>/: parquet splits, dataset card, manifest, accounting."""
    from builder.build import run_release

    release_dir, _ = run_release(_ctx(_config(config, input), out, work), out, bump)
    typer.echo(str(release_dir))


def main() -> None:
    """Entry point that turns InputError into a one-line message and exit code 2."""
    from builder.llm.cli import old_json_flag

    try:
        app(args=old_json_flag(sys.argv[1:]))
    except InputError as err:
        error_line(str(err))
        sys.exit(2)


# --- subcommands from other stages (one line each) ---
from builder.evaluate.cli import evaluate_command  # noqa: E402

app.command("evaluate")(evaluate_command)
from builder.audit.cli import app as audit_app  # noqa: E402

app.add_typer(audit_app, name="audit")
from builder.publish.cli import diff_command, publish_command  # noqa: E402

app.command("publish")(publish_command)
app.command("diff")(diff_command)
from builder.llm.cli import app as llm_app  # noqa: E402

app.add_typer(llm_app, name="llm")
from builder.train.cli import app as train_app, predict_command  # noqa: E402

app.add_typer(train_app, name="train")
app.command("predict")(predict_command)
