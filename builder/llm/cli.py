"""`clariedge llm ...`: look after the LLM response cache. Only typer at import time, so --help stays instant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(help="The LLM request cache: statistics and failure reset.", no_args_is_help=True)
CacheOpt = typer.Option(None, "--cache", help="Cache folder. Default: $CLARIEDGE_CACHE_DIR or the user cache folder.")


def _open(cache: Optional[Path]):
    from builder.errors import InputError
    from builder.llm.cache import Cache
    from builder.llm.spec import CACHE_FILE, resolve_cache_dir

    path = resolve_cache_dir(cache) / CACHE_FILE
    if not path.exists():
        raise InputError(f"{path}: no LLM cache here yet")
    return Cache(path)


@app.command("stats")
def stats(cache: Optional[Path] = CacheOpt, as_json: bool = typer.Option(False, "--json")) -> None:
    """Cached responses (per prompt), stored failures and their reasons, size on disk."""
    db = _open(cache)
    try:
        info = db.stats()
    finally:
        db.close()
    if as_json:
        typer.echo(json.dumps(info, indent=2))
        return
    typer.echo(f"cache      {info['path']} ({info['bytes'] / 1e6:.1f} MB)")
    typer.echo(f"responses  {info['responses']}")
    for prompt, n in info["by_prompt"].items():
        typer.echo(f"  {prompt:<30} {n}")
    typer.echo(f"failures   {info['failures']} ({info['final_failures']} client errors kept as final; the others "
               "are retried on the next run)")
    for reason, n in info["failure_reasons"].items():
        typer.echo(f"  {n:>6}  {reason}")


@app.command("clear-failures")
def clear_failures(cache: Optional[Path] = CacheOpt) -> None:
    """Forget stored failures, so the next run asks again (4xx ones included, e.g. after raising the context)."""
    db = _open(cache)
    try:
        typer.echo(f"cleared {db.clear_failures()} failures")
    finally:
        db.close()
