"""Deprecated alias of `builder.eval_sets` (renamed so it is not confused with the speed scripts in `bench/`).

`import builder.benchmarks.mtragun` and `from builder.benchmarks import load_benchmark` keep working for one
minor version. TODO(coordinator): drop once nothing imports builder.benchmarks (bench/transfer.py).
"""

import sys
import warnings

from builder.eval_sets import BENCHMARKS, Benchmark, load_benchmark
from builder.eval_sets import abgcoqa, clamber, clariq, common, mtragun

warnings.warn("builder.benchmarks is renamed builder.eval_sets", DeprecationWarning, stacklevel=2)
for _module in (abgcoqa, clamber, clariq, common, mtragun):
    sys.modules[f"{__name__}.{_module.__name__.rpartition('.')[2]}"] = _module

__all__ = ["BENCHMARKS", "Benchmark", "load_benchmark", "abgcoqa", "clamber", "clariq", "common", "mtragun"]
