"""Markdown report: one table of models × metrics × setting, then breakdowns of the first run."""

from __future__ import annotations

import json
from typing import Any, Sequence


def _f(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ci(metric: float | None, ci: list[float] | None) -> str:
    if metric is None:
        return "–"
    return _f(metric) if not ci else f"{metric:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _data_label(data: dict[str, Any]) -> str:
    if data.get("kind") == "release":
        return f"release {data.get('name') or '?'} {data.get('version') or '?'} / {data.get('split')}"
    return f"benchmark {data.get('benchmark')} ({data.get('path')})"


def _judge(q: dict[str, Any] | None, key: str) -> str:
    judge = (q or {}).get("judge")
    return "–" if not judge else _f(judge.get(key))


def _row(model: str, setting: str, m: dict[str, Any], q: dict[str, Any] | None, hard_neg: dict | None) -> str:
    ci = m.get("ci95") or {}
    cells = [
        model, setting, str(m["n"]), _ci(m["accuracy"], ci.get("accuracy")), _f(m["precision"]), _f(m["recall"]),
        _ci(m["f1"], ci.get("f1")), _f(hard_neg["accuracy"]) if hard_neg else "–", str(m["confusion"]["invalid"]),
        _f((q or {}).get("rouge_l")), _f((q or {}).get("embedding_cosine")),
        _judge(q, "is_clarification"), _judge(q, "covers_two_interpretations"),
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| model | setting | n | accuracy [95% CI] | precision | recall | F1 [95% CI] | hard-neg acc | invalid "
    "| ROUGE-L | cosine | judge: is clarification | judge: ≥2 interpretations |\n"
    "|---|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"
)


def _hard_neg(run: dict[str, Any], setting: str | None) -> dict | None:
    if setting is None:
        return run["by_category"].get("hard_negative")
    return run.get("by_setting_category", {}).get(f"{setting}/hard_negative")


def main_table(runs: Sequence[dict[str, Any]]) -> str:
    lines = [HEADER]
    for run in runs:
        model = run["predictor"]["name"]
        lines.append(_row(model, "all", run, run.get("quality"), _hard_neg(run, None)))
        for setting, m in run["by_setting"].items():
            q = (run.get("quality") or {}).get("by_setting", {}).get(setting)
            lines.append(_row(model, setting, m, q, _hard_neg(run, setting)))
    return "\n".join(lines)


def breakdown_table(title: str, groups: dict[str, dict[str, Any]]) -> str:
    lines = [f"### {title}", "", "| group | n | positives | accuracy [95% CI] | precision | recall | F1 | invalid |",
             "|---|---:|---:|---|---:|---:|---:|---:|"]
    for name, m in groups.items():
        lines.append(f"| {name} | {m['n']} | {m['gold_positive']} | {_ci(m['accuracy'], (m.get('ci95') or {}).get('accuracy'))} "
                     f"| {_f(m['precision'])} | {_f(m['recall'])} | {_f(m['f1'])} | {m['confusion']['invalid']} |")
    return "\n".join(lines)


def render(runs: Sequence[dict[str, Any]]) -> str:
    """Markdown for one or more runs; breakdowns, confusion and errors come from the first run."""
    first = runs[0]
    c = first["confusion"]
    out = [
        "# ClariEdge evaluation",
        "",
        f"Data: {_data_label(first['data'])}. Positive class: needs clarification. "
        f"95% CIs: {first['bootstrap']['method']}, {first['bootstrap']['samples']} resamples, seed {first['bootstrap']['seed']}. "
        "Unparseable or missing predictions count as wrong (column `invalid`). "
        "Quality scores (ROUGE-L, embedding cosine, judge) are over true positives.",
        "",
    ]
    others = {_data_label(r["data"]) for r in runs[1:]} - {_data_label(first["data"])}
    if others:
        out += [f"Note: other runs in the table were scored on: {'; '.join(sorted(others))}.", ""]
    out += [main_table(runs), ""]
    out += [f"## {first['predictor']['name']}", "",
            f"Confusion (needs clarification = positive): TP {c['tp']}, FP {c['fp']}, FN {c['fn']}, TN {c['tn']}; "
            f"invalid {c['invalid']} (included as errors).", ""]
    hard = first["by_category"].get("hard_negative")
    if hard:
        out += [f"Hard negatives (look ambiguous, resolved by history or passages): n={hard['n']}, "
                f"accuracy {_ci(hard['accuracy'], (hard.get('ci95') or {}).get('accuracy'))}.", ""]
    out += [breakdown_table("By setting", first["by_setting"]), "",
            breakdown_table("By category (hard negatives separate)", first["by_category"]), "",
            breakdown_table("By domain", first["by_domain"]), ""]
    if len(first.get("by_method") or {}) > 1:
        out += [breakdown_table("By generator (provenance method)", first["by_method"]), ""]
    q = first.get("quality") or {}
    out += ["### Clarification quality", "",
            f"Scored {q.get('scored', 0)} true positives of {q.get('gold_positive', 0)} gold positives.", ""]
    for note in q.get("notes", []):
        out.append(f"- {note}")
    errors = first["errors"]
    out += ["", "### Errors", "", f"{errors['count']} predictions with an error ({errors['invalid']} unparseable or missing)."]
    for e in errors["examples"]:
        out.append(f"- `{e['id']}`: {e['error']}")
    unmatched = errors.get("unmatched_prediction_ids")
    if unmatched and unmatched["count"]:
        out.append(f"- {unmatched['count']} prediction ids match no record, e.g. "
                   + ", ".join(f"`{i}`" for i in unmatched["examples"][:5]))
    data_extra = {k: v for k, v in first["data"].items() if k not in ("dropped_task_ids",)}
    out += ["", "### Run", "", f"- data: `{json.dumps(data_extra, ensure_ascii=False)}`",
            f"- predictor: `{json.dumps(first['predictor'], ensure_ascii=False)}`",
            f"- builder version: {first.get('builder_version')}", ""]
    return "\n".join(out)
