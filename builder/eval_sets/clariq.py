"""ClariQ (Aliannejadi et al., 2020): `train.tsv` / `dev.tsv`, one row per (topic, clarifying question).

One record per topic: `clarification_need` 1-4, with 3 or 4 counting as needs clarification;
the reference is the topic's first non-empty `question`; the distinct `facet_desc` values (when the
column exists) are the interpretations. Single turn, no documents (pre-retrieval).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from builder.eval_sets.common import make_record
from builder.errors import InputError
from builder.io import read_text

REQUIRED = ("topic_id", "initial_request", "clarification_need", "question")
NEED_THRESHOLD = 3


def load(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = list(csv.DictReader(read_text(path).splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise InputError(f"{path}: no rows")
    missing = [c for c in REQUIRED if c not in rows[0]]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (ClariQ tsv needs {', '.join(REQUIRED)})")
    topics: dict[str, list[tuple[int, dict]]] = {}
    for lineno, row in enumerate(rows, start=2):  # line 1 is the header
        topics.setdefault(row["topic_id"], []).append((lineno, row))
    records = [_record(path, topic, group) for topic, group in topics.items()]
    return records, {"rows": len(rows), "topics": len(topics)}


def _record(path: Path, topic: str, group: list[tuple[int, dict]]) -> dict[str, Any]:
    lineno, first = group[0]
    for line, row in group[1:]:
        for key in ("initial_request", "clarification_need"):
            if row[key] != first[key]:
                raise InputError(f"{path}:{line}: topic {topic}: '{key}' differs from line {lineno}")
    try:
        need = int(first["clarification_need"])
    except (TypeError, ValueError):
        need = 0
    if need not in (1, 2, 3, 4):
        raise InputError(f"{path}:{lineno}: topic {topic}: 'clarification_need' is {first['clarification_need']!r}, expected 1-4")
    needs = need >= NEED_THRESHOLD
    questions = [row["question"].strip() for _, row in group if (row.get("question") or "").strip()]
    if needs and not questions:
        raise InputError(f"{path}:{lineno}: topic {topic}: needs clarification but no row has a 'question'")
    facets = []
    for _, row in group:
        facet = (row.get("facet_desc") or "").strip()
        if facet and facet not in facets:
            facets.append(facet)
    return make_record(
        source="clariq",
        conversation_id=str(topic),
        turn=1,
        domain="clariq",
        history=[],
        query=first["initial_request"].strip(),
        documents=[],
        needs_clarification=needs,
        clarification=questions[0] if needs else None,
        interpretations=facets,
    )
