"""`clariedge publish` and `clariedge diff`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer


def publish_command(
    release_dir: Path = typer.Argument(..., help="Release directory, e.g. dist/<name>/<version>.", exists=True, file_okay=False),
    repo: str = typer.Option(..., "--repo", help="Dataset repo on the Hub, ORG/NAME (created if missing)."),
    private: bool = typer.Option(False, "--private", help="Create the repo private (ignored if it exists)."),
    create_pr: bool = typer.Option(False, "--create-pr", help="Open a pull request instead of committing to main; rerun after merging to tag."),
    attempts: int = typer.Option(4, "--attempts", min=1, help="Tries per step on network errors and 5xx answers."),
    backoff: float = typer.Option(1.0, "--backoff", min=0.0, help="First wait between tries, in seconds; doubles each time."),
) -> None:
    """Publish a release to the Hugging Face Hub: one commit on main, then the immutable tag v<version>.

    The token comes from HF_TOKEN or your stored login (`hf auth login`); HF_ENDPOINT selects the Hub.
    Rerunning after a failure finishes the job without a second commit.
    """
    from builder.publish.hub import Retry, publish

    retry = Retry(attempts=attempts, base_delay=backoff)
    publish(release_dir, repo, private=private, create_pr=create_pr, retry=retry, log=lambda m: typer.echo(m))


def diff_command(
    a: str = typer.Argument(..., help="Older release: a release directory or a Hub revision ORG/NAME@v1.0.0."),
    b: str = typer.Argument(..., help="Newer release: a release directory or a Hub revision ORG/NAME@v1.1.0."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the diff (counts and examples) to this JSON file."),
    examples: int = typer.Option(3, "--examples", min=0, help="Examples shown per kind of change."),
) -> None:
    """Records added, removed, moved, relabelled and text-changed between two releases, matched by id."""
    from rich.console import Console

    from builder.io import write_json
    from builder.publish.hub import load_side
    from builder.release.diff import diff_splits, render_table

    a_name, a_splits, _ = load_side(a)
    b_name, b_splits, _ = load_side(b)
    diff = diff_splits(a_splits, b_splits, a_name, b_name)
    Console(width=140).print(render_table(diff, examples))
    if json_out is not None:
        write_json(json_out, diff.to_json(examples))
        typer.echo(f"wrote {json_out}")
