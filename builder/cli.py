"""`clariedge` command line. Heavy imports stay inside commands so `--help` is instant."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from builder.errors import InputError

app = typer.Typer(
    name="clariedge",
    help="Build, audit, publish and evaluate ClariEdge, a grounded query-clarification set for RAG.",
    no_args_is_help=False,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def fail(message: str) -> "typer.Exit":
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code=2)


def main() -> None:
    """Entry point that turns InputError into a one-line message and exit code 2."""
    try:
        app()
    except InputError as err:
        typer.secho(f"error: {err}", fg=typer.colors.RED, err=True)
        sys.exit(2)


# --- subcommands from other stages (one line each) ---
from builder.evaluate.cli import evaluate_command  # noqa: E402

app.command("evaluate")(evaluate_command)
from builder.audit.cli import app as audit_app  # noqa: E402

app.add_typer(audit_app, name="audit")
from builder.publish.cli import diff_command, publish_command  # noqa: E402

app.command("publish")(publish_command)
app.command("diff")(diff_command)
