"""Semantic version bumps: computed from the previous release and checked against the changes."""

from __future__ import annotations

import copy

import pytest

from builder.errors import InputError
from builder.release.versioning import bump_version, decide_version, next_version, schema_sha256
from publish_helpers import make_record, make_splits, relabel, write_test_release

SHA = schema_sha256()


@pytest.fixture
def previous():
    return {"version": "1.2.3", "schema_sha256": SHA}, make_splits(12)


def test_first_release_is_1_0_0():
    assert next_version(None, None, make_splits(3), SHA, "minor") == "1.0.0"


def test_added_records_need_minor(previous):
    manifest, old = previous
    new = copy.deepcopy(old)
    new["train"].append(make_record(50))
    assert next_version(manifest, old, new, SHA, "minor") == "1.3.0"
    with pytest.raises(InputError, match=r"--bump patch refused: since 1.2.3, 1 records added, 0 removed.*calls for --bump minor"):
        next_version(manifest, old, new, SHA, "patch")
    with pytest.raises(InputError, match=r"--bump major refused.*calls for --bump minor"):
        next_version(manifest, old, new, SHA, "major")


def test_removed_or_moved_records_need_minor(previous):
    manifest, old = previous
    removed = copy.deepcopy(old)
    removed["test"].pop()
    assert next_version(manifest, old, removed, SHA, "minor") == "1.3.0"
    moved = copy.deepcopy(old)
    moved["validation"].append(moved["train"].pop())
    with pytest.raises(InputError, match="0 records added, 0 removed, 1 moved between splits"):
        next_version(manifest, old, moved, SHA, "patch")


def test_label_and_text_fixes_are_a_patch(previous):
    manifest, old = previous
    new = copy.deepcopy(old)
    new["test"][0] = relabel(new["test"][0])
    next(r for r in new["validation"] if r["documents"])["documents"][0]["text"] = "A corrected passage."
    assert next_version(manifest, old, new, SHA, "patch") == "1.2.4"
    with pytest.raises(InputError, match=r"1 records relabelled, 1 with text fixes, which calls for --bump patch"):
        next_version(manifest, old, new, SHA, "minor")


def test_schema_change_needs_major(previous):
    manifest, old = previous
    manifest = {**manifest, "schema_sha256": "0" * 64}
    assert next_version(manifest, old, old, SHA, "major") == "2.0.0"
    with pytest.raises(InputError, match="the record schema changed"):
        next_version(manifest, old, old, SHA, "minor")


def test_nothing_changed_is_refused(previous):
    manifest, old = previous
    with pytest.raises(InputError, match="nothing changed since 1.2.3"):
        next_version(manifest, old, copy.deepcopy(old), SHA, "patch")


def test_bad_inputs_name_the_field(previous):
    manifest, old = previous
    with pytest.raises(InputError, match="field schema_sha256 is missing"):
        next_version({"version": "1.0.0"}, old, old, SHA, "patch")
    with pytest.raises(InputError, match="field version: '1.0' is not a semantic version"):
        next_version({"version": "1.0", "schema_sha256": SHA}, old, old, SHA, "patch")
    with pytest.raises(InputError, match="'huge' is not one of major, minor, patch"):
        next_version(manifest, old, old, SHA, "huge")


def test_bump_version():
    assert [bump_version("1.9.9", b) for b in ("major", "minor", "patch")] == ["2.0.0", "1.10.0", "1.9.10"]


def test_decide_version_uses_the_newest_release_on_disk(tmp_path):
    old = make_splits(12)
    write_test_release(tmp_path / "dist", "1.0.0", make_splits(6))
    write_test_release(tmp_path / "dist", "1.10.0", old)  # newest by semver, not by string order
    new = copy.deepcopy(old)
    new["train"].append(make_record(77))
    decision = decide_version(tmp_path / "dist" / "demo", "1.0.0", new, "minor")
    assert (decision.version, decision.previous) == ("1.11.0", "1.10.0")
    assert decision.changelog.startswith("### v1.11.0\n\nCompared with v1.10.0: 1 added, 0 removed")
    assert decide_version(tmp_path / "dist" / "demo", "3.0.0", new, None).version == "3.0.0"
    assert decide_version(tmp_path / "empty", "3.0.0", new, "patch").version == "1.0.0"
