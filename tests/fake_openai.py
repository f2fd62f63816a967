"""A small OpenAI-compatible chat server for tests and the bench (127.0.0.1, real sockets).

Replies are built from the request's JSON Schema (response_format, or a schema quoted in a system
message when json_schema is rejected): `examples` are used when given, otherwise deterministic
filler. Faults are injected per request by markers in the first user message:
  [[429:N]] [[500:N]] [[slow:N]] [[badjson:N]] [[invalid:N]]  first N attempts misbehave
  [[length]] [[filter]]                                       always that finish_reason
  [[ctx400]]                                                  always a 400 context-length error
Server-wide switches: latency, holding (answer nothing until released), fail_all (that status for every
request), reject_json_schema: "vllm" (400 naming response_format), "llamacpp" (500 with the pydantic
message llama-cpp-python's server sends for a json_schema response_format), or False; reject_json_object.

Run standalone: python tests/fake_openai.py --latency 0.2   (prints "PORT <n>" on stdout)
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import hashlib
import json
import re
import threading
import time
from typing import Any, Callable

from aiohttp import web

_MARK = re.compile(r"\[\[(\w+)(?::(\d+))?\]\]")
_SCHEMA_IN_TEXT = re.compile(r"JSON Schema[^\n]*\n(\{.*\})\s*$", re.DOTALL)
_NOTE = "\n\nReply with only a JSON object"  # the engine's schema note, appended to the user turn
# What llama-cpp-python 0.3.36's server answers (HTTP 500) to response_format type json_schema, as measured.
LLAMACPP_JSON_SCHEMA_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input "
    "should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}"
    "\n\n  File \"llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions"
)
CONTEXT_400 = ("This model's maximum context length is 2048 tokens. However, you requested 2600 tokens "
               "(2088 in the messages, 512 in the completion). Please reduce the length of the messages or completion.")


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def sample(schema: dict, seed: str, path: str = "value") -> Any:
    """A deterministic instance of `schema` (the subset of JSON Schema our prompts use)."""
    if "examples" in schema and schema["examples"]:
        return schema["examples"][_h(seed + path) % len(schema["examples"])]
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][_h(seed + path) % len(schema["enum"])]
    for combo in ("anyOf", "oneOf"):
        if combo in schema:
            return sample(schema[combo][0], seed, path)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {k: sample(v, seed, f"{path}.{k}") for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        n = max(schema.get("minItems", 1), min(2, schema.get("maxItems", 2)))
        return [sample(schema.get("items") or {"type": "string"}, seed, f"{path}[{i}]") for i in range(n)]
    if kind == "string":
        text = f"{path.split('.')[-1]} {_h(seed + path) % 10000}"
        return text.ljust(schema.get("minLength", 0), "x")
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 0.5))
    if kind == "boolean":
        return bool(_h(seed + path) % 2)
    return None


class FakeOpenAI:
    def __init__(self, latency: float = 0.0, slow_seconds: float = 5.0,
                 responder: Callable[[dict], str | None] | None = None):
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.responder = responder  # optional: body -> content, to script realistic replies
        self.reject_json_schema: str | bool = False  # "vllm" (or True) | "llamacpp" | False
        self.reject_json_object = False  # 400 naming response_format for type json_object too
        self.fail_all: int | None = None  # every request gets this status
        self.holding = False
        self.retry_after = "1"
        self.api_key: str | None = None  # when set, other keys get 401
        self.reset()
        self._thread: threading.Thread | None = None
        self.port = 0

    def reset(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.log: list[str] = []  # tag of every request received
        self.answered: list[str] = []  # tag of every 200 fully written
        self.attempts: collections.Counter[str] = collections.Counter()
        self.bodies: list[dict] = []
        self.times: list[float] = []  # arrival time (monotonic) of every request
        self.auth: set[str] = set()  # Authorization headers seen

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # ---- request handling --------------------------------------------------------------

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.times.append(time.monotonic())
        self.auth.add(request.headers.get("Authorization", ""))
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "invalid api key")
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._chat(request, body)
        finally:
            self.in_flight -= 1

    async def _chat(self, request: web.Request, body: dict) -> web.StreamResponse:
        users = [m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user"]
        users[:1] = [u.split(_NOTE)[0] for u in users[:1]]  # the same request, whatever mode it was asked in
        first, last = (users[0], users[-1]) if users else ("", "")
        tag = last if len(users) == 1 else f"{first} #reask"
        self.log.append(tag)
        self.bodies.append(body)
        n = self.attempts[first] = self.attempts[first] + 1
        marks = {m.group(1): int(m.group(2) or 0) for m in _MARK.finditer(first)}
        while self.holding:
            await asyncio.sleep(0.01)
        if self.latency:
            await asyncio.sleep(self.latency)
        fmt = body.get("response_format") or {}
        if self.fail_all is not None:
            return _error(self.fail_all, f"fake server error {self.fail_all}: the model is not loaded")
        if self.reject_json_schema == "llamacpp" and fmt.get("type") == "json_schema":
            return _error(500, LLAMACPP_JSON_SCHEMA_500, kind="internal_server_error")
        if self.reject_json_schema and fmt.get("type") == "json_schema":
            return _error(400, "response_format json_schema is not supported by this server")
        if self.reject_json_object and fmt.get("type") == "json_object":
            return _error(400, "'response_format' of type 'json_object' is not supported with this model")
        if "ctx400" in marks:
            return _error(400, CONTEXT_400, kind="invalid_request_error")
        if n <= marks.get("429", 0):
            return _error(429, "rate limited", {"Retry-After": self.retry_after})
        if n <= marks.get("500", 0):
            return _error(500, "internal error")
        if n <= marks.get("slow", 0):
            await asyncio.sleep(self.slow_seconds)
        finish = "length" if "length" in marks else "content_filter" if "filter" in marks else "stop"
        content = self._content(body, first, n, marks)
        payload = {
            "id": f"chatcmpl-{self.requests}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
            "usage": {"prompt_tokens": len(json.dumps(body["messages"])) // 4, "completion_tokens": len(content) // 4,
                      "total_tokens": len(json.dumps(body["messages"])) // 4 + len(content) // 4},
        }
        response = web.Response(body=json.dumps(payload).encode(), content_type="application/json")
        try:
            await response.prepare(request)
            await response.write_eof()
        except ConnectionError:  # the client gave up (timeout, kill): nothing was delivered
            return response
        self.answered.append(tag)
        return response

    def _content(self, body: dict, first: str, n: int, marks: dict[str, int]) -> str:
        if n <= marks.get("badjson", 0):
            return '{"answer": "unterminated'
        if self.responder is not None:
            scripted = self.responder(body)
            if scripted is not None:
                return scripted
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        if schema is None:
            for m in body["messages"]:
                found = _SCHEMA_IN_TEXT.search(m.get("content") or "") if m.get("role") in ("system", "user") else None
                if found:
                    schema = json.loads(found.group(1))
        if schema is None:
            return f"echo: {first}"
        obj = sample(schema, first)
        if n <= marks.get("invalid", 0):
            return json.dumps({"unexpected": True})
        if not body.get("response_format"):
            return f"Sure! Here is the JSON:\n```json\n{json.dumps(obj)}\n```"  # prose around it, as models do
        return json.dumps(obj)

    # ---- lifecycle ---------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat)
        return app

    def start(self) -> "FakeOpenAI":
        """Serve from a background thread (tests)."""
        ready = threading.Event()

        def serve() -> None:
            self.loop = asyncio.new_event_loop()
            runner = web.AppRunner(self.app(), access_log=None)
            self.loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
            self.loop.run_until_complete(site.start())
            self.port = site._server.sockets[0].getsockname()[1]
            self._runner = runner
            ready.set()
            self.loop.run_forever()
            self.loop.run_until_complete(runner.cleanup())

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._thread:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)


def _error(status: int, message: str, headers: dict | None = None, kind: str = "fake") -> web.Response:
    body = {"error": {"message": message, "type": kind, "code": status}}
    return web.Response(status=status, body=json.dumps(body).encode(), content_type="application/json", headers=headers)


async def _stats(server: FakeOpenAI, request: web.Request) -> web.Response:
    if request.query.get("reset"):
        server.reset()
    return web.json_response({"requests": server.requests, "max_in_flight": server.max_in_flight,
                              "unique": len(set(server.log)), "answered": len(server.answered)})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    server = FakeOpenAI(latency=args.latency)

    async def run() -> None:
        app = server.app()
        app.router.add_get("/stats", lambda r: _stats(server, r))  # the bench reads max in-flight here
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", args.port, backlog=4096)
        await site.start()
        print("PORT", site._server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Event().wait()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
