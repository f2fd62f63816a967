"""The `Prediction` a labeller returns and the parser from model text (`{"clarification": ...}` or CLEAR).

Unparseable output is not an exception: it becomes `needs_clarification=None` with an `error`,
and counts as wrong in the metrics.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from builder.record import CLEAR


@dataclass
class Prediction:
    id: str
    needs_clarification: bool | None  # None = unparseable output (counts as wrong)
    clarification: str | None  # the question, or None for CLEAR
    raw: str  # raw model output
    error: str | None = None  # parse error, reported

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@runtime_checkable
class Predictor(Protocol):
    name: str

    def predict(self, records: list[dict]) -> list[Prediction]: ...


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_model_output(text: str) -> tuple[bool | None, str | None, str | None]:
    """(needs_clarification, question, error) from '{"clarification": "..."}' or CLEAR.

    Accepts the exact target JSON, the same inside a code fence or with chatter around the
    object, and a bare `CLEAR`. Anything else is an error, never a guess.
    """
    if text is None:
        return None, None, "no output"
    stripped = text.strip()
    if not stripped:
        return None, None, "empty output"
    if stripped.strip("\"'.` ").upper() == CLEAR:
        return False, None, None
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    candidates = [stripped]
    found = _OBJECT.search(stripped)
    if found and found.group(0) != stripped:
        candidates.append(found.group(0))
    for candidate in candidates:
        try:
            obj = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if not isinstance(obj, dict) or "clarification" not in obj:
            return None, None, f"JSON without a 'clarification' key: {_clip(stripped)}"
        value = obj["clarification"]
        if not isinstance(value, str) or not value.strip():
            return None, None, f"'clarification' is not a non-empty string: {_clip(stripped)}"
        if value.strip().upper() == CLEAR:
            return False, None, None
        return True, value.strip(), None
    return None, None, f"not JSON and not CLEAR: {_clip(stripped)}"


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def prediction_from_output(record_id: str, text: str) -> Prediction:
    needs, question, error = parse_model_output(text)
    return Prediction(id=record_id, needs_clarification=needs, clarification=question, raw=text or "", error=error)
