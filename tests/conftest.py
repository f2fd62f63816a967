"""Shared fixtures: the repo root, ../shared when present, and one demo build per test session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
MTRAG = SHARED / "data" / "mtrag"

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


@pytest.fixture(scope="session", autouse=True)
def _isolated_hf_cache(tmp_path_factory):
    """`datasets` keys its cache of a local release on the folder name and configs, not the content:
    each test session gets its own cache so a rebuilt release is never read stale."""
    path = tmp_path_factory.mktemp("hf-datasets-cache")
    old = os.environ.get("HF_DATASETS_CACHE")
    os.environ["HF_DATASETS_CACHE"] = str(path)
    import datasets.config

    datasets.config.HF_DATASETS_CACHE = path
    yield
    if old is None:
        os.environ.pop("HF_DATASETS_CACHE", None)
    else:
        os.environ["HF_DATASETS_CACHE"] = old


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `clariedge` as a user would, in a subprocess."""
    return subprocess.run(
        [sys.executable, "-c", "from builder.cli import main; main()", *args],
        cwd=cwd or ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=600,
    )


needs_mtrag = pytest.mark.skipif(not (MTRAG / "conversations" / "conversations.json").exists(), reason="../shared/data/mtrag absent")


@pytest.fixture(scope="session")
def demo_release(tmp_path_factory) -> Path:
    """The embedded demo corpus built once with the default config."""
    from builder.config import BuildConfig
    from builder.build import build

    out = tmp_path_factory.mktemp("demo-build")
    release = build(BuildConfig(), out).release
    return release
