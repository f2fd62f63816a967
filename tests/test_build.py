"""End-to-end builds: the demo corpus, determinism, the full MTRAG build (when ../shared exists)."""

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from builder.release import load_release
from builder.validate import validate

from conftest import ROOT, needs_mtrag, run_cli


def _tree_digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def test_demo_release_layout_and_validity(demo_release):
    files = _tree_digest(demo_release)
    for split in ("train", "validation", "test"):
        assert f"data/{split}.parquet" in files
        assert f"data/pre_retrieval/{split}.parquet" in files
    manifest = json.loads((demo_release / "manifest.json").read_text())
    for rel, digest in manifest["files"].items():
        assert files[rel] == digest, f"manifest checksum of {rel}"
    splits = load_release(demo_release)
    records = [r for rows in splits.values() for r in rows]
    assert all(splits.values()), "no split is empty"
    valid, quarantined = validate(records)
    assert not quarantined, quarantined[:1]
    assert manifest["counts"]["released"] == len(records)
    assert manifest["leakage"]["passed"]
    acc = manifest["accounting"]
    assert acc["every_input_accounted"]
    assert acc["candidates"]["kept"] == len(records)
    assert acc["candidates"].get("kept", 0) + acc["candidates"].get("deduplicated", 0) + acc["candidates"].get("rejected", 0) == manifest["counts"]["candidates"]


def test_every_candidate_and_turn_has_a_fate(demo_release):
    rows = [json.loads(l) for l in (demo_release / "accounting.jsonl").read_text().splitlines()]
    assert {r["status"] for r in rows} <= {"kept", "rejected", "deduplicated"}
    for r in rows:
        if r["status"] == "deduplicated":
            assert r["kept_id"].startswith("ce-")
        if r["status"] == "rejected":
            assert r["reason"]
    manifest = json.loads((demo_release / "manifest.json").read_text())
    turns = {(r["conversation_id"], r["turn"]) for r in rows}
    assert len(turns) == manifest["counts"]["user_turns"]


def test_release_loads_with_datasets_both_ways(demo_release):
    from datasets import load_dataset

    files = {s: str(demo_release / "data" / f"{s}.parquet") for s in ("train", "validation", "test")}
    by_files = load_dataset("parquet", data_files=files)
    by_dir = load_dataset(str(demo_release))
    manifest = json.loads((demo_release / "manifest.json").read_text())
    for split, n in manifest["splits"].items():
        assert by_files[split].num_rows == n == by_dir[split].num_rows
    pre = load_dataset(str(demo_release), "pre_retrieval")
    setting = pre["train"].features["setting"]  # a ClassLabel, from the card's dataset_info
    assert {setting.int2str(v) for v in pre["train"]["setting"]} == {"pre_retrieval"}
    row = by_dir["train"][0]
    assert json.loads(json.dumps(row["target"]))["clarification"]


def test_card_yaml_header(demo_release):
    text = (demo_release / "README.md").read_text()
    header = yaml.safe_load(text.split("---")[1])
    assert header["license"] and header["task_categories"] and header["size_categories"]
    names = {c["config_name"] for c in header["configs"]}
    assert {"default", "pre_retrieval", "post_retrieval"} <= names
    assert "| label |" in text and "| domain |" in text


def test_build_is_byte_identical(tmp_path):
    a = run_cli("build", "--out", str(tmp_path / "a"))
    b = run_cli("build", "--out", str(tmp_path / "b"))
    assert a.returncode == 0, a.stderr
    assert b.returncode == 0, b.stderr
    ra = tmp_path / "a" / "clariedge-demo" / "1.0.0"
    rb = tmp_path / "b" / "clariedge-demo" / "1.0.0"
    assert _tree_digest(ra) == _tree_digest(rb)
    c = run_cli("build", "--out", str(tmp_path / "c"), "--seed", "99")
    assert c.returncode == 0, c.stderr
    assert _tree_digest(tmp_path / "c" / "clariedge-demo" / "1.0.0") != _tree_digest(ra), "the seed matters"


def test_build_returns_the_report_the_summary_renders(tmp_path):
    import shutil
    from dataclasses import FrozenInstanceError, replace

    from rich.console import Console

    from builder.cli.summary import render_build
    from builder.config import BuildConfig
    from builder.build import build

    report = build(BuildConfig(), tmp_path / "out")
    manifest = json.loads((report.release / "manifest.json").read_text())
    assert report.release == tmp_path / "out" / "clariedge-demo" / "1.0.0"
    assert (report.name, report.version) == (manifest["name"], manifest["version"])
    assert report.counts == manifest["counts"] and report.splits == manifest["splits"]
    assert report.composition == manifest["statistics"] and report.leakage == manifest["leakage"]
    assert report.llm_run is None, "the demo config has no llm: section"
    with pytest.raises(FrozenInstanceError):
        report.release = tmp_path
    shutil.rmtree(tmp_path / "out")  # the summary reads nothing back
    console = Console(record=True, width=200)
    render_build(report, console)
    lines = console.export_text().splitlines()
    for key in ("conversations", "user_turns", "candidates", "duplicates", "released"):
        assert any(key.replace("_", " ") in line and f" {report.counts[key]} " in line for line in lines), key
    assert not any(line.startswith("llm:") for line in lines)
    run = {"unique": 7, "cache_hits": 2, "answered": 5, "http_requests": 6, "retries": 1, "reasks": 0, "failed": 0,
           "prompt_tokens": 900, "completion_tokens": 80, "modes": {"json_schema": 5}}
    console = Console(record=True, width=200)
    render_build(replace(report, llm_run=run), console)
    assert ("llm: 7 requests needed · 2 from cache · 5 answered (6 attempts, 1 retries, 0 re-asks) · 0 failed · "
            "tokens in 900 / out 80 · structured output: json_schema 5") in console.export_text()


def test_stages_rerun_alone(tmp_path):
    out = tmp_path / "out"
    assert run_cli("build", "--out", str(out)).returncode == 0
    release = out / "clariedge-demo" / "1.0.0"
    before = _tree_digest(release)
    for stage in ("dedup", "split", "release"):
        result = run_cli(stage, "--out", str(out))
        assert result.returncode == 0, result.stderr
    assert _tree_digest(release) == before


def test_build_from_one_input_file(tmp_path):
    src = ROOT / "builder" / "data" / "demo" / "conversations.jsonl"
    lines = src.read_text().splitlines()[:8]
    path = tmp_path / "travel_subset.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = run_cli("build", "--input", str(path), "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    release = Path(result.stdout.strip().splitlines()[-1])
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["counts"]["conversations"] == 8
    assert manifest["inputs"]["conversations"]["name"] == "travel_subset.jsonl"


@needs_mtrag
@pytest.mark.slow
def test_full_mtrag_build_meets_targets(tmp_path):
    result = run_cli("build", "--config", str(ROOT / "configs" / "mtrag.yaml"), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    release = tmp_path / "clariedge-mtrag" / "1.0.0"
    manifest = json.loads((release / "manifest.json").read_text())
    stats = manifest["statistics"]
    assert 3600 <= stats["records"] <= 4200
    assert 0.40 <= stats["positive_share"] <= 0.55
    assert stats["hard_negative_share_of_negatives"] >= 0.5
    assert min(stats["setting_share"].values()) >= 0.15 and len(stats["setting_share"]) == 2
    assert len(stats["domain_share"]) == 4 and min(stats["domain_share"].values()) >= 0.15
    assert stats["contrastive_share_of_positives"] >= 0.25
    assert manifest["counts"]["quarantined"] == 0
    assert manifest["leakage"]["conversations_in_several_splits"] == 0
    assert manifest["leakage"]["near_duplicate_queries_across_splits"] == 0
    assert manifest["accounting"]["every_input_accounted"]
    records = [r for rows in load_release(release).values() for r in rows]
    valid, quarantined = validate(records)
    assert len(valid) == len(records) == stats["records"]
    again = run_cli("build", "--config", str(ROOT / "configs" / "mtrag.yaml"), "--out", str(tmp_path / "again"))
    assert again.returncode == 0
    assert _tree_digest(release) == _tree_digest(tmp_path / "again" / "clariedge-mtrag" / "1.0.0")
