"""One interface for everything that labels records: trained models, prompted LLMs, prediction files.

A predictor takes ClariEdge record dicts and returns one `Prediction` per record, in order.
Unparseable output is not an exception: it becomes `needs_clarification=None` with an `error`,
and counts as wrong in the metrics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.predict import Prediction, Predictor, parse_model_output, prediction_from_output

__all__ = ["ConstantPredictor", "FilePredictor", "Prediction", "Predictor", "load_predictor",
           "parse_model_output", "prediction_from_output"]


class FilePredictor:
    """Predictions read from JSONL: one object per line with `id` and `output` (the raw model text).

    `needs_clarification` (bool) and `clarification` may be given instead of `output`.
    Records without a line get an error prediction ("missing"), so the report counts them.
    """

    def __init__(self, path: str | Path):
        from builder.io import iter_jsonl

        self.path = Path(path)
        self.name = f"file:{self.path.name}"
        self.by_id: dict[str, Prediction] = {}
        for lineno, row in iter_jsonl(self.path):
            if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                raise InputError(f"{self.path}:{lineno}: each line needs a string field 'id'")
            if row["id"] in self.by_id:
                raise InputError(f"{self.path}:{lineno}: duplicate id {row['id']!r}")
            self.by_id[row["id"]] = _row_prediction(self.path, lineno, row)

    def predict(self, records: list[dict]) -> list[Prediction]:
        out = []
        for record in records:
            pred = self.by_id.get(record["id"])
            if pred is None:
                pred = Prediction(id=record["id"], needs_clarification=None, clarification=None, raw="",
                                  error=f"missing: no line for this id in {self.path.name}")
            out.append(pred)
        return out

    def unused_ids(self, records: list[dict]) -> list[str]:
        """Ids in the file that match no record (reported, not silently dropped)."""
        wanted = {r["id"] for r in records}
        return sorted(i for i in self.by_id if i not in wanted)


class ConstantPredictor:
    """Always the same label: the majority-class (`clear`) or all-positive (`clarify`) reference point."""

    def __init__(self, label: str):
        if label not in ("clear", "clarify"):
            raise InputError(f"constant predictor {label!r}: expected clear or clarify")
        self.label = label
        self.name = f"constant:{label}"

    def predict(self, records: list[dict]) -> list[Prediction]:
        needs = self.label == "clarify"
        # The question is a fixed, generic one: quality scores for this baseline measure nothing but the reference.
        question = "Could you clarify what you mean?" if needs else None
        raw = '{"clarification":"Could you clarify what you mean?"}' if needs else '{"clarification":"CLEAR"}'
        return [Prediction(id=r["id"], needs_clarification=needs, clarification=question, raw=raw) for r in records]


def _row_prediction(path: Path, lineno: int, row: dict) -> Prediction:
    if "output" in row:
        if not isinstance(row["output"], str):
            raise InputError(f"{path}:{lineno}: record {row['id']!r}: field 'output' must be a string")
        return prediction_from_output(row["id"], row["output"])
    if isinstance(row.get("needs_clarification"), bool):
        question = row.get("clarification") if row["needs_clarification"] else None
        return Prediction(id=row["id"], needs_clarification=row["needs_clarification"], clarification=question,
                          raw=json.dumps(row, ensure_ascii=False))
    raise InputError(f"{path}:{lineno}: record {row['id']!r}: needs field 'output' (string) "
                     "or 'needs_clarification' (bool)")


def load_predictor(spec: str, **options: Any) -> Predictor:
    """Build a predictor from a spec string.

    - `file:PATH` — predictions JSONL
    - `constant:clear` / `constant:clarify` — the same label for every record
    - `baseline:DIR` — scikit-learn baseline from `builder.train.baseline`
    - `lora:BASE::ADAPTER` — LoRA adapter from `builder.train.lora`
    - `openai:MODEL` — prompted model; options: base_url, shots, train_records, api_key
    - `DIR` — a model directory: a baseline if it holds a baseline, else a LoRA adapter (options: base)
    """
    kind, _, rest = spec.partition(":")
    if kind == "file":
        return FilePredictor(rest)
    if kind == "constant":
        return ConstantPredictor(rest)
    if kind == "openai":
        from builder.evaluate.prompted import OpenAIPredictor

        return OpenAIPredictor(model=rest, **options)
    if kind == "baseline":
        from builder.train.baseline import BaselinePredictor  # lazy: sklearn/embeddings

        return BaselinePredictor.load(rest)
    if kind == "lora":
        from builder.train.lora import LoraPredictor  # lazy: torch

        base, _, adapter = rest.partition("::")
        return LoraPredictor(base, adapter)
    path = Path(spec)
    if path.is_dir():
        return _model_dir_predictor(path, **options)
    if path.is_file():
        return FilePredictor(path)
    raise InputError(f"{spec}: not a predictor spec (file:, baseline:, lora:, openai:) nor an existing path")


def _model_dir_predictor(path: Path, base: str | None = None, **_: Any) -> Predictor:
    if (path / "adapter_config.json").exists():
        if not base:
            raise InputError(f"{path}: is a LoRA adapter; give the base model too (--base)")
        from builder.train.lora import LoraPredictor

        return LoraPredictor(base, str(path))
    from builder.train.baseline import BaselinePredictor

    return BaselinePredictor.load(path)
