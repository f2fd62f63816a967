"""Retrieval over the pooled MTRAG passages and the retrieved_passages generator: wall time, peak RSS, output.

    python bench/corpus.py            # needs ../shared/data/mtrag; prints a table
"""

from __future__ import annotations

import os
import resource
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "mtrag"
sys.path.insert(0, str(ROOT))

from builder.ingest import ingest  # noqa: E402
from builder.record import Record  # noqa: E402
from builder.synthesize import assign_blocks, turn_contexts  # noqa: E402
from builder.synthesize.corpus import Corpus  # noqa: E402
from builder.synthesize.rules.retrieved_passages import RetrievedPassages  # noqa: E402


def main() -> int:
    if not SHARED.exists():
        print(f"skipped: {SHARED} not found")
        return 0
    convs = ingest(SHARED / "conversations" / "conversations.json", "mtrag", SHARED / "retrieval_tasks")
    start = time.perf_counter()
    corpus = Corpus.from_conversations(convs)
    t_index = time.perf_counter() - start
    contexts = turn_contexts(convs, assign_blocks(convs, 4, 13), 13, "mtrag", corpus)
    start = time.perf_counter()
    hits = sum(len(corpus.search(c.conv.domain, c.standalone, 5)) for c in contexts)
    t_search = time.perf_counter() - start
    start = time.perf_counter()
    outputs = [o for c in contexts for o in RetrievedPassages().generate(c)]
    t_gen = time.perf_counter() - start
    kinds = Counter(o.category if isinstance(o, Record) else "rejected" for o in outputs)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| passages | index | searches (k=5) | generator over turns | positives | hard negatives | rejected | peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {sum(corpus.size(d) for d in corpus.domains()):,} | {t_index:.2f} s | {len(contexts)} in {t_search:.2f} s "
          f"({hits} hits) | {len(contexts)} in {t_gen:.2f} s | {kinds['multiple_interpretations']} | {kinds['hard_negative']} "
          f"| {kinds['rejected']} | {rss:.0f} MB |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
