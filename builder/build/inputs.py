"""The build's input: which file, under which source name, read into conversations."""

from __future__ import annotations

from pathlib import Path

from builder.config import BuildConfig
from builder.conversation import Conversation
from builder.ingest import demo_corpus, ingest


def input_path(config: BuildConfig) -> Path:
    return Path(config.input.path) if config.input.path else demo_corpus()


def source_name(config: BuildConfig, fmt_path: Path) -> str:
    if config.input.source_dataset:
        return config.input.source_dataset
    return "mtrag" if config.input.format == "mtrag" or fmt_path.suffix == ".json" else "clariedge-demo" if not config.input.path else fmt_path.stem


def read_input(config: BuildConfig) -> list[Conversation]:
    tasks = Path(config.input.retrieval_tasks) if config.input.retrieval_tasks else None
    return ingest(input_path(config), config.input.format, tasks)
