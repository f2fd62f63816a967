"""The build summary: renders a BuildReport, reads nothing."""

from __future__ import annotations

STAGES = ("conversations", "user_turns", "candidates", "rejected_by_generators", "quarantined", "duplicates",
          "dropped_by_split", "released")


def render_build(report, console) -> None:
    """Stage table, composition, leakage and (when an llm: section ran) the LLM figures, on `console`."""
    from rich.table import Table

    table = Table(title=f"{report.name} {report.version}", show_header=True)
    table.add_column("stage")
    table.add_column("records", justify="right")
    for key in STAGES:
        table.add_row(key.replace("_", " "), str(report.counts[key]))
    for split_name, n in sorted(report.splits.items()):  # as the summary always listed them
        table.add_row(f"  {split_name}", str(n))
    console.print(table)
    stats, leak = report.composition, report.leakage
    console.print(
        f"positives {stats['positive_share']:.1%} · hard negatives {stats['hard_negative_share_of_negatives']:.1%} of negatives · "
        f"contrastive {stats['contrastive_share_of_positives']:.1%} of positives · "
        f"post-retrieval {stats['setting_share'].get('post_retrieval', 0):.1%}"
    )
    console.print(
        f"leakage: {leak['conversations_in_several_splits']} shared conversations, "
        f"{leak['near_duplicate_queries_across_splits']} near-duplicate queries across splits"
    )
    if report.llm_run is not None:
        run = report.llm_run
        modes = ", ".join(f"{m} {n}" for m, n in sorted(run["modes"].items())) or "none"
        console.print(
            f"llm: {run['unique']} requests needed · {run['cache_hits']} from cache · {run['answered']} answered "
            f"({run['http_requests']} attempts, {run['retries']} retries, {run['reasks']} re-asks) · "
            f"{run['failed']} failed · tokens in {run['prompt_tokens']} / out {run['completion_tokens']} · "
            f"structured output: {modes}"
        )
