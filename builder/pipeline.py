"""Deprecated: the build moved to `builder.build` (steps, workdir, llm, manifest, report); this re-exports it."""

from builder.build import *  # noqa: F401,F403
from builder.build import __all__  # noqa: F401
