"""Stratified, deterministic sampling and the three export formats."""

import json
import re
from collections import Counter

import pytest

from builder.audit.release import open_release
from builder.audit.sample import CSV_COLUMNS, allocate, draw_sample, export_sample, stratum_key
from builder.errors import InputError
from test_audit_helpers import LS_CONFIG, make_records, read_csv_rows, write_test_release

FIELDS = ("label", "category", "domain", "setting")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return open_release(write_test_release(tmp_path_factory.mktemp("rel") / "rel", make_records(per_cell=3, seed=1)))


def test_same_seed_same_sample_other_seed_other_sample(release):
    a = draw_sample(release, 100, FIELDS, seed=7)
    b = draw_sample(release, 100, FIELDS, seed=7)
    c = draw_sample(release, 100, FIELDS, seed=8)
    assert a.ids == b.ids
    assert len(a.ids) == 100 == len(set(a.ids))
    assert set(a.ids) != set(c.ids)


def test_sample_does_not_depend_on_file_order(release, tmp_path):
    records = [{k: v for k, v in release.records[i].items() if k != "split"} for i in reversed(release.ordered)]
    other = open_release(write_test_release(tmp_path / "rev", records))
    assert set(draw_sample(other, 80, FIELDS, seed=3).ids) == set(draw_sample(release, 80, FIELDS, seed=3).ids)


def test_equal_allocation_covers_every_stratum_evenly(release):
    sample = draw_sample(release, 112, FIELDS, seed=1)  # 56 strata of 3 records -> 2 each
    counts = Counter(stratum_key(release.records[i], FIELDS) for i in sample.ids)
    assert len(counts) == 56
    assert set(counts.values()) == {2}
    assert all(s["sampled"] == 2 and s["available"] == 3 for s in sample.strata.values())


def test_equal_allocation_caps_small_strata_and_spreads_the_rest():
    import random

    # 30 over 3 strata: 10 each, tiny capped at 2; the 8 left go to big (mid is exhausted at 10).
    assert allocate({"big": 50, "mid": 10, "tiny": 2}, 30, "equal", random.Random(0)) == {"big": 18, "mid": 10, "tiny": 2}
    assert allocate({"big": 50, "mid": 20, "tiny": 2}, 30, "equal", random.Random(0)) == {"big": 14, "mid": 14, "tiny": 2}
    prop = allocate({"big": 50, "mid": 10, "tiny": 2}, 31, "proportional", random.Random(0))
    # exact shares 25.0, 5.0, 1.0 -> no remainder to place
    assert prop == {"big": 25, "mid": 5, "tiny": 1}


def test_fewer_than_strata_spreads_one_each(release):
    sample = draw_sample(release, 20, FIELDS, seed=5)
    counts = Counter(stratum_key(release.records[i], FIELDS) for i in sample.ids)
    assert len(sample.ids) == 20 and max(counts.values()) == 1


def test_split_filter_and_bad_field(release):
    sample = draw_sample(release, 30, ("category",), seed=0, splits=("test",))
    assert {release.records[i]["split"] for i in sample.ids} == {"test"}
    with pytest.raises(InputError, match="unknown field 'colour'"):
        draw_sample(release, 10, ("colour",), seed=0)


def test_exports(release, tmp_path):
    sample = draw_sample(release, 40, FIELDS, seed=2)
    paths = export_sample(release, sample, tmp_path / "out")

    lines = [json.loads(l) for l in paths["jsonl"].read_text(encoding="utf-8").splitlines()]
    assert [l["record"]["id"] for l in lines] == sample.ids
    assert lines[0]["record"] == {k: v for k, v in release.records[sample.ids[0]].items() if k != "split"}

    header, rows = read_csv_rows(paths["csv"])
    assert header == list(CSV_COLUMNS)
    assert [r["record_id"] for r in rows] == sample.ids
    assert b"\r\n" in paths["csv"].read_bytes()
    for row in rows:
        record = release.records[row["record_id"]]
        assert row["query"].lstrip("'") == record["query"]
        assert row["proposed_clarification"] == record["target"]["clarification"]
        for turn in record["history"]:
            assert f"{turn['role'].upper()}: {turn['content']}" in row["history"]
        for doc in record["documents"]:
            assert doc["text"] in row["documents"]
        assert row["needs_clarification"] == row["category"] == ""  # blind: no generated label shown

    tasks = json.loads(paths["label_studio"].read_text(encoding="utf-8"))
    assert [t["data"]["record_id"] for t in tasks] == sample.ids
    # Every $variable of the labeling config is present in every task.
    variables = set(re.findall(r'value="\$(\w+)"', LS_CONFIG.read_text(encoding="utf-8")))
    assert variables == {"setting", "history", "documents", "query", "proposed_clarification"}
    for task in tasks:
        assert variables <= set(task["data"])
        assert task["data"]["history"] and all({"author", "text"} <= set(p) for p in task["data"]["history"])

    manifest = json.loads(paths["manifest"].read_text(encoding="utf-8"))
    assert manifest["ids"] == sample.ids and manifest["seed"] == 2 and manifest["stratify"] == list(FIELDS)


def test_spreadsheet_cells_are_inert_and_bounded():
    from builder.audit.sample import EXCEL_CELL_LIMIT, spreadsheet_cell

    assert spreadsheet_cell("=HYPERLINK(\"x\")").startswith("'=")
    assert len(spreadsheet_cell("a" * 40_000)) == EXCEL_CELL_LIMIT


def test_cli_sample(release, tmp_path):
    from typer.testing import CliRunner

    from builder.cli import app

    result = CliRunner().invoke(app, ["audit", "sample", "--release", str(release.path), "--n", "30", "--seed", "9",
                                      "--annotations-dir", str(tmp_path / "ann")])
    assert result.exit_code == 0, result.output
    out = tmp_path / "ann" / "1.0.0" / "samples" / "seed-9"
    manifest = json.loads((out / "sample.json").read_text(encoding="utf-8"))
    assert manifest["ids"] == draw_sample(release, 30, FIELDS, seed=9).ids
    assert {p.name for p in out.iterdir()} == {"sample.jsonl", "sample.csv", "label_studio_tasks.json", "sample.json"}
