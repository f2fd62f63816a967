"""`clariedge publish` and `clariedge diff`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from builder.cli_options import deprecated, renamed, required


def publish_command(
    release: Optional[Path] = typer.Option(None, "--release", help="Release directory, e.g. dist/<name>/<version>.", exists=True, file_okay=False),
    repo: str = typer.Option(..., "--repo", help="Dataset repo on the Hub, ORG/NAME (created if missing)."),
    private: bool = typer.Option(False, "--private", help="Create the repo private (ignored if it exists)."),
    create_pr: bool = typer.Option(False, "--create-pr", help="Open a pull request instead of committing to main; rerun after merging to tag."),
    attempts: int = typer.Option(4, "--attempts", min=1, help="Tries per step on network errors and 5xx answers."),
    backoff: float = typer.Option(1.0, "--backoff", min=0.0, help="First wait between tries, in seconds; doubles each time."),
    old_release: Optional[Path] = typer.Argument(None, hidden=True, metavar="RELEASE", exists=True, file_okay=False,
                                                 help="Deprecated spelling of --release."),
) -> None:
    """Publish a release to the Hugging Face Hub: one commit on main, then the immutable tag v<version>.

    The token comes from HF_TOKEN or your stored login (`hf auth login`); HF_ENDPOINT selects the Hub.
    Rerunning after a failure finishes the job without a second commit.
    """
    from builder.publish.hub import Retry, publish

    release = required(renamed(release, old_release, "RELEASE as an argument", "--release RELEASE"), "--release DIR")
    retry = Retry(attempts=attempts, base_delay=backoff)
    publish(release, repo, private=private, create_pr=create_pr, retry=retry, log=lambda m: typer.echo(m))


def diff_command(
    previous: Optional[str] = typer.Option(None, "--previous", help="Older release: a release directory or a Hub revision ORG/NAME@v1.0.0."),
    release: Optional[str] = typer.Option(None, "--release", help="Newer release: a release directory or a Hub revision ORG/NAME@v1.1.0."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the diff (counts and examples) to this JSON file."),
    examples: int = typer.Option(3, "--examples", min=0, help="Examples shown per kind of change."),
    old_sides: Optional[list[str]] = typer.Argument(None, hidden=True, metavar="RELEASES",
                                                    help="Deprecated spelling of --previous OLD --release NEW."),
) -> None:
    """Records added, removed, moved, relabelled and text-changed between two releases, matched by id."""
    from rich.console import Console

    from builder.io import write_json
    from builder.publish.hub import load_side
    from builder.release.diff import diff_splits, render_table

    previous, release = _sides(previous, release, old_sides or [])
    a_name, a_splits, _ = load_side(previous)
    b_name, b_splits, _ = load_side(release)
    diff = diff_splits(a_splits, b_splits, a_name, b_name)
    Console(width=140).print(render_table(diff, examples))
    if json_out is not None:
        write_json(json_out, diff.to_json(examples))
        typer.echo(f"wrote {json_out}")


def _sides(previous: Optional[str], release: Optional[str], positional: list[str]) -> tuple[str, str]:
    """--previous and --release, filled in that order from the old positional OLD NEW (with a note)."""
    if positional:
        deprecated("OLD NEW as arguments", "--previous OLD --release NEW")
        missing = [name for name, value in (("previous", previous), ("release", release)) if value is None]
        if len(positional) > len(missing):
            raise typer.BadParameter(f"{len(positional)} releases as arguments, room for {len(missing)}",
                                     param_hint="'--previous' / '--release'")
        given = dict(zip(missing, positional))
        previous, release = given.get("previous", previous), given.get("release", release)
    return required(previous, "--previous OLD"), required(release, "--release NEW")
