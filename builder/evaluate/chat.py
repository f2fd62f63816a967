"""Chat completions for prompted prediction and the judge, over any OpenAI-compatible endpoint.

Uses the `openai` client directly (sync, a small thread pool for concurrency); a failed request
becomes an error string for that item, so one bad reply never sinks a whole evaluation.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Sequence


@dataclass
class Endpoint:
    base_url: str
    model: str
    api_key: str | None = None  # default: $OPENAI_API_KEY, else "EMPTY" (local servers ignore it)
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int | None = 0
    concurrency: int = 8
    timeout: float = 120.0
    max_retries: int = 3

    def describe(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "model": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "seed": self.seed}


def complete_many(
    endpoint: Endpoint, conversations: Sequence[list[dict[str, str]]], *, label: str = "requests"
) -> list[tuple[str | None, str | None]]:
    """(reply text, error) per conversation, in input order, with a progress bar."""
    import openai
    from rich.progress import Progress

    client = openai.OpenAI(
        base_url=endpoint.base_url,
        api_key=endpoint.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
        timeout=endpoint.timeout,
        max_retries=endpoint.max_retries,
    )
    params: dict[str, Any] = {"temperature": endpoint.temperature, "max_tokens": endpoint.max_tokens}
    if endpoint.seed is not None:
        params["seed"] = endpoint.seed

    def one(messages: list[dict[str, str]]) -> tuple[str | None, str | None]:
        try:
            reply = client.chat.completions.create(model=endpoint.model, messages=messages, **params)
        except openai.OpenAIError as err:
            return None, f"request failed: {type(err).__name__}: {str(err)[:200]}"
        choice = reply.choices[0] if reply.choices else None
        if choice is None or choice.message.content is None:
            return None, "empty reply"
        if choice.finish_reason == "length":
            return choice.message.content, "finish_reason=length (reply cut off)"
        return choice.message.content, None

    results: list[tuple[str | None, str | None]] = []
    with Progress(transient=True) as progress, ThreadPoolExecutor(max(1, endpoint.concurrency)) as pool:
        task = progress.add_task(label, total=len(conversations))
        for result in pool.map(one, conversations):
            results.append(result)
            progress.advance(task)
    client.close()
    return results
