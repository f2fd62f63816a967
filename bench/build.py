"""Wall time and peak RSS of a full build, each run in a fresh process.

    python bench/build.py                       # demo corpus and, when ../shared exists, MTRAG
    python bench/build.py --config configs/mtrag.yaml --runs 3
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MTRAG = ROOT / "configs" / "mtrag.yaml"
SHARED = ROOT.parent / "shared" / "data" / "mtrag"


def one_build(config: Path | None, out: Path) -> tuple[float, float, dict]:
    args = [sys.executable, "-c", "from builder.cli import main; main()", "build", "--out", str(out)]
    if config:
        args += ["--config", str(config)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(done.stderr)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    release = Path(done.stdout.strip().splitlines()[-1])
    manifest = json.loads((release / "manifest.json").read_text())
    return wall, max(peak_kb, before) / 1024, manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, action="append", help="config(s) to build; default: demo and MTRAG")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    configs = args.config or [None] + ([MTRAG] if SHARED.exists() else [])
    print(f"{'build':<16} {'run':>3} {'wall s':>8} {'peak RSS MB':>12} {'records':>8} {'goal':>22}")
    for config in configs:
        name = "demo" if config is None else config.stem
        for run in range(1, args.runs + 1):
            with tempfile.TemporaryDirectory() as tmp:
                wall, rss, manifest = one_build(config, Path(tmp))
            goal = "< 20 s, < 1024 MB" if name == "mtrag" else ""
            print(f"{name:<16} {run:>3} {wall:>8.2f} {rss:>12.0f} {manifest['counts']['released']:>8} {goal:>22}")
    print("(peak RSS: ru_maxrss of the largest build process so far; each build is a fresh `clariedge build` process)")


if __name__ == "__main__":
    main()
