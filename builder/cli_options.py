"""What every `clariedge` command shares: renamed options that still work for a while, and the error line.

Outside `builder/cli/` on purpose: the stage CLIs (audit, evaluate, publish, ...) import this, and importing
anything under `builder.cli` would first run `builder/cli/__init__`, which imports them back.
"""

from __future__ import annotations

import os
from typing import Any

import typer


def old_option(old: str, new: str) -> Any:
    """A hidden option for a spelling kept for one minor version; pass its value to `renamed`."""
    return typer.Option(None, old, hidden=True, help=f"Deprecated spelling of {new}.")


def deprecated(old: str, new: str) -> None:
    """The note an old spelling prints on stderr."""
    typer.echo(f"note: {old} is deprecated and goes away in the next minor version; use {new}", err=True)


def renamed(value: Any, old_value: Any, old: str, new: str) -> Any:
    """The option's value, taking the old spelling when only that was given (with a note on stderr)."""
    if old_value is None:
        return value
    deprecated(old, new)
    return value if value is not None else old_value


def required(value: Any, option: str) -> Any:
    """An option that is required, but declared optional while its old positional spelling still works."""
    if value is None:  # typer's own usage error (exit code 2): typer 0.29 does not catch click's
        raise typer.BadParameter(f"missing; give {option}", param_hint=f"'{option.split()[0]}'")
    return value


def use_color() -> bool | None:
    """False when NO_COLOR is set to anything non-empty (https://no-color.org); None lets click decide."""
    return False if os.environ.get("NO_COLOR") else None


def error_line(message: str) -> None:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True, color=use_color())
