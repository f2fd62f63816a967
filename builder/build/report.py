"""What `builder.build.build` hands back: the figures a caller shows, so nobody reads the release back to show them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class BuildReport:
    release: Path  # OUT/<name>/<version>
    name: str
    version: str
    counts: dict[str, int]  # records per stage, as in the manifest's "counts"
    splits: dict[str, int]  # released records per split
    composition: dict[str, Any]  # the manifest's "statistics": label, setting, domain and category shares
    leakage: dict[str, Any]  # the manifest's "leakage": conversations and near-duplicate queries across splits
    llm_run: dict[str, Any] | None = None  # this run's LLM figures (cache hits, attempts, tokens) when llm: ran

    @classmethod
    def of(cls, release: Path, manifest: dict[str, Any], llm_run: dict[str, Any] | None = None) -> "BuildReport":
        return cls(release=Path(release), name=manifest["name"], version=manifest["version"],
                   counts=dict(manifest["counts"]), splits=dict(manifest["splits"]),
                   composition=dict(manifest["statistics"]), leakage=dict(manifest["leakage"]),
                   llm_run=None if llm_run is None else dict(llm_run))
