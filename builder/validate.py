"""Validate stage: every record against `schemas/clariedge.schema.json`; failures go to quarantine."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

import jsonschema_rs
from jsonschema import Draft202012Validator

from builder.resources import load_schema
from builder.rows import Quarantined


@lru_cache(maxsize=1)
def validator() -> Draft202012Validator:
    schema = load_schema("clariedge.schema.json")
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@lru_cache(maxsize=1)
def fast_validator():
    """Rust validator for the common case (valid records); python-jsonschema explains the failures."""
    return jsonschema_rs.validator_for(load_schema("clariedge.schema.json"))


def problems(record: dict[str, Any]) -> list[dict[str, str]]:
    """Schema violations of one record as {pointer, message}, deepest first."""
    out = []
    for err in sorted(validator().iter_errors(record), key=lambda e: (-len(e.absolute_path), e.message)):
        pointer = "/" + "/".join(str(p) for p in err.absolute_path)
        out.append({"pointer": pointer, "message": err.message})
    return out


def validate(records: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Quarantined]]:
    """Split records into (valid, quarantined); a quarantine row names the id, JSON pointer and message."""
    valid, quarantined = [], []
    fast = fast_validator()
    for record in records:
        found = [] if fast.is_valid(record) else problems(record) or [
            {"pointer": "/", "message": "rejected by the schema (jsonschema-rs), no detail from jsonschema"}
        ]
        if found:
            quarantined.append(Quarantined(id=record.get("id"), errors=found, record=record))
        else:
            valid.append(record)
    return valid, quarantined
