"""Semantic versions for releases, computed and checked against the previous release.

major: the record schema changed; minor: records added, removed or moved between splits;
patch: only label or text fixes on the same records (matched by id).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from builder.errors import InputError
from builder.io import dumps
from builder.publish.diff import ReleaseDiff, diff_splits
from builder.resources import load_schema

BUMPS = ("major", "minor", "patch")
FIRST_VERSION = "1.0.0"
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


def schema_sha256() -> str:
    """Fingerprint of the record schema; releases store it as manifest["schema_sha256"]."""
    return hashlib.sha256(dumps(load_schema("clariedge.schema.json")).encode("utf-8")).hexdigest()


def parse_version(version: str, where: str = "version") -> tuple[int, int, int]:
    match = _SEMVER.match(str(version))
    if not match:
        raise InputError(f"{where}: {version!r} is not a semantic version MAJOR.MINOR.PATCH")
    return int(match[1]), int(match[2]), int(match[3])


def bump_version(version: str, bump: str) -> str:
    major, minor, patch = parse_version(version)
    if bump == "major":
        return f"{major + 1}.0.0"
    if bump == "minor":
        return f"{major}.{minor + 1}.0"
    if bump == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise InputError(f"--bump: {bump!r} is not one of {', '.join(BUMPS)}")


def _as_splits(records: Any) -> dict[str, list[dict[str, Any]]]:
    return records if isinstance(records, dict) else {"all": list(records)}


def required_bump(
    previous_manifest: dict[str, Any], previous_records: Any, new_records: Any, new_schema_sha: str
) -> tuple[str | None, str, ReleaseDiff]:
    """(bump the changes need or None when nothing changed, the reason in words, the diff)."""
    diff = diff_splits(_as_splits(previous_records), _as_splits(new_records), "previous", "new")
    t = diff.totals()
    old_sha = previous_manifest.get("schema_sha256")
    if not old_sha:
        raise InputError("previous manifest.json: field schema_sha256 is missing, so a schema change cannot be ruled out")
    if old_sha != new_schema_sha:
        return "major", f"the record schema changed (sha256 {old_sha[:12]} → {new_schema_sha[:12]})", diff
    if t["added"] or t["removed"] or t["moved"]:
        return "minor", f"{t['added']} records added, {t['removed']} removed, {t['moved']} moved between splits", diff
    if t["relabelled"] or t["text_changed"]:
        return "patch", f"{t['relabelled']} records relabelled, {t['text_changed']} with text fixes", diff
    return None, "no record differs", diff


def next_version(
    previous_manifest: dict[str, Any] | None,
    previous_records: Any,
    new_records: Any,
    new_schema_sha: str,
    bump: str,
) -> str:
    """The next version for `bump`, after checking that `bump` is the one the changes call for.

    Records are split -> list of record dicts (or one flat list). With no previous release the answer is 1.0.0.
    Raises InputError with the reason when the bump does not match the changes or nothing changed.
    """
    if bump not in BUMPS:
        raise InputError(f"--bump: {bump!r} is not one of {', '.join(BUMPS)}")
    if previous_manifest is None:
        return FIRST_VERSION
    previous = previous_manifest.get("version")
    parse_version(previous, "previous manifest.json: field version")
    needed, reason, _ = required_bump(previous_manifest, previous_records, new_records, new_schema_sha)
    if needed is None:
        raise InputError(f"--bump {bump} refused: nothing changed since {previous} ({reason}); no new version is needed")
    if needed != bump:
        raise InputError(f"--bump {bump} refused: since {previous}, {reason}, which calls for --bump {needed}")
    return bump_version(previous, bump)
