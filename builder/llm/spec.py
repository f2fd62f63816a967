"""Plain data for the engine: what to ask, how to ask it, and what came back."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CACHE_ENV = "CLARIEDGE_CACHE_DIR"
CACHE_FILE = "llm-cache.sqlite3"


def canonical(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


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
        return hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()

    def estimated_input_tokens(self) -> int:
        # ~4 characters per token plus a few per message; a dry-run estimate, not a tokenizer.
        chars = sum(len(m.get("content") or "") if isinstance(m.get("content"), str) else len(canonical(m.get("content")))
                    for m in self.messages)
        if self.schema is not None:
            chars += len(canonical(self.schema))
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
    structured: bool = True  # send response_format=json_schema when a spec has a schema
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
    error: str | None = None  # why it failed: "http 500 after 7 attempts", "finish_reason=length", ...
    finish_reason: str | None = None
    cached: bool = False
    reasked: bool = False


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
    failed: int = 0
    schema_fallback: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    wall_s: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class Estimate:
    requests: int  # unique requests that would go to the server (cache misses)
    unique: int
    cached: int
    input_tokens: int  # estimated, over the requests that would be sent
