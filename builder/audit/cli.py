"""`clariedge audit ...`: sample, import, suspects, report, apply."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from builder.cli_options import old_option, renamed

app = typer.Typer(
    help="Label-quality audit: sample records for annotators, import their labels, rank suspects, "
    "write the audit report, and turn human labels into fixes for the next release.",
    no_args_is_help=True,
    add_completion=False,
)

RELEASE = typer.Option(..., "--release", help="Release directory (dist/<name>/<version>/).", exists=True,
                       file_okay=False, dir_okay=True)
ANNOTATIONS_DIR = typer.Option(Path("annotations"), "--annotations-dir",
                               help="Where annotations/<dataset-version>/ lives.")


def _console():
    from rich.console import Console

    return Console(stderr=True)


def _metrics_table(metrics: dict):
    from rich.table import Table

    from builder.audit.report import _num, _pct

    table = Table(title=f"{metrics['dataset']['name']} {metrics['dataset']['version']}: generated vs human")
    for col in ("category", "records", "label acc", "category acc", "acceptable", "kappa (label)"):
        table.add_column(col, justify="left" if col == "category" else "right", no_wrap=True)
    rows = list(metrics["per_category"].items()) + [("all", metrics["overall"])]
    for name, m in rows:
        a = m["agreement_label"]
        kappa = f"{_num(a['kappa'])} {a['method']}" if a["method"] else "–"
        table.add_row(name, str(m["records"]), _pct(m["label_accuracy"]), _pct(m["category_accuracy"]),
                      _pct(m["acceptability_rate"]), kappa)
    return table


@app.command()
def sample(
    release: Path = RELEASE,
    n: int = typer.Option(200, "--n", help="How many records to draw."),
    stratify: str = typer.Option("label,category,domain,setting", help="Comma-separated fields to stratify by "
                                 "(label, or any record field such as category, domain, setting, split)."),
    seed: int = typer.Option(0, help="Random seed; the same seed gives the same sample."),
    allocation: str = typer.Option("equal", help="equal: the same quota per stratum (capped, leftovers spread); "
                                   "proportional: by stratum size."),
    splits: Optional[str] = typer.Option(None, help="Comma-separated splits to sample from (default: all)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output folder (default: "
                                       "<annotations-dir>/<version>/samples/seed-<seed>)."),
    annotations_dir: Path = ANNOTATIONS_DIR,
) -> None:
    """Draw a stratified sample and export it as JSONL, CSV (for spreadsheets) and Label Studio tasks."""
    from builder.audit.release import open_release
    from builder.audit.sample import draw_sample, export_sample

    rel = open_release(release)
    fields = tuple(f.strip() for f in stratify.split(",") if f.strip())
    chosen = draw_sample(rel, n, fields, seed, allocation, tuple(s.strip() for s in splits.split(",")) if splits else None)
    out = out or annotations_dir / rel.version / "samples" / f"seed-{seed}"
    paths = export_sample(rel, chosen, out)
    taken = [s["sampled"] for s in chosen.strata.values()]
    exhausted = sum(1 for s in chosen.strata.values() if s["sampled"] == s["available"])
    typer.echo(f"sampled {len(chosen.ids)} of {len(rel)} records from {len(taken)} strata "
               f"({min(taken)}-{max(taken)} per stratum; {exhausted} strata taken whole)")
    for kind, path in paths.items():
        typer.echo(f"  {kind:<13} {path}")
    typer.echo("  Label Studio labeling config: annotations/label_studio_config.xml")


@app.command("import")
def import_(
    files: list[Path] = typer.Argument(..., help="Label Studio JSON / JSON-MIN exports and filled CSVs.", exists=True,
                                       dir_okay=False),
    release: Path = RELEASE,
    annotator: Optional[str] = typer.Option(None, help="Annotator name for CSV rows whose annotator cell is empty."),
    replace: bool = typer.Option(False, help="Rebuild labels.jsonl from the given files only, instead of merging."),
    labels: Optional[Path] = typer.Option(None, help="Output file (default: <annotations-dir>/<version>/labels.jsonl)."),
    annotations_dir: Path = ANNOTATIONS_DIR,
) -> None:
    """Normalize annotations into labels.jsonl (one line per record x annotator) and print agreement per category."""
    from builder.audit.annotations import import_files, labels_path
    from builder.audit.metrics import compute_metrics
    from builder.audit.release import open_release

    rel = open_release(release)
    target = labels or labels_path(annotations_dir, rel)
    result = import_files(files, rel, target, default_annotator=annotator, replace=replace)
    typer.echo(f"{target}: {result.added} added, {result.unchanged} already present, "
               f"{len(result.annotations)} in total; skipped: {len(result.unannotated)} empty rows/tasks, "
               f"{len(result.cancelled)} cancelled in Label Studio")
    for where in (result.unannotated + result.cancelled)[:5]:
        typer.echo(f"  skipped {where}")
    _console().print(_metrics_table(compute_metrics(rel, result.annotations)))


@app.command()
def suspects(
    release: Path = RELEASE,
    method: str = typer.Option("model", help="model: cross-validated TF-IDF + logistic regression; "
                               "judge: the LLM verify prompt."),
    out: Optional[Path] = typer.Option(None, "--out", help="Ranked JSONL (default: "
                                       "<annotations-dir>/<version>/suspects-<method>.jsonl)."),
    folds: int = typer.Option(5, help="Cross-validation folds (model)."),
    seed: int = typer.Option(0, help="Fold assignment seed (model)."),
    config: Optional[Path] = typer.Option(None, help="Build config YAML whose llm section sets the endpoint (judge)."),
    base_url: Optional[str] = typer.Option(None, help="OpenAI-compatible endpoint (judge); overrides the config."),
    llm_model: Optional[str] = typer.Option(None, "--llm-model", help="Judge model name (judge); overrides the config."),
    limit: Optional[int] = typer.Option(None, help="Judge at most this many records (judge)."),
    cache_dir: Optional[str] = typer.Option(None, help="LLM response cache folder (judge; default: the user cache)."),
    no_cache: bool = typer.Option(False, help="Neither read nor write the LLM cache (judge)."),
    annotations_dir: Path = ANNOTATIONS_DIR,
    old_model: Optional[str] = old_option("--model", "--llm-model"),
) -> None:
    """Rank records whose label looks wrong: record id, score, reason."""
    llm_model = renamed(llm_model, old_model, "--model", "--llm-model")
    from builder.audit.release import open_release
    from builder.errors import InputError
    from builder.io import write_jsonl

    rel = open_release(release)
    failed: list[dict] = []
    if method == "model":
        from builder.audit.suspects import model_suspects

        found = model_suspects(rel, folds=folds, seed=seed)
        checked = len(rel)
    elif method == "judge":
        from builder.audit.judge import judge_settings, judge_suspects

        run = judge_suspects(rel, judge_settings(config, base_url, llm_model, cache_dir, no_cache), limit=limit)
        found, failed, checked = run.suspects, run.failed, run.judged
        typer.echo(f"judge: {run.stats.get('http_requests', 0)} requests, {run.stats.get('cache_hits', 0)} cache hits")
    else:
        raise InputError(f"--method: unknown value '{method}' (expected model or judge)")
    out = out or annotations_dir / rel.version / f"suspects-{method}.jsonl"
    write_jsonl(out, (s.to_dict() for s in found))
    typer.echo(f"{out}: {len(found)} suspects out of {checked} records checked")
    if failed:
        failed_path = out.with_name(out.stem + ".failed.jsonl")
        write_jsonl(failed_path, failed)
        typer.echo(f"{failed_path}: {len(failed)} records got no verdict from the judge (not counted as suspects)")
    for s in found[:10]:
        typer.echo(f"  {s.rank:>3}. {s.record_id} {s.score:.3f} {s.reason}")


def _release_and_labels(release: Path, labels: Optional[Path], annotations_dir: Path):
    """The release and its human labels, refusing labels for records the release does not hold."""
    from builder.audit.annotations import labels_path, load_labels
    from builder.audit.release import open_release
    from builder.errors import InputError

    rel = open_release(release)
    labels = labels or labels_path(annotations_dir, rel)
    if not labels.exists():
        raise InputError(f"{labels}: no human labels yet (run `clariedge audit import` first)")
    annotations = load_labels(labels)
    unknown = sorted({a.record_id for a in annotations} - set(rel.records))
    if unknown:
        raise InputError(f"{labels}: {len(unknown)} record id(s) not in release {rel.name} {rel.version}, e.g. {unknown[0]}")
    return rel, annotations


@app.command()
def report(
    release: Path = RELEASE,
    labels: Optional[Path] = typer.Option(None, help="labels.jsonl (default: <annotations-dir>/<version>/labels.jsonl)."),
    suspects_file: Optional[list[Path]] = typer.Option(None, "--suspects", help="Suspects JSONL to list (repeatable).",
                                                       exists=True, dir_okay=False),
    out_dir: Optional[Path] = typer.Option(None, "--out", help="Folder for audit.md/json and plots (default: <annotations-dir>/<version>)."),
    annotations_dir: Path = ANNOTATIONS_DIR,
    old_out_dir: Optional[Path] = old_option("--out-dir", "--out"),
) -> None:
    """Write audit.md and audit.json with tables, plus PNG plots (confusion matrix, per-category error rates)."""
    out_dir = renamed(out_dir, old_out_dir, "--out-dir", "--out")
    from builder.audit.metrics import compute_metrics
    from builder.audit.report import write_report
    from builder.io import read_jsonl

    rel, annotations = _release_and_labels(release, labels, annotations_dir)
    metrics = compute_metrics(rel, annotations)
    found = None
    if suspects_file:
        found = sorted((row for path in suspects_file for row in read_jsonl(path)), key=lambda s: -s["score"])
    paths = write_report(metrics, out_dir or annotations_dir / rel.version, found)
    _console().print(_metrics_table(metrics))
    for kind, path in paths.items():
        typer.echo(f"  {kind:<9} {path}")


@app.command()
def apply(
    release: Path = RELEASE,
    labels: Optional[Path] = typer.Option(None, help="labels.jsonl (default: <annotations-dir>/<version>/labels.jsonl)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Fixes JSONL (default: <annotations-dir>/<version>/fixes.jsonl)."),
    release_out: Optional[Path] = typer.Option(None, help="Also write the next release here (patch version; "
                                               "minor when --drop-unfixable drops records)."),
    drop_unfixable: bool = typer.Option(False, help="Drop records whose fix lacks something the schema needs, "
                                        "instead of leaving them for curation."),
    annotations_dir: Path = ANNOTATIONS_DIR,
) -> None:
    """Turn human labels into label fixes (provenance.label_source = human) for the next release."""
    from builder.audit.apply import plan_fixes, summary, write_fixes, write_patch_release

    rel, annotations = _release_and_labels(release, labels, annotations_dir)
    fixes = plan_fixes(rel, annotations, drop_unfixable=drop_unfixable)
    out = out or annotations_dir / rel.version / "fixes.jsonl"
    write_fixes(out, fixes)
    counts = summary(fixes)
    typer.echo(f"{out}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    pending = [f for f in fixes if f.action in ("needs_curation", "undecided")]
    for fix in pending[:10]:
        typer.echo(f"  {fix.action}: {fix.record_id}: {fix.reason}")
    if len(pending) > 10:
        typer.echo(f"  ... and {len(pending) - 10} more left unchanged (see {out})")
    if release_out:
        path, version = write_patch_release(rel, fixes, release_out, out)
        typer.echo(f"wrote release {rel.name} {version} to {path} (from {rel.version})")
