"""Turn reply text into a validated object. Runs after the cache, so a parser change never re-pays."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

import jsonschema

from builder.llm.spec import canonical

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


class ParseError(ValueError):
    pass


def extract_json(text: str) -> Any:
    """The JSON object in `text`: the whole text, a fenced block, or the first decodable {...} in prose."""
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except ValueError:
            pass
    for match in re.finditer(r"[{\[]", text):
        try:
            obj, _ = _DECODER.raw_decode(text, match.start())
            return obj
        except ValueError:
            continue
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
    obj = extract_json(text)
    error = jsonschema.exceptions.best_match(_validator(canonical(schema)).iter_errors(obj))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        raise ParseError(f"schema violation at {where}: {error.message[:200]}")
    return obj
