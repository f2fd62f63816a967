"""Drive an OpenAI-compatible chat endpoint: bounded, rate-limited, retried, cached, validated.

Entry points: `run_requests(specs, config)` (sync) and `arun_requests` (async); both return one
Result per spec, in input order. Identical specs are asked once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import re
import time
from typing import Any, Callable, Iterable, Sequence

import aiohttp
import httpx2
import openai

from builder.errors import InputError
from builder.llm.cache import Cache
from builder.llm.limits import Gate
from builder.llm.parse import ParseError, parse_reply
from builder.io import dumps
from builder.llm.spec import MODES, EngineConfig, Estimate, RequestSpec, Result, RunStats, Tally

log = logging.getLogger("builder.llm")

FAILED_FINISH = ("length", "content_filter")
_FATAL = (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)
# An error about the response format or schema, whatever its status: vLLM and OpenAI answer 400, a
# llama.cpp server (llama-cpp-python) answers 500 for a json_schema it cannot turn into a grammar.
_FORMAT_WORDS = re.compile(r"response[ _-]?format|json[ _-]?schema|json[ _-]?object|structured output|"
                           r"\bschema\b|\bgrammar\b", re.IGNORECASE)


def names_format(message: str) -> bool:
    """Whether a server error is about how the reply was asked for (then that request asks another way)."""
    return bool(_FORMAT_WORDS.search(message))


def _step_down(mode: str) -> str | None:
    i = MODES.index(mode) if mode in MODES else len(MODES)
    return MODES[i + 1] if i + 1 < len(MODES) else None


class _GaveUp(Exception):
    """A request that failed for good; the message is the stored reason."""


def _retry_after(err: openai.APIStatusError) -> float | None:
    headers = err.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                pass  # an HTTP date: fall back to our own backoff
    return None


def _prompt_label(spec: RequestSpec) -> str:
    return f"{spec.prompt_name}@{spec.prompt_version}" if spec.prompt_name else ""


def reask_spec(spec: RequestSpec, reply: str, problem: str) -> RequestSpec:
    """The one follow-up turn after an unusable reply: show the model its reply and what was wrong."""
    note = (
        f"Your reply could not be used: {problem}. Reply again with only a JSON object that matches "
        f"this JSON Schema, and nothing else:\n{dumps(spec.schema)}"
    )
    messages = [*spec.messages, {"role": "assistant", "content": reply}, {"role": "user", "content": note}]
    return RequestSpec(spec.model, messages, dict(spec.params), spec.schema, spec.schema_name,
                       spec.prompt_name, spec.prompt_version + "+reask")


class Engine:
    def __init__(self, config: EngineConfig, stats: RunStats | None = None):
        self.cfg = config
        self.stats = stats if stats is not None else RunStats()
        self.first_mode = MODES.index("json_schema" if config.structured else "prompt")
        # Per schema: the mode a format rejection pushed its requests down to, so the next request with the
        # same schema starts there instead of being rejected again. Only a format rejection sets it.
        self.mode_floor: dict[str, int] = {}
        self.cache: Cache | None = None
        self.failed_before: set[str] = set()
        self.tally = Tally(batch=-1, label="", total=0)

    # ---- public ---------------------------------------------------------------------------

    async def run(self, specs: Sequence[RequestSpec]) -> list[Result]:
        start = time.perf_counter()
        keys = [s.key() for s in specs]
        unique: dict[str, RequestSpec] = {}
        for key, spec in zip(keys, specs):
            unique.setdefault(key, spec)
        self.stats.specs += len(specs)
        self.stats.unique += len(unique)
        self.unique = unique
        self.tally = Tally(batch=self.stats.batches, label=_batch_label(unique.values()), total=len(unique))
        self.stats.batches += 1
        self._notify()
        if not self.cfg.no_cache:
            self.cache = Cache(self.cfg.cache_path())
        try:
            done = await self._resolve_all(unique)
        finally:
            if self.cache is not None:
                self.cache.close()
                self.cache = None
            self.stats.wall_s += time.perf_counter() - start
        return [done[k] for k in keys]

    # ---- orchestration --------------------------------------------------------------------

    async def _resolve_all(self, unique: dict[str, RequestSpec]) -> dict[str, Result]:
        hits = self.cache.get_many(unique) if self.cache else {}
        finals = self.cache.final_failures(k for k in unique if k not in hits) if self.cache else {}
        if self.cache:
            self.failed_before = self.cache.failed_keys(k for k in unique if k not in hits and k not in finals)
        done: dict[str, Result] = {}
        pending: list[tuple[str, RequestSpec, dict | None]] = []
        for key, spec in unique.items():
            if key in finals:  # a 4xx: asking the same again gets the same answer (`llm clear-failures` resets)
                done[key] = self._ended(Result(key=key, ok=False, error=finals[key], cached=True))
                continue
            body = hits.get(key)
            if body is None:
                pending.append((key, spec, None))
                continue
            self.stats.cache_hits += 1
            result = self._finish(spec, key, json.loads(body), cached=True)
            if result.ok or not self._can_reask(spec, result):
                done[key] = self._ended(result)  # cached path stays synchronous: no task, no socket
            else:
                pending.append((key, spec, json.loads(body)))
        if not pending:
            return done
        self.gate = Gate(self.cfg.rpm, self.cfg.tpm)
        self.slots = asyncio.Semaphore(max(1, self.cfg.concurrency))
        self.client = self._client()
        try:
            tasks = [asyncio.ensure_future(self._resolve_one(k, s, b)) for k, s, b in pending]
            try:
                for (key, _, _), result in zip(pending, await asyncio.gather(*tasks)):
                    done[key] = result
            except BaseException:
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
        finally:
            await self.client.close()
        return done

    def _client(self) -> openai.AsyncOpenAI:
        key = os.environ.get(self.cfg.api_key_env) or "EMPTY"  # local servers accept any key
        conns = max(100, self.cfg.concurrency)
        http = openai.DefaultAioHttpClient(
            timeout=self.cfg.timeout, limits=httpx2.Limits(max_connections=conns, max_keepalive_connections=conns)
        )
        # Our own retry loop: the SDK's would not share a cool-down or count attempts for us.
        return openai.AsyncOpenAI(base_url=self.cfg.base_url, api_key=key, max_retries=0,
                                  timeout=self.cfg.timeout, http_client=http)

    async def _resolve_one(self, key: str, spec: RequestSpec, body: dict | None) -> Result:
        return self._ended(await self._resolve(key, spec, body))

    def _ended(self, result: Result) -> Result:
        """Count one request that ended (answered or failed for good) and tell the listener."""
        if result.ok:
            self.tally.answered += 1
        else:
            self.tally.failed += 1
            self.stats.failed += 1
            reasons = self.stats.failure_reasons
            reasons[result.error or "?"] = reasons.get(result.error or "?", 0) + 1
            if self.stats.first_error is None:
                self.stats.first_error = result.error
        if result.cached:
            self.tally.cached += 1
        if result.mode is not None:
            self.stats.modes[result.mode] = self.stats.modes.get(result.mode, 0) + 1
        self.stats.outcomes.append({"key": result.key, "prompt": _prompt_label(self.unique[result.key]),
                                    "ok": result.ok, "mode": result.mode, "cached": result.cached,
                                    "error": result.error})
        self._notify()
        return result

    def _notify(self) -> None:
        if self.stats.listener is not None and self.tally.total:  # an empty batch has nothing to show
            self.stats.listener(self.tally)

    async def _resolve(self, key: str, spec: RequestSpec, body: dict | None) -> Result:
        cached = body is not None
        if body is None:
            try:
                body = await self._fetch(spec, key)
            except _GaveUp as err:
                return Result(key=key, ok=False, error=str(err))
        result = self._finish(spec, key, body, cached)
        if result.ok or not self._can_reask(spec, result):
            return result
        # One re-ask, itself cached under its own key, so a rerun re-pays for neither call.
        self.stats.reasks += 1
        follow = reask_spec(spec, result.text or "", result.error or "")
        follow_key = follow.key()
        hit = self.cache.get_many([follow_key]).get(follow_key) if self.cache else None
        final = self.cache.final_failures([follow_key]).get(follow_key) if self.cache and not hit else None
        if final is not None:
            return Result(key=key, ok=False, error=f"re-ask failed: {final}", text=result.text, cached=cached)
        try:
            follow_body = json.loads(hit) if hit else await self._fetch(follow, follow_key)
        except _GaveUp as err:
            return Result(key=key, ok=False, error=f"re-ask failed: {err}", text=result.text, cached=cached)
        final = self._finish(spec, key, follow_body, cached and hit is not None)
        final.reasked = True
        if not final.ok:
            final.error = f"{final.error} (after re-ask)"
        return final

    def _can_reask(self, spec: RequestSpec, result: Result) -> bool:
        return self.cfg.reask and spec.schema is not None and result.finish_reason not in FAILED_FINISH

    # ---- one request on the wire ------------------------------------------------------------

    def _backoff(self, attempt: int) -> float:
        # Full jitter: spreads the retries of a burst of failures instead of re-synchronising them.
        return random.uniform(0, min(self.cfg.backoff_max, self.cfg.backoff_base * 2 ** (attempt - 1)))

    def _mode(self, mode: str, schema_id: str) -> str:
        """`mode`, or lower if a format rejection of this schema has been seen meanwhile (asked at each attempt,
        so requests queued behind the first rejection do not repeat it)."""
        if mode not in MODES:
            return mode
        return MODES[max(MODES.index(mode), self.mode_floor.get(schema_id, 0))]

    async def _fetch(self, spec: RequestSpec, key: str) -> dict:
        tokens = spec.estimated_input_tokens() + int(spec.params.get("max_tokens") or spec.params.get("max_completion_tokens") or 0)
        schema_id = dumps(spec.schema) if spec.schema is not None else ""
        mode = MODES[self.first_mode] if spec.schema is not None else "text"
        attempt = 0
        while True:
            delay = None
            async with self.slots:
                # Wait inside the slot so a cool-down that starts while we queue still holds us.
                await self.gate.wait(tokens)
                attempt += 1
                self.stats.http_requests += 1
                mode = self._mode(mode, schema_id)
                try:
                    body = await self._call(spec, mode)
                    break
                except openai.RateLimitError as err:
                    self.stats.rate_limited += 1
                    reason = "http 429"
                    wait = _retry_after(err)
                    self.gate.cool_down(wait if wait is not None else self._backoff(attempt))
                    delay = 0.0  # the gate holds everyone until the cool-down ends
                except openai.APIConnectionError as err:  # timeouts included
                    reason = _transport_reason(err, self.cfg.timeout)
                except _FATAL as err:
                    raise InputError(
                        f"{self.cfg.base_url}: HTTP {err.status_code} ({_short(err)}); check the URL, the model "
                        f"name and ${self.cfg.api_key_env}"
                    ) from None
                except openai.APIStatusError as err:
                    text = _server_text(err)
                    message = text[:300]
                    lower = _step_down(mode) if names_format(text) else None
                    if lower is not None:
                        # This request asks again another way at once: a format rejection is no transient
                        # error, so it is neither retried nor counted against the retry budget.
                        log.info("http %s naming the response format (%s); asking with %s instead of %s",
                                 err.status_code, message, lower, mode)
                        self.stats.format_fallbacks += 1
                        self.mode_floor[schema_id] = max(self.mode_floor.get(schema_id, 0), MODES.index(lower))
                        mode = lower
                        attempt -= 1
                        continue
                    reason = f"http {err.status_code}: {message}"
                    if err.status_code < 500 and err.status_code not in (408, 409):
                        self._give_up(spec, key, reason, attempt, final=True)  # this request alone
                except _BadBody as err:
                    reason = f"unusable response body: {err}"
            if attempt > self.cfg.max_retries:
                self._give_up(spec, key, f"{reason} (gave up after {attempt} attempts)", attempt)
            self.stats.retries += 1
            await asyncio.sleep(self._backoff(attempt) if delay is None else delay)
        self.stats.answered += 1
        body["mode"] = mode
        usage = body.get("usage") or {}
        self.stats.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.stats.completion_tokens += int(usage.get("completion_tokens") or 0)
        if self.cache is not None:
            self.cache.put(key, dumps(body), _prompt_label(spec))
            if key in self.failed_before:
                self.cache.clear_failure(key)
        return body

    def _give_up(self, spec: RequestSpec, key: str, reason: str, attempts: int, final: bool = False) -> None:
        if self.cache is not None:
            self.cache.put_failure(key, reason, attempts, _prompt_label(spec), final)
        raise _GaveUp(reason)

    async def _call(self, spec: RequestSpec, mode: str) -> dict:
        kwargs: dict[str, Any] = {"model": spec.model, "messages": spec.messages, **spec.params}
        if mode == "json_schema":
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": spec.schema_name, "schema": spec.schema, "strict": self.cfg.strict_schema},
            }
        elif mode in ("json_object", "prompt"):
            kwargs["messages"] = _with_schema_note(spec.messages, spec.schema)
            if mode == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
        kwargs.update(kwargs.pop("extra_body", None) or {})  # vLLM/Ollama extras go in the body as-is
        # The client's generic POST: same auth, headers, errors and transport as chat.completions.create,
        # without its per-request TypedDict transform and pydantic models (a third of the client CPU, profiled).
        # Body pre-encoded once: the client would otherwise deep-copy the messages twice per attempt.
        raw = await self.client.post("/chat/completions", content=_encode(kwargs), cast_to=httpx2.Response,
                                     options={"headers": _JSON_HEADERS})
        try:
            data = json.loads(raw.content)
            choice = data["choices"][0]
            return {
                "content": (choice.get("message") or {}).get("content") or "",
                "finish_reason": choice.get("finish_reason"),
                "usage": data.get("usage") or {},
                "model": data.get("model"),
            }
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as err:
            raise _BadBody(type(err).__name__) from None

    # ---- after the cache: parse and validate ---------------------------------------------------

    def _finish(self, spec: RequestSpec, key: str, body: dict, cached: bool) -> Result:
        text = body.get("content") or ""
        finish = body.get("finish_reason")
        if finish in FAILED_FINISH:
            return Result(key=key, ok=False, text=text, error=f"finish_reason={finish}", finish_reason=finish,
                          cached=cached, mode=body.get("mode") or "unrecorded")
        mode = body.get("mode") or "unrecorded"  # replies cached before modes were recorded
        try:
            value = parse_reply(text, spec.schema)
        except ParseError as err:
            return Result(key=key, ok=False, text=text, error=str(err), finish_reason=finish, cached=cached, mode=mode)
        return Result(key=key, ok=True, value=value, text=text, finish_reason=finish, cached=cached, mode=mode)


_JSON_HEADERS = {"Content-Type": "application/json"}


def _encode(body: dict) -> bytes:
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class _BadBody(Exception):
    pass


def _short(err: openai.APIStatusError) -> str:
    return _server_text(err)[:300]


def _server_text(err: openai.APIStatusError) -> str:
    """The server's own error text (what a curator needs to fix the endpoint), on one line."""
    body = err.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    if isinstance(body, dict) and body.get("message"):
        text = body["message"]
    elif isinstance(body, dict) and body.get("detail"):  # FastAPI servers (llama-cpp-python's 422)
        text = body["detail"]
    else:
        text = err.message
    text = text if isinstance(text, str) else dumps(text)
    return " ".join(text.split())


def _transport_reason(err: BaseException, timeout: float) -> str:
    # The aiohttp transport reports a refused connection as a ConnectTimeout; the root cause tells the truth.
    root = err
    while root.__cause__ is not None or root.__context__ is not None:
        root = root.__cause__ or root.__context__
    if isinstance(root, (OSError, aiohttp.ClientConnectorError)) and not isinstance(root, TimeoutError):
        return f"connection error: {type(root).__name__}"
    if isinstance(err, openai.APITimeoutError) or isinstance(root, TimeoutError):
        return f"timeout after {timeout:g} s"
    return f"connection error: {type(root).__name__}"


def _schema_note(schema: dict) -> str:
    return "Reply with only a JSON object, no prose, that matches this JSON Schema:\n" + dumps(schema)


def _with_schema_note(messages: list[dict], schema: dict) -> list[dict]:
    """The schema at the end of the last user turn. Not a trailing system message: some chat templates
    (Mistral, Gemma) refuse a system message after the first turn."""
    last = messages[-1] if messages else {}
    content = last.get("content")
    if last.get("role") == "user" and isinstance(content, str):
        if dumps(schema) in content:  # a re-ask already quotes it
            return messages
        return [*messages[:-1], {**last, "content": f"{content}\n\n{_schema_note(schema)}"}]
    return [*messages, {"role": "user", "content": _schema_note(schema)}]


def _batch_label(specs: Iterable[RequestSpec]) -> str:
    names = sorted({s.prompt_name for s in specs if s.prompt_name})
    return "+".join(names) or "llm"


# ---- entry points --------------------------------------------------------------------------------


async def arun_requests(specs: Sequence[RequestSpec], config: EngineConfig, stats: RunStats | None = None) -> list[Result]:
    return await Engine(config, stats).run(specs)


def run_requests(specs: Sequence[RequestSpec], config: EngineConfig, stats: RunStats | None = None) -> list[Result]:
    """Answer every spec (cache first, then the endpoint); results in input order. `stats` is updated in place."""
    return asyncio.run(arun_requests(specs, config, stats))


def estimate(specs: Sequence[RequestSpec], config: EngineConfig) -> Estimate:
    """Dry run: how many requests would go out and roughly how many input tokens, without calling anything."""
    unique = {s.key(): s for s in specs}
    cached: set[str] = set()
    path = config.cache_path()
    if not config.no_cache and path.exists():
        cache = Cache(path)
        try:
            cached = set(cache.get_many(unique))
        finally:
            cache.close()
    todo = [s for k, s in unique.items() if k not in cached]
    return Estimate(
        requests=len(todo),
        unique=len(unique),
        cached=len(cached),
        input_tokens=sum(s.estimated_input_tokens() for s in todo),
    )
