"""Deprecated: the build moved to `builder.build` (steps take a Context now); this module only re-exports it."""

from builder.build import *  # noqa: F401,F403
from builder.build.inputs import input_path, read_input, source_name  # noqa: F401
from builder.build.llm import (check_llm_failures, llm_dry_run, llm_manifest, llm_methods,  # noqa: F401
                               llm_run)
from builder.build.manifest import account, code_hash, config_for_manifest, stage_counts, statistics  # noqa: F401
