"""Publishing against a fake Hub on 127.0.0.1, through the real huggingface_hub client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from builder.errors import InputError
from builder.publish.hub import PublishError, Retry, publish
from builder.record import SPLITS
from fake_hub import FakeHub
from publish_helpers import make_record, make_splits, relabel, write_test_release

TOKEN = "hf_TESTtokenDoNotLeak0123456789"
REPO = "clariedge-org/clariedge"
FAST = Retry(attempts=3, base_delay=0.01)
DATA = [f"data/{s}.parquet" for s in SPLITS] + [f"data/{st}/{s}.parquet" for st in ("pre_retrieval", "post_retrieval") for s in SPLITS]


@pytest.fixture
def hub(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    with FakeHub(TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


@pytest.fixture
def releases(tmp_path):
    """v1.0.0, and v1.1.0 with one record added and one relabelled."""
    s1 = make_splits(12)
    s2 = {k: list(v) for k, v in s1.items()}
    s2["train"].append(make_record(100, positive=True))
    s2["test"][0] = relabel(s2["test"][0])
    return write_test_release(tmp_path / "dist", "1.0.0", s1), write_test_release(tmp_path / "dist", "1.1.0", s2)


def files_at(hub: FakeHub, rev: str) -> dict[str, bytes]:
    return hub.repos[REPO].resolve(rev).files


def test_round_trip_two_versions_then_download_the_first(hub, releases, tmp_path):
    import datasets
    from huggingface_hub import snapshot_download

    r1, r2 = releases
    assert publish(r1, REPO, retry=FAST, log=lambda m: None).status == "published"
    assert publish(r2, REPO, retry=FAST, log=lambda m: None).status == "published"
    assert hub.commits_made(REPO) == 2
    assert set(hub.repos[REPO].tags) == {"v1.0.0", "v1.1.0"}
    assert json.loads(files_at(hub, "main")["manifest.json"]) == json.loads((r2 / "manifest.json").read_text())

    local = Path(snapshot_download(REPO, repo_type="dataset", revision="v1.0.0", endpoint=hub.url, cache_dir=tmp_path / "dl"))
    for rel in DATA + ["manifest.json"]:
        assert (local / rel).read_bytes() == (r1 / rel).read_bytes(), rel
    assert (local / "assets/label_distribution.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for config in ("default", "pre_retrieval"):
        got = datasets.load_dataset(str(local), config, cache_dir=str(tmp_path / "ds_cache"))
        want = datasets.load_dataset(str(r1), config, cache_dir=str(tmp_path / "ds_cache"))
        for split in want:
            assert got[split].to_list() == want[split].to_list(), (config, split)
    assert sum(len(got[s]) for s in got) == sum(1 for rows in make_splits(12).values() for r in rows if r["setting"] == "pre_retrieval")


def test_identical_republish_is_a_no_op(hub, releases):
    r1, _ = releases
    publish(r1, REPO, retry=FAST, log=lambda m: None)
    lines: list[str] = []
    result = publish(r1, REPO, retry=FAST, log=lines.append)
    assert result.status == "already_published"
    assert "already published with identical content" in lines[-1]
    assert hub.commits_made(REPO) == 1


def test_refuses_to_overwrite_a_tag_with_other_content(hub, releases, tmp_path):
    r1, _ = releases
    publish(r1, REPO, retry=FAST, log=lambda m: None)
    tagged = hub.repos[REPO].tags["v1.0.0"]
    other = write_test_release(tmp_path / "other", "1.0.0", make_splits(9))
    with pytest.raises(InputError, match="tag v1.0.0 already exists with different content.*data/"):
        publish(other, REPO, retry=FAST, log=lambda m: None)
    assert hub.repos[REPO].tags["v1.0.0"] == tagged
    assert hub.commits_made(REPO) == 1


def test_failed_commit_leaves_no_tag_and_a_rerun_finishes(hub, releases):
    r1, _ = releases
    hub.fail_commits = 100
    with pytest.raises(PublishError) as err:
        publish(r1, REPO, retry=FAST, log=lambda m: None)
    message = str(err.value)
    assert "failed while committing v1.0.0 after 3 attempt(s)" in message
    assert "Not published: the v1.0.0 files on main, tag v1.0.0" in message
    assert "Published so far: repo clariedge-org/clariedge exists" in message
    assert hub.repos[REPO].tags == {} and hub.commits_made(REPO) == 0

    hub.fail_commits = 0
    assert publish(r1, REPO, retry=FAST, log=lambda m: None).status == "published"
    assert hub.commits_made(REPO) == 1 and "v1.0.0" in hub.repos[REPO].tags


def test_lost_commit_answer_is_not_committed_twice(hub, releases):
    r1, _ = releases
    hub.fail_commits_after_apply = 1  # the commit lands, the client sees a 500
    lines: list[str] = []
    result = publish(r1, REPO, retry=FAST, log=lines.append)
    assert result.status == "published"
    assert hub.commits_made(REPO) == 1
    assert hub.repos[REPO].tags["v1.0.0"] == hub.repos[REPO].branches["main"]
    assert any("not committing again" in line for line in lines)


def test_lost_commit_answer_on_the_last_attempt_is_detected(hub, releases):
    r1, _ = releases
    hub.fail_commits_after_apply = 10
    assert publish(r1, REPO, retry=Retry(attempts=1), log=lambda m: None).status == "published"
    assert hub.commits_made(REPO) == 1 and "v1.0.0" in hub.repos[REPO].tags


def test_rerun_after_commit_without_tag_only_tags(hub, releases):
    r1, _ = releases
    hub.fail_tags = 100
    with pytest.raises(PublishError, match=r"Published so far: repo .* exists; commit \w+ with the v1.0.0 files on main\. Not published: tag v1.0.0\."):
        publish(r1, REPO, retry=FAST, log=lambda m: None)
    assert hub.commits_made(REPO) == 1 and hub.repos[REPO].tags == {}
    hub.fail_tags = 0
    result = publish(r1, REPO, retry=FAST, log=lambda m: None)
    assert result.status == "tagged_existing_commit"
    assert hub.commits_made(REPO) == 1 and hub.repos[REPO].tags["v1.0.0"] == hub.repos[REPO].branches["main"]


def test_dropped_connection_is_retried(hub, releases):
    r1, _ = releases
    hub.drop_commit_connections = 1
    lines: list[str] = []
    assert publish(r1, REPO, retry=FAST, log=lines.append).status == "published"
    assert any("retrying" in line and "network" in line for line in lines)
    assert hub.commits_made(REPO) == 1


def test_older_version_after_newer_is_refused(hub, releases):
    r1, r2 = releases
    publish(r2, REPO, retry=FAST, log=lambda m: None)
    with pytest.raises(InputError, match="main holds v1.1.0, newer than v1.0.0"):
        publish(r1, REPO, retry=FAST, log=lambda m: None)
    assert hub.commits_made(REPO) == 1


def test_no_token_is_a_clear_error(hub, releases, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    with pytest.raises(InputError, match="no Hugging Face token: set HF_TOKEN"):
        publish(releases[0], REPO, retry=FAST, log=lambda m: None)


def test_tampered_release_is_refused_before_upload(hub, releases):
    r1, _ = releases
    (r1 / "data/train.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match="data/train.parquet does not match its sha256"):
        publish(r1, REPO, retry=FAST, log=lambda m: None)
    assert REPO not in hub.repos


def test_pull_request_then_tag_after_merge(hub, releases):
    r1, _ = releases
    result = publish(r1, REPO, create_pr=True, retry=FAST, log=lambda m: None)
    assert result.status == "pull_request" and result.pr_url.endswith("/discussions/1")
    repo = hub.repos[REPO]
    assert repo.tags == {} and "manifest.json" not in files_at(hub, "main")
    repo.branches["main"] = repo.pulls[0]  # the curator merges the PR on the Hub
    assert publish(r1, REPO, retry=FAST, log=lambda m: None).status == "tagged_existing_commit"
    assert repo.tags["v1.0.0"] == repo.pulls[0]


def test_hand_edits_on_the_hub_survive_the_next_publish(hub, releases):
    from huggingface_hub import CommitOperationAdd, DatasetCard, HfApi

    r1, r2 = releases
    publish(r1, REPO, retry=FAST, log=lambda m: None)
    card = DatasetCard(files_at(hub, "main")["README.md"].decode())
    card.data["tags"] = ["rag", "clarification"]
    text = str(card)
    text = text.replace("Grounded multi-turn examples", "Curated by hand: grounded multi-turn examples")
    text += "\n## Curator notes\n\nAsk me before using this for production.\n"
    api = HfApi(endpoint=hub.url, token=TOKEN)
    api.create_commit(REPO, [CommitOperationAdd("README.md", text.encode())], commit_message="edit card", repo_type="dataset")

    lines: list[str] = []
    publish(r2, REPO, retry=FAST, log=lines.append)
    merged = DatasetCard(files_at(hub, "main")["README.md"].decode())
    assert merged.data["tags"] == ["rag", "clarification"]
    assert [c["config_name"] for c in merged.data["configs"]] == ["default", "pre_retrieval", "post_retrieval"]
    assert "Curated by hand: grounded multi-turn examples" in merged.text
    assert "## Curator notes\n\nAsk me before using this for production." in merged.text
    assert "# ClariEdge: demo 1.1.0" in merged.text  # unedited generated sections are regenerated
    assert "Total records: 13." in merged.text
    changelog = merged.text.split("## Changelog", 1)[1]
    assert changelog.index("### v1.1.0") < changelog.index("### v1.0.0")
    assert "1 added, 0 removed, 0 moved, 1 relabelled, 0 text-changed" in changelog
    assert 'revision="v1.1.0"' in merged.text and f'load_dataset("{REPO}"' in merged.text
    assert any("kept hand-edited card sections from the Hub: purpose" in line for line in lines)


def test_diff_between_hub_revisions(hub, releases):
    from builder.publish.hub import load_side
    from builder.release.diff import diff_splits

    r1, r2 = releases
    publish(r1, REPO, retry=FAST, log=lambda m: None)
    publish(r2, REPO, retry=FAST, log=lambda m: None)
    a_name, a, _ = load_side(f"{REPO}@v1.0.0")
    b_name, b, manifest = load_side(f"hf://datasets/{REPO}")  # main
    assert (a_name, b_name, manifest["version"]) == (f"{REPO}@v1.0.0", f"{REPO}@main", "1.1.0")
    totals = diff_splits(a, b).totals()
    assert (totals["added"], totals["relabelled"], totals["removed"]) == (1, 1, 0)
    with pytest.raises(InputError, match="revision v9.9.9 not found"):
        load_side(f"{REPO}@v9.9.9")


def test_token_never_appears_in_output_or_files(hub, releases, tmp_path, capfd, caplog):
    """A failing CLI run in a subprocess, then publishes in-process with debug logs; grep all output and files."""
    import logging

    from huggingface_hub.utils import logging as hf_logging

    r1, r2 = releases
    env = {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": TOKEN, "HF_HOME": str(tmp_path / "hf_home"), "HF_HUB_VERBOSITY": "debug"}
    # `python -c` from the checkout, not the venv's `clariedge` script: that imports whichever checkout is installed.
    cmd = [sys.executable, "-c", "from builder.cli import main; main()", "publish", "--release", str(r1), "--repo", REPO,
           "--attempts", "2", "--backoff", "0.01"]
    hub.fail_commits = 100  # the error message must not carry it either
    failed = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert failed.returncode == 2 and "Not published" in failed.stderr and "Traceback" not in failed.stderr
    hub.fail_commits = 0
    hf_logging.set_verbosity_debug()
    caplog.set_level(logging.DEBUG)
    try:
        publish(r1, REPO, retry=FAST)
        publish(r2, REPO, retry=FAST)  # v1.1.0 gets a changelog from the diff
    finally:
        hf_logging.set_verbosity_warning()
    out, err = capfd.readouterr()
    assert "published clariedge-org/clariedge v1.1.0" in out
    assert caplog.records  # the client's debug logging was on and captured
    for text in (failed.stdout, failed.stderr, out, err, caplog.text):
        assert TOKEN not in text
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) > 20
    assert not [p for p in written if TOKEN.encode() in p.read_bytes()]
    hub_files = [data for c in hub.repos[REPO].commits.values() for data in c.files.values()]
    assert hub_files and not [d for d in hub_files if TOKEN.encode() in d]
