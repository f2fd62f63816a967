"""File I/O at the edges: JSONL reading with precise errors, and atomic writes."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

from builder.errors import InputError


def dumps(obj: Any) -> str:
    """Canonical JSON: sorted keys, no ASCII escaping, compact. Byte-stable across runs."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def read_text(path: Path) -> str:
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: file not found")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}: not valid UTF-8 (byte {err.start}: {err.reason})") from None


def read_json(path: Path) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}:{err.lineno}: malformed JSON ({err.msg}, column {err.colno})") from None


def iter_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (line number, object) for each non-blank line."""
    text = read_text(path)
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(f"{path}:{lineno}: malformed JSON line ({err.msg}, column {err.colno})") from None


def read_jsonl(path: Path) -> list[Any]:
    return [obj for _, obj in iter_jsonl(path)]


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; it replaces `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; released files should be readable
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes(path: Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_json(path: Path, obj: Any) -> None:
    write_text(path, json.dumps(obj, ensure_ascii=False, sort_keys=True, indent=2) + "\n")


def write_jsonl(path: Path, rows: Iterable[Any]) -> int:
    count = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(dumps(row))
            out.write("\n")
            count += 1
    return count
