"""Find the project's data files (schemas, prompts, configs, demo corpus) in a checkout or an installed wheel."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
_CHECKOUT = _PACKAGE.parent


def resource(relative: str) -> Path:
    """Path of e.g. 'schemas/clariedge.schema.json': the checkout's copy first, then the wheel's."""
    for base in (_CHECKOUT, _PACKAGE / "_assets"):
        candidate = base / relative
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"resource not found: {relative}")


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    return json.loads(resource(f"schemas/{name}").read_text(encoding="utf-8"))
