"""External evaluation sets as ClariEdge record dicts: MTRAG-UN, Abg-CoQA, ClariQ, CLAMBER.

Records follow the release layout so every predictor and metric works unchanged. They are not
full schema records: benchmarks rarely list interpretations, so positives may have fewer than two.
`load_benchmark` returns the records plus `info` (counts, what was dropped and why).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builder.errors import InputError

BENCHMARKS = ("mtragun", "abgcoqa", "clariq", "clamber")


@dataclass
class Benchmark:
    name: str
    path: Path
    records: list[dict[str, Any]]
    info: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        positives = sum(r["needs_clarification"] for r in self.records)
        return {"benchmark": self.name, "path": str(self.path), "n": len(self.records), "positives": positives, **self.info}


def load_benchmark(name: str, path: str | Path, *, build_input: str | Path | None = None) -> Benchmark:
    path = Path(path)
    if name == "mtragun":
        from builder.eval_sets.mtragun import load

        records, info = load(path, build_input=build_input)
    elif name == "abgcoqa":
        from builder.eval_sets.abgcoqa import load

        records, info = load(path)
    elif name == "clariq":
        from builder.eval_sets.clariq import load

        records, info = load(path)
    elif name == "clamber":
        from builder.eval_sets.clamber import load

        records, info = load(path)
    else:
        raise InputError(f"--benchmark {name!r}: unknown; choose one of {', '.join(BENCHMARKS)}")
    seen: dict[str, int] = {}
    for i, record in enumerate(records):
        if record["id"] in seen:
            raise InputError(f"{path}: items {seen[record['id']] + 1} and {i + 1} give the same record {record['id']} "
                             "(duplicate example)")
        seen[record["id"]] = i
    return Benchmark(name, path, records, info)
