"""Persistent response cache: SQLite in WAL mode, one row per answered request.

Every response is committed as it arrives. In WAL mode with synchronous=NORMAL a commit is an
append to the -wal file without fsync, so it costs tens of microseconds and survives a SIGKILL
of the process (not a power cut, which only loses the tail since the last checkpoint).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Iterable

from builder.errors import InputError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    body TEXT NOT NULL,            -- JSON: content, finish_reason, usage, model
    prompt TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    key TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    prompt TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL,
    updated REAL NOT NULL,
    final INTEGER NOT NULL DEFAULT 0  -- 1: a client error (4xx) the same request would get again
);
"""


class Cache:
    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit: each statement is its own transaction, i.e. one commit per response.
            self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=10000")
            self.db.executescript(_SCHEMA)
            columns = {row[1] for row in self.db.execute("PRAGMA table_info(failures)")}
            if "final" not in columns:  # a cache written before final failures were kept
                self.db.execute("ALTER TABLE failures ADD COLUMN final INTEGER NOT NULL DEFAULT 0")
        except (sqlite3.DatabaseError, OSError) as err:
            raise InputError(f"{self.path}: cannot open the LLM cache ({err})") from None

    def close(self) -> None:
        self.db.close()

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        keys = list(keys)
        found: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self.db.execute(f"SELECT key, body FROM responses WHERE key IN ({marks})", chunk))
        return found

    def failed_keys(self, keys: Iterable[str]) -> set[str]:
        keys = list(keys)
        out: set[str] = set()
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            out.update(k for (k,) in self.db.execute(f"SELECT key FROM failures WHERE key IN ({marks})", chunk))
        return out

    def put(self, key: str, body: str, prompt: str = "") -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO responses (key, body, prompt, created) VALUES (?, ?, ?, ?)",
            (key, body, prompt, time.time()),
        )

    def final_failures(self, keys: Iterable[str]) -> dict[str, str]:
        """Reasons of the stored failures that a rerun should not ask again (4xx), by key."""
        keys = list(keys)
        out: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            out.update(self.db.execute(f"SELECT key, reason FROM failures WHERE final = 1 AND key IN ({marks})", chunk))
        return out

    def put_failure(self, key: str, reason: str, attempts: int, prompt: str = "", final: bool = False) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO failures (key, reason, prompt, attempts, updated, final) VALUES (?, ?, ?, ?, ?, ?)",
            (key, reason, prompt, attempts, time.time(), int(final)),
        )

    def clear_failure(self, key: str) -> None:
        self.db.execute("DELETE FROM failures WHERE key = ?", (key,))

    def stats(self) -> dict:
        responses, = self.db.execute("SELECT COUNT(*) FROM responses").fetchone()
        failures, = self.db.execute("SELECT COUNT(*) FROM failures").fetchone()
        final, = self.db.execute("SELECT COUNT(*) FROM failures WHERE final = 1").fetchone()
        by_prompt = {
            p or "(none)": n
            for p, n in self.db.execute("SELECT prompt, COUNT(*) FROM responses GROUP BY prompt ORDER BY prompt")
        }
        reasons = {
            r: n
            for r, n in self.db.execute(
                "SELECT reason, COUNT(*) FROM failures GROUP BY reason ORDER BY COUNT(*) DESC LIMIT 10"
            )
        }
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.exists())
        return {
            "path": str(self.path),
            "responses": responses,
            "failures": failures,
            "final_failures": final,
            "by_prompt": by_prompt,
            "failure_reasons": reasons,
            "bytes": size,
        }

    def clear_failures(self) -> int:
        return self.db.execute("DELETE FROM failures").rowcount
