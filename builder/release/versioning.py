"""Semantic versions for releases, computed and checked against the previous release.

major: the record schema changed; minor: records added, removed or moved between splits;
patch: only label or text fixes on the same records (matched by id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.release.diff import ReleaseDiff, diff_splits
from builder.resources import resource

BUMPS = ("major", "minor", "patch")
FIRST_VERSION = "1.0.0"
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


def schema_sha256() -> str:
    """Fingerprint of the record schema, as the release stage stores it in manifest["schema_sha256"]."""
    from builder.release.writer import sha256_file

    return sha256_file(resource("schemas/clariedge.schema.json"))


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


@dataclass
class VersionDecision:
    version: str
    previous: str | None  # version of the previous release, when there is one
    changelog: str | None  # markdown `### v<version>` entry from the diff with it


def latest_release(release_root: Path) -> Path | None:
    """The newest `<release_root>/<version>/` holding a manifest.json, by semantic version."""
    found = []
    for d in Path(release_root).glob("*/manifest.json"):
        if _SEMVER.match(d.parent.name):
            found.append((parse_version(d.parent.name), d.parent))
    return max(found)[1] if found else None


def decide_version(
    release_root: Path, configured: str, splits: dict[str, list[dict[str, Any]]], bump: str | None
) -> VersionDecision:
    """Version of the release about to be written under `release_root` (= OUT/<name>).

    Without `bump` it is the configured version. With it, the newest release already in `release_root` is
    the previous one and the bump is checked against the changes (see `next_version`).
    """
    if bump is None:
        return VersionDecision(configured, None, None)
    from builder.io import read_json
    from builder.release.card import changelog_entry
    from builder.release.writer import load_release

    prev_dir = latest_release(release_root)
    if prev_dir is None:
        version = next_version(None, None, splits, schema_sha256(), bump)
        return VersionDecision(version, None, changelog_entry(version, None, splits))
    manifest = read_json(prev_dir / "manifest.json")
    previous = load_release(prev_dir)
    version = next_version(manifest, previous, splits, schema_sha256(), bump)
    return VersionDecision(version, manifest["version"], changelog_entry(version, (manifest["version"], previous), splits))
