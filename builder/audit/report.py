"""Write annotations/<version>/audit.md, audit.json and the PNG plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder.audit.annotations import CATEGORIES
from builder.io import write_json, write_text

CONFUSION_PNG = "confusion_matrix.png"
ERRORS_PNG = "error_rates.png"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _agreement_cell(a: dict[str, Any]) -> str:
    if a["method"] is None:
        return "– (no item with 2+ annotators)"
    return f"{_num(a['kappa'])} ({a['method']}, {a['items']} items)"


def markdown(metrics: dict[str, Any], suspects: list[dict[str, Any]] | None, top: int = 20) -> str:
    ds = metrics["dataset"]
    overall = metrics["overall"]
    lines = [
        f"# Label audit: {ds['name']} {ds['version']}",
        "",
        f"{overall['records']} of {ds['records']} records annotated, {overall['annotations']} annotations by "
        f"{len(metrics['annotators'])} annotator(s): {', '.join(metrics['annotators'])}.",
        "The human label of a record is the annotators' majority vote; ties are left undecided and not counted in accuracy.",
        "",
        "## Generated vs human, per generated category",
        "",
        "| category | records | annotations | label accuracy | category accuracy | clarification acceptable | agreement, label (kappa) | agreement, category (kappa) |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    rows = list(metrics["per_category"].items()) + [("**all**", overall)]
    for name, m in rows:
        lines.append(
            f"| {name} | {m['records']} | {m['annotations']} | {_pct(m['label_accuracy'])} (n={m['label_decided']}) | "
            f"{_pct(m['category_accuracy'])} (n={m['category_decided']}) | "
            f"{_pct(m['acceptability_rate'])} (n={m['acceptability_judged']}) | "
            f"{_agreement_cell(m['agreement_label'])} | {_agreement_cell(m['agreement_category'])} |"
        )
    lines += [
        "",
        "Agreement is Cohen's kappa when exactly two annotators rated the items, Fleiss' kappa when more; "
        f"raw pairwise agreement on the label overall: {_pct(overall['agreement_label']['percent_agreement'])}.",
        "",
        "## Confusion matrix (rows: generated category, columns: human majority)",
        "",
        f"![confusion matrix]({CONFUSION_PNG})",
        "",
    ]
    cols = [*CATEGORIES, "tie"]
    lines.append("| generated \\ human | " + " | ".join(cols) + " |")
    lines.append("|---|" + "---:|" * len(cols))
    for g in CATEGORIES:
        row = metrics["confusion"][g]
        if sum(row.values()):
            lines.append(f"| {g} | " + " | ".join(str(row[c]) for c in cols) + " |")
    lines += ["", "## Error rates per category", "", f"![error rates]({ERRORS_PNG})", ""]
    lines += ["## Disagreements", ""]
    if metrics["disagreements"]:
        lines += ["| record | generated | human | votes |", "|---|---|---|---|"]
        for d in metrics["disagreements"]:
            votes = ", ".join(f"{k}: {v}" for k, v in sorted(d["votes"]["category"].items()))
            lines.append(f"| {d['record_id']} | {d['generated']['category']} | {d['human']['category'] or 'tie'} | {votes} |")
    else:
        lines.append("None: every decided human label matches the generated one.")
    if suspects is not None:
        lines += ["", f"## Automatic suspects (top {min(top, len(suspects))} of {len(suspects)})", ""]
        lines += ["| rank | record | method | score | reason |", "|---:|---|---|---:|---|"]
        for s in suspects[:top]:
            lines.append(f"| {s.get('rank', '')} | {s['record_id']} | {s.get('method', '')} | {s['score']:.3f} | {s['reason']} |")
    return "\n".join(lines) + "\n"


def plot_confusion(metrics: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    rows = [g for g in CATEGORIES if sum(metrics["confusion"][g].values())]
    cols = [*CATEGORIES, "tie"]
    data = np.array([[metrics["confusion"][g][c] for c in cols] for g in rows]) if rows else np.zeros((1, len(cols)))
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.55 * max(1, len(rows))))
    ax.imshow(data, cmap="Blues", aspect="auto")
    ax.set_xticks(range(len(cols)), cols, rotation=35, ha="right")
    ax.set_yticks(range(len(rows) or 1), rows or ["(none)"])
    for (i, j), value in np.ndenumerate(data):
        if value:
            ax.text(j, i, str(value), ha="center", va="center",
                    color="white" if value > data.max() / 2 else "black")
    ax.set_xlabel("human majority")
    ax.set_ylabel("generated")
    ax.set_title("Generated category vs human label")
    fig.tight_layout()
    with_path(fig, path)


def plot_error_rates(metrics: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    cats = list(metrics["per_category"])
    per = list(metrics["per_category"].values())
    series = {
        "label error": [m["label_accuracy"] for m in per],
        "category error": [m["category_accuracy"] for m in per],
        "clarification not acceptable": [m["acceptability_rate"] for m in per],
    }
    x = np.arange(len(cats))
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.27
    for k, (name, rates) in enumerate(series.items()):
        pos = x + (k - 1) * width
        # 1 - rate is the error; nothing measured (no decided record / no judgement) is marked n/a, not 0.
        ax.bar(pos, [0 if r is None else 1 - r for r in rates], width, label=name)
        for p, r in zip(pos, rates):
            if r is None:
                ax.text(p, 0.01, "n/a", ha="center", va="bottom", fontsize=7, rotation=90, color="grey")
    ax.set_xticks(x, cats, rotation=30, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("rate")
    ax.set_title("Error rates per generated category (human majority as truth)")
    ax.legend()
    fig.tight_layout()
    with_path(fig, path)


def with_path(fig, path: Path) -> None:
    import matplotlib.pyplot as plt

    from builder.io import atomic_path

    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)


def write_report(metrics: dict[str, Any], out_dir: Path, suspects: list[dict[str, Any]] | None = None) -> dict[str, Path]:
    out_dir = Path(out_dir)
    paths = {"md": out_dir / "audit.md", "json": out_dir / "audit.json",
             "confusion": out_dir / CONFUSION_PNG, "errors": out_dir / ERRORS_PNG}
    plot_confusion(metrics, paths["confusion"])
    plot_error_rates(metrics, paths["errors"])
    write_json(paths["json"], {**metrics, "suspects": suspects})
    write_text(paths["md"], markdown(metrics, suspects))
    return paths
