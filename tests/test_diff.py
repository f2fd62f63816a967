"""`clariedge diff` and `release --bump` on hand-made releases and on two real demo builds."""

from __future__ import annotations

import copy
import json

import pytest
from typer.testing import CliRunner

from builder.cli import app
from builder.errors import InputError
from builder.io import read_json, read_jsonl, write_jsonl
from builder.publish.hub import load_side
from builder.release.diff import diff_splits
from builder.record import SPLITS
from publish_helpers import make_record, make_splits, relabel, write_test_release

runner = CliRunner()


def test_diff_counts_and_examples_by_kind_and_split():
    old = make_splits(12)
    new = copy.deepcopy(old)
    new["train"].append(make_record(40))
    new["train"].append(make_record(41, positive=True))
    removed = new["test"].pop()
    new["validation"].append(new["train"].pop(0))  # moved
    new["test"][0] = relabel(new["test"][0])
    post = next(r for r in new["validation"] if r["documents"])
    post["documents"][0]["text"] = "A corrected passage."
    diff = diff_splits(old, new, "old", "new")
    counts = diff.counts()
    assert diff.totals() == {"added": 2, "removed": 1, "moved": 1, "relabelled": 1, "text_changed": 1}
    assert counts["added"]["train"] == 2 and counts["removed"]["test"] == 1 and counts["moved"]["validation"] == 1
    out = diff.to_json(examples=1)
    assert out["examples"]["removed"] == [
        {"id": removed["id"], "split": "test", "query": removed["query"], "setting": removed["setting"],
         "needs_clarification": removed["needs_clarification"], "category": removed["category"], "target": removed["target"]}
    ]  # fmt: skip
    assert out["examples"]["relabelled"][0]["after"]["category"] == "clear"
    assert out["examples"]["text_changed"][0]["fields"] == ["documents"]
    assert len(out["examples"]["added"]) == 1


def test_identical_releases_have_an_empty_diff():
    s = make_splits(6)
    assert diff_splits(s, copy.deepcopy(s)).empty


def test_duplicate_ids_and_bad_specs_are_input_errors(tmp_path):
    s = make_splits(3)
    s["test"].append(s["train"][0])
    with pytest.raises(InputError, match="appears twice"):
        diff_splits(s, s, "A", "B")
    with pytest.raises(InputError, match="neither a release directory nor a Hub revision"):
        load_side(str(tmp_path / "missing" / "dir"))
    with pytest.raises(InputError, match="not a release directory"):
        load_side(str(tmp_path))


def test_diff_command_prints_a_table_and_writes_json(tmp_path):
    s1 = make_splits(9)
    s2 = copy.deepcopy(s1)
    s2["validation"].append(make_record(90))
    a = write_test_release(tmp_path / "dist", "1.0.0", s1)
    b = write_test_release(tmp_path / "dist", "1.1.0", s2)
    result = runner.invoke(app, ["diff", "--previous", str(a), "--release", str(b), "--json", str(tmp_path / "diff.json")])
    assert result.exit_code == 0, result.output
    assert "added" in result.output and "relabelled" in result.output and "→" in result.output
    data = read_json(tmp_path / "diff.json")
    assert data["totals"]["added"] == 1 and data["counts"]["added"]["validation"] == 1


# --- two real releases from the demo build ----------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo build (v1.0.0), then v1.1.0 released with `--bump minor` after known edits to the split."""
    out = tmp_path_factory.mktemp("demo")
    result = runner.invoke(app, ["build", "--out", str(out)])
    assert result.exit_code == 0, result.output
    (r1,) = [p for p in out.glob("*/*") if (p / "manifest.json").exists()]
    split_file = next(out.glob(".work/*/*/split.jsonl"))
    rows = read_jsonl(split_file)
    by_split = {s: [r for r in rows if r["split"] == s] for s in SPLITS}
    test_ids = [r["record"]["id"] for r in by_split["test"][:2]]
    # 2 removed from test: they go to quarantine, as records a stricter validation rejects would.
    gone = [r["record"] for r in rows if r["record"]["id"] in test_ids]
    quarantine = split_file.parent / "quarantine.jsonl"
    write_jsonl(quarantine, read_jsonl(quarantine) + [
        {"id": r["id"], "errors": [{"pointer": "", "message": "removed for the diff test"}], "record": r} for r in gone])  # fmt: skip
    rows = [r for r in rows if r["record"]["id"] not in test_ids]
    train = [r for r in rows if r["split"] == "train"]
    train[0]["split"] = "validation"  # 1 moved
    positives = [r for r in train[1:] if r["record"]["needs_clarification"]]
    positives[0]["record"] = relabel(positives[0]["record"])  # 1 relabelled
    positives[1]["record"]["target"] = {"clarification": "Which one do you mean exactly?"}  # 1 text fix
    write_jsonl(split_file, rows)
    refused = runner.invoke(app, ["release", "--out", str(out), "--bump", "patch"])
    result = runner.invoke(app, ["release", "--out", str(out), "--bump", "minor"])
    assert result.exit_code == 0, result.output
    r2 = r1.parent / "1.1.0"
    return {"r1": r1, "r2": r2, "refused": refused, "moved": train[0]["record"]["id"], "removed": test_ids}


def test_release_bump_is_checked_on_a_real_build(demo):
    assert demo["refused"].exit_code != 0
    assert "--bump patch refused: since 1.0.0, 0 records added, 2 removed, 1 moved" in str(demo["refused"].exception) + demo["refused"].output
    manifest = read_json(demo["r2"] / "manifest.json")
    assert (manifest["version"], manifest["previous_version"]) == ("1.1.0", "1.0.0")
    card = (demo["r2"] / "README.md").read_text()
    assert "### v1.1.0\n\nCompared with v1.0.0: 0 added, 2 removed, 1 moved, 1 relabelled, 1 text-changed." in card


def test_diff_of_two_real_releases(demo, tmp_path):
    result = runner.invoke(app, ["diff", "--previous", str(demo["r1"]), "--release", str(demo["r2"]), "--json", str(tmp_path / "d.json")])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "d.json").read_text())
    assert data["totals"] == {"added": 0, "removed": 2, "moved": 1, "relabelled": 1, "text_changed": 1}
    assert data["counts"]["removed"]["test"] == 2 and data["counts"]["moved"]["validation"] == 1
    assert data["examples"]["moved"][0] == {"id": demo["moved"], "split": "validation", "from_split": "train"}
    assert sorted(e["id"] for e in data["examples"]["removed"]) == sorted(demo["removed"])
    assert data["examples"]["text_changed"][0]["fields"] == ["target"]


def test_load_dataset_honours_the_card_configs(demo, tmp_path):
    import datasets

    from builder.release import load_release

    records = load_release(demo["r2"])
    for config, keep in (("default", lambda r: True), ("pre_retrieval", lambda r: r["setting"] == "pre_retrieval"),
                         ("post_retrieval", lambda r: r["setting"] == "post_retrieval")):  # fmt: skip
        ds = datasets.load_dataset(str(demo["r2"]), config, cache_dir=str(tmp_path / "cache"))
        want = {s: sorted(r["id"] for r in records[s] if keep(r)) for s in SPLITS}
        got = {s: sorted(ds[s]["id"]) if s in ds else [] for s in SPLITS}
        assert got == want, config
        assert sum(map(len, got.values())) > 0


def test_publish_real_releases_then_diff_hub_revisions(demo, tmp_path, monkeypatch):
    """The two demo releases through the fake Hub: tags, pinned download, and a diff between Hub revisions."""
    import datasets
    from huggingface_hub import snapshot_download

    from builder.publish.hub import Retry, publish
    from fake_hub import FakeHub

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_TOKEN", "hf_demoToken")
    with FakeHub("hf_demoToken") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        for release in (demo["r1"], demo["r2"]):
            assert publish(release, "org/demo", retry=Retry(2, 0.01), log=lambda m: None).status == "published"
        result = runner.invoke(app, ["diff", "--previous", "org/demo@v1.0.0", "--release", "org/demo@v1.1.0", "--json", str(tmp_path / "hub.json")])
        assert result.exit_code == 0, result.output
        local = runner.invoke(app, ["diff", "--previous", str(demo["r1"]), "--release", str(demo["r2"]), "--json", str(tmp_path / "local.json")])
        hub_diff, local_diff = read_json(tmp_path / "hub.json"), read_json(tmp_path / "local.json")
        assert hub_diff["counts"] == local_diff["counts"] and hub_diff["examples"] == local_diff["examples"]
        old = snapshot_download("org/demo", repo_type="dataset", revision="v1.0.0", endpoint=hub.url, cache_dir=tmp_path / "dl")
        ds = datasets.load_dataset(old, "pre_retrieval", cache_dir=str(tmp_path / "cache"))
        want = datasets.load_dataset(str(demo["r1"]), "pre_retrieval", cache_dir=str(tmp_path / "cache"))
        assert {s: ds[s]["id"] for s in ds} == {s: want[s]["id"] for s in want}
        assert "accounting.jsonl" in hub.repos["org/demo"].resolve("v1.0.0").files
