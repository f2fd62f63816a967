"""`clariedge` command line: `app` is the typer app, `main` the entry point (see builder/cli/main.py)."""

from builder.cli.main import app, main

__all__ = ["app", "main"]
