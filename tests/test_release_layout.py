"""Every command that reads a release opens it through builder.release.layout and fails with the same message."""

from __future__ import annotations

import pytest

from builder.errors import InputError
from builder.release.layout import MANIFEST, open_release


def _openers():
    from builder.audit.release import open_release as audit_open
    from builder.evaluate.run import load_release_split
    from builder.publish.hub import load_local_manifest, load_side
    from builder.train.baseline import load_splits

    return {
        "audit": audit_open,
        "evaluate": lambda p: load_release_split(p, "train"),
        "train": load_splits,
        "diff": lambda p: load_side(str(p)),
        "publish": load_local_manifest,
    }


@pytest.mark.parametrize("command", ["audit", "evaluate", "train", "diff", "publish"])
def test_a_folder_that_is_no_release_gets_the_one_message(tmp_path, command):
    (tmp_path / "data").mkdir()
    with pytest.raises(InputError, match=rf"^{tmp_path}: not a release directory \(no (data/train\.parquet|{MANIFEST})\)$"):
        _openers()[command](tmp_path)


def test_open_release_reads_the_manifest_and_names_what_is_missing(tmp_path):
    from publish_helpers import make_splits, write_test_release

    path = write_test_release(tmp_path, "1.0.0", make_splits())
    release = open_release(path, need_manifest=True)
    assert release.field("version") == "1.0.0" and release.split_path("test") == path / "data" / "test.parquet"
    assert sum(len(rows) for rows in release.load().values()) == 12
    with pytest.raises(InputError, match="field 'parent_version' is missing"):
        release.field("parent_version")
    (path / MANIFEST).unlink()
    assert open_release(path).manifest is None
    with pytest.raises(InputError, match=r"not a release directory \(no manifest.json\)"):
        open_release(path, need_manifest=True)
