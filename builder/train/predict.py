"""Predictions of a trained model on a release split, written as a predictions file for `clariedge evaluate`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.io import write_jsonl
from builder.record import SPLITS


def predict_release(release: Path, split: str, out: Path, *, adapter: Path | None = None, base: str | None = None,
                    model: Path | None = None, batch_size: int = 8, max_new_tokens: int = 64,
                    limit: int | None = None, device: str | None = None, console=None) -> dict[str, Any]:
    from builder.train.baseline import load_splits

    if split not in SPLITS:
        raise InputError(f"--split {split!r}: expected one of {', '.join(SPLITS)}")
    records = load_splits(release)[split][:limit]
    if adapter is not None:
        from builder.train.lora import LoraPredictor

        predictor = LoraPredictor(base, adapter, batch_size=batch_size, max_new_tokens=max_new_tokens, device=device)
    else:
        from builder.train.baseline import BaselinePredictor

        predictor = BaselinePredictor.load(model)
    predictions = []
    # Chunks so the progress bar moves; the predictor batches inside each chunk.
    chunk = max(batch_size * 4, 32)
    if console is not None:
        from rich.progress import track

        starts = track(range(0, len(records), chunk), description="predicting", console=console, transient=True)
    else:
        starts = range(0, len(records), chunk)
    for start in starts:
        predictions.extend(predictor.predict(records[start:start + chunk]))
    write_jsonl(out, ({"id": p.id, "output": p.raw, "needs_clarification": p.needs_clarification,
                       "clarification": p.clarification, "error": p.error} for p in predictions))
    return summarize(records, predictions)


def summarize(records: list[dict], predictions: list) -> dict[str, Any]:
    """Counts for the console: malformed outputs count as wrong, and the first few are shown."""
    malformed = [p for p in predictions if p.needs_clarification is None]
    correct = sum(p.needs_clarification == r["needs_clarification"] for r, p in zip(records, predictions))
    return {
        "n": len(records),
        "malformed": len(malformed),
        "accuracy": correct / len(records) if records else 0.0,
        "malformed_examples": [f"{p.id}: {p.error}" for p in malformed[:5]],
    }
