"""`clariedge llm ...`: look after the LLM response cache. Only typer at import time, so --help stays instant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from builder.cli_options import deprecated, old_option, renamed

app = typer.Typer(help="The LLM request cache: statistics and failure reset.", no_args_is_help=True)
CacheOpt = typer.Option(None, "--cache-dir", help="LLM reply cache folder. Default: $CLARIEDGE_CACHE_DIR or the user cache folder.")
OLD_JSON_FLAG = "--json-to-stdout"  # hidden: what the old bare `llm stats --json` becomes (see old_json_flag)


def old_json_flag(args: list[str]) -> list[str]:
    """`llm stats --json` with no FILE after it (the old flag) -> the hidden OLD_JSON_FLAG.

    typer 0.29 has no option whose value is optional, so the entry point rewrites the one old spelling that
    needs one; otherwise `--json --cache DIR` would write the JSON to a file named "--cache".
    """
    if args[:2] != ["llm", "stats"]:
        return args
    out = list(args)
    for i, arg in enumerate(out):
        if arg == "--json" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = OLD_JSON_FLAG
    return out


def _open(cache: Optional[Path]):
    from builder.errors import InputError
    from builder.llm.cache import Cache
    from builder.llm.spec import CACHE_FILE, resolve_cache_dir

    path = resolve_cache_dir(cache) / CACHE_FILE
    if not path.exists():
        raise InputError(f"{path}: no LLM cache here yet")
    return Cache(path)


@app.command("stats")
def stats(
    cache: Optional[Path] = CacheOpt,
    json_out: Optional[Path] = typer.Option(None, "--json", metavar="FILE", help="Also write the statistics to this JSON file."),
    old_cache: Optional[Path] = old_option("--cache", "--cache-dir"),
    old_json: bool = typer.Option(False, OLD_JSON_FLAG, hidden=True, help="Deprecated: the old `--json` flag."),
) -> None:
    """Cached responses (per prompt), stored failures and their reasons, size on disk."""
    db = _open(renamed(cache, old_cache, "--cache", "--cache-dir"))
    try:
        info = db.stats()
    finally:
        db.close()
    if old_json:  # the old flag printed the JSON alone on stdout; it still does
        deprecated("--json without FILE (JSON on stdout)", "--json FILE")
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
    if json_out is not None:
        from builder.io import write_json

        write_json(json_out, info)
        typer.echo(f"wrote {json_out}")


@app.command("clear-failures")
def clear_failures(cache: Optional[Path] = CacheOpt, old_cache: Optional[Path] = old_option("--cache", "--cache-dir")) -> None:
    """Forget stored failures, so the next run asks again (4xx ones included, e.g. after raising the context)."""
    db = _open(renamed(cache, old_cache, "--cache", "--cache-dir"))
    try:
        typer.echo(f"cleared {db.clear_failures()} failures")
    finally:
        db.close()
