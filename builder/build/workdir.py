"""The work directory of one build: every stage file under a named field, and where it goes by default."""

from __future__ import annotations

from pathlib import Path

from builder.config import BuildConfig
from builder.errors import InputError


class WorkDir:
    """The stage files inside one work directory, one named field each (a typo is an AttributeError)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.conversations = self.root / "conversations.jsonl"
        self.turns = self.root / "turns.jsonl"
        self.candidates = self.root / "candidates.jsonl"
        self.rejected = self.root / "rejected.jsonl"
        self.validated = self.root / "validated.jsonl"
        self.quarantine = self.root / "quarantine.jsonl"
        self.deduplicated = self.root / "deduplicated.jsonl"
        self.duplicates = self.root / "duplicates.jsonl"
        self.split = self.root / "split.jsonl"
        self.split_dropped = self.root / "split_dropped.jsonl"
        self.split_report = self.root / "split_report.json"
        self.llm_requests = self.root / "llm_requests.jsonl"
        self.llm_flagged = self.root / "llm_flagged.jsonl"
        self.llm_stats = self.root / "llm_stats.json"
        self.llm_failures = self.root / "llm_failures.json"

    def need(self, path: Path, stage: str) -> Path:
        if not path.exists():
            raise InputError(f"{path}: not found; run `clariedge {stage}` first (or `clariedge build`)")
        return path


Work = WorkDir  # the name it had in builder.pipeline


def default_work_dir(config: BuildConfig, out: Path) -> Path:
    """OUT/.work/<name>/<version>: where the stage files go unless --work says otherwise."""
    return Path(out) / ".work" / config.name / config.version
