"""Deprecated alias: release versions live in `builder.release.versioning`.

TODO(coordinator): drop once builder/pipeline.py imports builder.release.versioning.
"""

from builder.release.versioning import (
    BUMPS,
    FIRST_VERSION,
    VersionDecision,
    bump_version,
    decide_version,
    latest_release,
    next_version,
    parse_version,
    required_bump,
    schema_sha256,
)

__all__ = ["BUMPS", "FIRST_VERSION", "VersionDecision", "bump_version", "decide_version", "latest_release",
           "next_version", "parse_version", "required_bump", "schema_sha256"]
