"""PNG: accuracy with 95% CIs per setting and per category (hard negatives apart), one bar group per model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence


def plot_runs(runs: Sequence[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from builder.io import atomic_path

    panels = [("by setting", "by_setting"), ("by category", "by_category")]
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [1, 2.5]})
    width = 0.8 / max(1, len(runs))
    for ax, (title, key) in zip(axes, panels):
        groups = sorted({g for run in runs for g in run[key]})
        for i, run in enumerate(runs):
            xs, ys, lo, hi = [], [], [], []
            for j, group in enumerate(groups):
                m = run[key].get(group)
                if not m or m["accuracy"] is None:
                    continue
                ci = (m.get("ci95") or {}).get("accuracy") or [m["accuracy"], m["accuracy"]]
                xs.append(j + (i - (len(runs) - 1) / 2) * width)
                ys.append(m["accuracy"])
                lo.append(m["accuracy"] - ci[0])
                hi.append(ci[1] - m["accuracy"])
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=3, label=run["predictor"]["name"])
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([f"{g}\n(n={runs[0][key][g]['n']})" if g in runs[0][key] else g for g in groups],
                           rotation=20, ha="right", fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("accuracy (95% CI)")
        ax.set_title(f"needs_clarification accuracy {title}")
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=max(1, len(runs)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    with atomic_path(Path(out)) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
