"""Evaluate one predictor on a set of records: classification metrics, breakdowns, quality, details."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.evaluate import metrics, quality
from builder.predict import Prediction, Predictor
from builder.record import SPLITS, method_of

MAX_ERROR_EXAMPLES = 20


def load_release_split(release_dir: str | Path, split: str) -> tuple[list[dict], dict[str, Any]]:
    """Records of one split plus what identifies the release (name, version, manifest path)."""
    release_dir = Path(release_dir)
    if split not in SPLITS:
        raise InputError(f"--split {split!r}: expected one of {', '.join(SPLITS)}")
    from builder.release import read_parquet_records
    from builder.release.layout import open_release

    release = open_release(release_dir, splits=(split,))
    info: dict[str, Any] = {"kind": "release", "path": str(release_dir), "split": split}
    if release.manifest is not None:
        data = release.manifest
        info.update(name=data.get("name"), version=data.get("version"), seed=data.get("seed"))
    else:
        info.update(name=None, version=None, note="no manifest.json: release version unknown")
    return read_parquet_records(release.split_path(split)), info


def check_predictions(records: list[dict], predictions: list[Prediction], predictor: Predictor) -> None:
    if len(predictions) != len(records):
        raise InputError(f"predictor {predictor.name} returned {len(predictions)} predictions for {len(records)} records")
    for record, pred in zip(records, predictions):
        if pred.id != record["id"]:
            raise InputError(f"predictor {predictor.name}: prediction for {pred.id!r} where {record['id']!r} was expected "
                             "(predictions must come back in record order)")


def evaluate(
    records: list[dict],
    predictor: Predictor,
    *,
    data: dict[str, Any],
    samples: int = 1000,
    seed: int = 0,
    embed: bool = True,
    judge_endpoint=None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(result for the JSON and report, per-record details)."""
    if not records:
        raise InputError(f"{data.get('path')}: no records to evaluate")
    predictions = predictor.predict(records)
    check_predictions(records, predictions, predictor)
    return score(records, predictions, predictor=predictor, data=data, samples=samples, seed=seed,
                 embed=embed, judge_endpoint=judge_endpoint)


def score(
    records: list[dict],
    predictions: list[Prediction],
    *,
    predictor: Predictor,
    data: dict[str, Any],
    samples: int = 1000,
    seed: int = 0,
    embed: bool = True,
    judge_endpoint=None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    gold = [bool(r["needs_clarification"]) for r in records]
    pred = [p.needs_clarification for p in predictions]
    result: dict[str, Any] = metrics.classification(gold, pred, samples=samples, seed=seed)
    for name, key in (("setting", "setting"), ("category", "category"), ("domain", "domain")):
        result[f"by_{name}"] = metrics.breakdown(records, pred, lambda r, k=key: r[k], samples=samples, seed=seed)
    # Which generator's records a model gets wrong.
    result["by_method"] = metrics.breakdown(records, pred, method_of, samples=samples, seed=seed)
    result["by_setting_category"] = metrics.breakdown(
        records, pred, lambda r: f"{r['setting']}/{r['category']}", samples=samples, seed=seed
    )
    errors = [{"id": p.id, "error": p.error} for p in predictions if p.error]
    result["errors"] = {"count": len(errors), "invalid": result["confusion"]["invalid"],
                        "examples": errors[:MAX_ERROR_EXAMPLES]}
    unused = getattr(predictor, "unused_ids", None)
    if unused is not None:
        extra = unused(records)
        result["errors"]["unmatched_prediction_ids"] = {"count": len(extra), "examples": extra[:MAX_ERROR_EXAMPLES]}

    rows, notes = quality.score_positives(records, predictions, embed=embed, judge_endpoint=judge_endpoint)
    gold_pos = {s: sum(1 for r in records if r["needs_clarification"] and r["setting"] == s) for s in result["by_setting"]}
    result["quality"] = quality.summarize(rows, sum(gold))
    result["quality"]["by_setting"] = {
        s: quality.summarize([row for row in rows if row["setting"] == s], gold_pos[s]) for s in result["by_setting"]
    }
    result["quality"]["notes"] = notes
    describe = getattr(predictor, "describe", None)
    result["predictor"] = {"name": predictor.name, **(describe() if callable(describe) else {})}
    result["data"] = data
    result["bootstrap"] = {"samples": samples, "seed": seed, "level": 0.95, "method": "percentile, resampling records"}
    from builder import __version__ as builder_version

    result["builder_version"] = builder_version
    by_id = {row["id"]: row for row in rows}
    details = [
        {
            "id": r["id"], "setting": r["setting"], "category": r["category"], "domain": r["domain"],
            "gold": r["needs_clarification"], "predicted": p.needs_clarification,
            "reference": r["target"]["clarification"], "clarification": p.clarification, "raw": p.raw,
            "error": p.error, **{k: v for k, v in by_id.get(r["id"], {}).items() if k not in ("id", "setting")},
        }
        for r, p in zip(records, predictions)
    ]
    return result, details
