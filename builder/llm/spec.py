"""Plain data for the engine: what to ask, how to ask it, and what came back."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from builder.io import dumps

CACHE_ENV = "CLARIEDGE_CACHE_DIR"
CACHE_FILE = "llm-cache.sqlite3"




@dataclass
class RequestSpec:
    """One chat completion. The cache key covers every field that can change the answer."""

    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)  # temperature, max_tokens, seed, extra_body...
    schema: dict[str, Any] | None = None  # JSON Schema of the reply; None = plain text
    schema_name: str = "response"
    prompt_name: str = ""
    prompt_version: str = ""

    def key(self) -> str:
        body = {
            "model": self.model,
            "messages": self.messages,
            "params": self.params,
            "schema": self.schema,
            "schema_name": self.schema_name,
            "prompt": [self.prompt_name, self.prompt_version],
        }
        return hashlib.sha256(dumps(body).encode("utf-8")).hexdigest()

    def estimated_input_tokens(self) -> int:
        # ~4 characters per token plus a few per message; a dry-run estimate, not a tokenizer.
        chars = sum(len(m.get("content") or "") if isinstance(m.get("content"), str) else len(dumps(m.get("content")))
                    for m in self.messages)
        if self.schema is not None:
            chars += len(dumps(self.schema))
        return chars // 4 + 4 * len(self.messages)


@dataclass
class EngineConfig:
    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str = "OPENAI_API_KEY"  # name of the variable; the key itself is never stored here
    concurrency: int = 64
    rpm: float | None = None  # requests per minute
    tpm: float | None = None  # tokens per minute (estimated input + max_tokens)
    timeout: float = 120.0  # seconds per attempt
    max_retries: int = 6  # retries after the first attempt, for 429/5xx/timeout/connection errors
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    structured: bool = True  # ask for structured output (json_schema, then json_object) when a spec has a schema
    strict_schema: bool = False
    reask: bool = True  # one re-ask when the reply does not parse or validate
    cache_dir: str | None = None
    no_cache: bool = False

    def cache_path(self) -> Path:
        return resolve_cache_dir(self.cache_dir) / CACHE_FILE


def resolve_cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        return Path(explicit)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    import platformdirs

    return Path(platformdirs.user_cache_dir("clariedge"))


@dataclass
class Result:
    key: str
    ok: bool
    value: Any = None  # parsed object (schema) or the text (no schema)
    text: str | None = None
    error: str | None = None  # why it failed: "http 500: <server message> (gave up after 7 attempts)", ...
    finish_reason: str | None = None
    cached: bool = False
    reasked: bool = False
    mode: str | None = None  # how the answer was asked for: one of MODES, "text", or None (no answer)


# Structured-output modes, tried in this order per request; a server error that names the response format
# or schema moves that request one step down.
MODES = ("json_schema", "json_object", "prompt")


@dataclass
class Tally:
    """Live counts of one batch (one run_requests call), for a progress display."""

    batch: int
    label: str
    total: int  # unique requests in the batch
    answered: int = 0  # ended with a usable reply (from the server or the cache)
    failed: int = 0  # ended without one; the reason is in the Result
    cached: int = 0  # of those, served by the cache

    @property
    def done(self) -> int:
        return self.answered + self.failed


@dataclass
class RunStats:
    specs: int = 0
    unique: int = 0
    cache_hits: int = 0
    http_requests: int = 0  # attempts on the wire, retries included
    answered: int = 0  # responses received and stored
    retries: int = 0
    rate_limited: int = 0
    reasks: int = 0
    failed: int = 0  # unique requests that ended without a usable reply (cached verdicts included)
    format_fallbacks: int = 0  # requests moved down a structured-output mode by a format rejection
    modes: dict[str, int] = field(default_factory=dict)  # mode of every reply used (cached ones included)
    first_error: str | None = None  # reason of the first request that failed, in the order they ended
    failure_reasons: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0
    batches: int = 0
    # Called with the batch's Tally as it starts and after each request ends (a progress bar); not data.
    listener: Callable[[Tally], None] | None = field(default=None, repr=False, compare=False)
    # How each unique request ended: {key, prompt, ok, mode, cached, error}, in the order they ended.
    outcomes: list[dict[str, Any]] = field(default_factory=list, repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in vars(self).items() if k not in ("listener", "outcomes")}
        out["modes"], out["failure_reasons"] = dict(self.modes), dict(self.failure_reasons)
        return out


@dataclass
class Estimate:
    requests: int  # unique requests that would go to the server (cache misses)
    unique: int
    cached: int
    input_tokens: int  # estimated, over the requests that would be sent
