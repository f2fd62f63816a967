"""Turn reply text into a validated object. Runs after the cache, so a parser change never re-pays."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Iterator

import jsonschema

from builder.io import dumps

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_OPEN = re.compile(r"[{\[]")
_DECODER = json.JSONDecoder()


class ParseError(ValueError):
    pass


def json_candidates(text: str) -> Iterator[Any]:
    """Every JSON value in `text`, most deliberate first: the whole text, fenced blocks, then each decodable
    {...} or [...] in prose, by position (nested ones included)."""
    text = text.strip()
    try:
        yield json.loads(text)
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            yield json.loads(block.strip())
        except ValueError:
            pass
    for match in _OPEN.finditer(text):
        try:
            yield _DECODER.raw_decode(text, match.start())[0]
        except ValueError:
            continue


def extract_json(text: str, schema: dict | None = None) -> Any:
    """The first JSON value in `text` that validates against `schema` (any JSON value when schema is None).
    When none validates, the first one found, so the caller reports why it does not fit."""
    validator = _validator(dumps(schema)) if schema is not None else None
    first: list[Any] = []
    for obj in json_candidates(text):
        if validator is None or validator.is_valid(obj):
            return obj
        if not first:
            first.append(obj)
    if first:
        return first[0]
    raise ParseError("no JSON object in the reply")


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def parse_reply(text: str, schema: dict | None) -> Any:
    """Parse and validate; raises ParseError with a short, model-readable reason."""
    if schema is None:
        return text
    obj = extract_json(text, schema)
    error = jsonschema.exceptions.best_match(_validator(dumps(schema)).iter_errors(obj))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise ParseError(f"schema violation at {where}: {error.message[:200]}")
    return obj
