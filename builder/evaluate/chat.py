"""Chat completions for prompted prediction and the judge, through the project's LLM engine (builder.llm).

The engine brings concurrency, retries, rate limits and the on-disk cache; a failed request becomes
an error for that item, so one bad reply never sinks a whole evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


@dataclass
class Endpoint:
    base_url: str
    model: str
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int | None = 0
    concurrency: int = 16
    timeout: float = 120.0
    max_retries: int = 3
    api_key_env: str = "OPENAI_API_KEY"  # local servers accept any key
    cache_dir: str | None = None
    no_cache: bool = False

    def describe(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "model": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "seed": self.seed}


def complete_many(
    endpoint: Endpoint,
    conversations: Sequence[list[dict[str, str]]],
    *,
    prompt: Any = None,
    schema: dict | None = None,
    label: str = "chat",
) -> list[tuple[Any, str | None, str | None]]:
    """(value, raw text, error) per conversation, in input order.

    With `schema`, value is the validated object (the engine re-asks once on a bad reply);
    without, value is the reply text and parsing is the caller's job.
    """
    from builder.llm import EngineConfig, RequestSpec, run_requests

    params: dict[str, Any] = {"temperature": endpoint.temperature, "max_tokens": endpoint.max_tokens}
    if endpoint.seed is not None:
        params["seed"] = endpoint.seed
    specs = [
        RequestSpec(
            model=endpoint.model, messages=list(messages), params=dict(params), schema=schema,
            schema_name=getattr(prompt, "name", "response"), prompt_name=getattr(prompt, "name", ""),
            prompt_version=getattr(prompt, "version", ""),
        )
        for messages in conversations
    ]
    config = EngineConfig(
        base_url=endpoint.base_url, api_key_env=endpoint.api_key_env, concurrency=endpoint.concurrency,
        timeout=endpoint.timeout, max_retries=endpoint.max_retries, cache_dir=endpoint.cache_dir,
        no_cache=endpoint.no_cache,
    )
    from rich.progress import Progress

    # The engine has no progress hook: feed it chunks (each still runs `concurrency` wide) and advance a bar.
    chunk = max(1, endpoint.concurrency * 4)
    results = []
    with Progress(transient=True) as progress:
        task = progress.add_task(f"{label} ({endpoint.model})", total=len(specs))
        for start in range(0, len(specs), chunk):
            results.extend(run_requests(specs[start:start + chunk], config))
            progress.update(task, completed=len(results))
    return [(r.value if r.ok else None, r.text, None if r.ok else r.error) for r in results]
