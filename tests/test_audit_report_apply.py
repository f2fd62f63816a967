"""Metrics and report from known annotations; human labels -> fixes -> the next (patch) release."""

import json
import subprocess
import sys

import pytest

from builder.audit.annotations import Annotation, load_labels
from builder.audit.apply import apply_fixes, plan_fixes, read_fixes, write_fixes, write_patch_release
from builder.audit.metrics import compute_metrics
from builder.audit.release import open_release
from builder.audit.report import write_report
from builder.release import load_release
from builder.io import write_jsonl
from test_audit_helpers import REPO, make_records, validate, write_test_release


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return open_release(write_test_release(tmp_path_factory.mktemp("rel") / "rel", make_records(per_cell=1, seed=3)))


def pick(release, category, n=1, setting=None):
    ids = [i for i in release.ordered if release.records[i]["category"] == category
           and (setting is None or release.records[i]["setting"] == setting)]
    return ids[:n]


def ann(rid, who, needs, category, acceptable=None, suggestion=None, readings=(), comment=""):
    return Annotation(rid, who, needs, category, acceptable, suggestion, comment, "2025-03-01T09:00:00Z",
                      f"test:{rid}:{who}", "annotation", list(readings))


@pytest.fixture(scope="module")
def scenario(release):
    """Hand-made annotations with known consequences."""
    clear_ok = pick(release, "clear", 2)
    ur_ok, ur_to_clear, ur_bad_q = pick(release, "unresolved_reference", 3)
    hn_to_mp, hn_no_q = pick(release, "hard_negative", 2)
    ill_tie = pick(release, "ill_formed", 1)[0]
    mp_ok = pick(release, "missing_parameter", 1)[0]
    a = [
        # both agree with the generator
        *[ann(r, w, False, "clear") for r in clear_ok for w in ("ann", "bob")],
        ann(ur_ok, "ann", True, "unresolved_reference", True), ann(ur_ok, "bob", True, "unresolved_reference", True),
        ann(mp_ok, "ann", True, "missing_parameter", True), ann(mp_ok, "bob", True, "missing_parameter", False),
        # both say: clear after all
        ann(ur_to_clear, "ann", False, "clear"), ann(ur_to_clear, "bob", False, "clear"),
        # label right, question bad, a better one suggested
        ann(ur_bad_q, "ann", True, "unresolved_reference", False, "Do you mean the savings account or the mortgage?"),
        ann(ur_bad_q, "bob", True, "unresolved_reference", False),
        # hard negative that does need clarification, with question and readings
        ann(hn_to_mp, "ann", True, "missing_parameter", None, "For which month?", ["this month", "next month"]),
        ann(hn_to_mp, "bob", True, "missing_parameter"),
        # hard negative said to need clarification, but nobody wrote the question
        ann(hn_no_q, "ann", True, "missing_parameter"), ann(hn_no_q, "bob", True, "missing_parameter"),
        # a tie
        ann(ill_tie, "ann", True, "ill_formed"), ann(ill_tie, "bob", False, "clear"),
    ]
    ids = dict(clear_ok=clear_ok, ur_ok=ur_ok, ur_to_clear=ur_to_clear, ur_bad_q=ur_bad_q, hn_to_mp=hn_to_mp,
               hn_no_q=hn_no_q, ill_tie=ill_tie, mp_ok=mp_ok)
    return a, ids


def test_metrics_by_hand(release, scenario):
    annotations, ids = scenario
    m = compute_metrics(release, annotations)
    overall = m["overall"]
    # 9 records; the tie is undecided on the label -> 8 decided: wrong are ur_to_clear, hn_to_mp, hn_no_q.
    assert overall["records"] == 9 and overall["annotations"] == 18
    assert overall["label_decided"] == 8 and overall["label_accuracy"] == pytest.approx(5 / 8)
    # acceptability over the annotations that judged it: ur_ok yes x2, mp_ok yes + no, ur_bad_q no x2 -> 3 of 6.
    assert overall["acceptability_judged"] == 6 and overall["acceptability_rate"] == pytest.approx(3 / 6)
    ur = m["per_category"]["unresolved_reference"]
    assert ur["records"] == 3 and ur["label_accuracy"] == pytest.approx(2 / 3)
    # Two annotators -> Cohen on the label over 9 items: agree on 8, disagree on the tie.
    # ann yes: ur_ok, ur_bad_q, mp_ok, hn_to_mp, hn_no_q, ill_tie = 6/9; bob yes 5/9.
    # po = 8/9, pe = 6/9*5/9 + 3/9*4/9 = 42/81 -> kappa = (72-42)/(81-42) = 30/39.
    agreement = overall["agreement_label"]
    assert agreement["method"] == "cohen" and agreement["kappa"] == pytest.approx(30 / 39)
    assert m["confusion"]["unresolved_reference"]["clear"] == 1
    assert m["confusion"]["hard_negative"]["missing_parameter"] == 2
    assert m["confusion"]["ill_formed"]["tie"] == 1
    assert {d["record_id"] for d in m["disagreements"]} == {ids["ur_to_clear"], ids["hn_to_mp"], ids["hn_no_q"]}


def test_report_files(release, scenario, tmp_path):
    annotations, _ = scenario
    suspects = [{"record_id": release.ordered[0], "score": 0.9, "reason": "model says clear", "method": "model", "rank": 1}]
    paths = write_report(compute_metrics(release, annotations), tmp_path, suspects)
    md = paths["md"].read_text(encoding="utf-8")
    assert "| unresolved_reference | 3 | 6 | 66.7% (n=3)" in md
    assert "0.769 (cohen, 9 items)" in md
    assert "model says clear" in md
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert data["overall"]["label_accuracy"] == pytest.approx(5 / 8) and data["suspects"][0]["score"] == 0.9
    for key in ("confusion", "errors"):
        png = paths[key].read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 5000


def test_plan_fixes(release, scenario):
    annotations, ids = scenario
    fixes = {f.record_id: f for f in plan_fixes(release, annotations)}
    assert set(fixes) == {ids["ur_to_clear"], ids["ur_bad_q"], ids["hn_to_mp"], ids["hn_no_q"], ids["ill_tie"]}

    to_clear = fixes[ids["ur_to_clear"]]
    assert to_clear.action == "relabel" and to_clear.before["category"] == "unresolved_reference"
    assert to_clear.after["category"] == "clear" and to_clear.after["target"] == {"clarification": "CLEAR"}
    assert to_clear.after["provenance"]["label_source"] == "human"

    retarget = fixes[ids["ur_bad_q"]]
    assert retarget.action == "retarget"
    assert retarget.after["target"]["clarification"] == "Do you mean the savings account or the mortgage?"

    flipped = fixes[ids["hn_to_mp"]]
    assert flipped.action == "relabel" and flipped.after["needs_clarification"] is True
    assert flipped.after["interpretations"] == ["this month", "next month"] and flipped.after["resolution"] is None

    assert fixes[ids["hn_no_q"]].action == "needs_curation" and "suggested_clarification" in fixes[ids["hn_no_q"]].reason
    assert fixes[ids["ill_tie"]].action == "undecided"
    validate([f.after for f in fixes.values() if f.after])

    dropped = {f.record_id: f for f in plan_fixes(release, annotations, drop_unfixable=True)}
    assert dropped[ids["hn_no_q"]].action == "drop"


def test_fixes_file_and_patch_release(release, scenario, tmp_path):
    annotations, ids = scenario
    fixes = plan_fixes(release, annotations)
    write_fixes(tmp_path / "fixes.jsonl", fixes)
    again = read_fixes(tmp_path / "fixes.jsonl")
    assert [f.to_dict() for f in again] == [f.to_dict() for f in fixes]

    out, version = write_patch_release(release, again, tmp_path / "next", tmp_path / "fixes.jsonl")
    assert version == "1.0.1"
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["version"] == "1.0.1" and manifest["parent_version"] == "1.0.0"
    assert manifest["label_fixes"]["relabel"] == 2 and manifest["label_fixes"]["retarget"] == 1
    before, after = load_release(release.path), load_release(out)
    assert {s: len(v) for s, v in before.items()} == {s: len(v) for s, v in after.items()}
    by_id = {r["id"]: r for rows in after.values() for r in rows}
    assert by_id[ids["ur_to_clear"]]["category"] == "clear"
    assert by_id[ids["ur_to_clear"]]["provenance"]["label_source"] == "human"
    unchanged = {k: v for k, v in release.records[ids["hn_no_q"]].items() if k != "split"}
    assert by_id[ids["hn_no_q"]] == unchanged  # needs_curation leaves the record as it was
    assert sum(r["provenance"]["label_source"] == "human" for r in by_id.values()) == 3
    validate(list(by_id.values()))
    assert "## Label fixes" in (out / "README.md").read_text(encoding="utf-8")

    # The publishing stage agrees this is a patch: relabels only, same records.
    from builder.release.versioning import required_bump

    bump, _, _ = required_bump({"schema_sha256": "x"}, before, after, "x")
    assert bump == "patch"

    dropping = plan_fixes(release, annotations, drop_unfixable=True)
    _, version = write_patch_release(release, dropping, tmp_path / "minor")
    assert version == "1.1.0"


def test_apply_fixes_rejects_unknown_records(release, scenario):
    from builder.audit.apply import Fix
    from builder.errors import InputError

    fix = Fix("ce-ffffffffffffffff", "train", "drop", "x", {}, None, ["ann"], {})
    with pytest.raises(InputError, match="does not have"):
        apply_fixes(load_release(release.path), [fix])


def test_cli_report_and_apply(release, scenario, tmp_path):
    annotations, _ = scenario
    ann_dir = tmp_path / "annotations"
    write_jsonl(ann_dir / "1.0.0" / "labels.jsonl", [a.to_dict() for a in annotations])
    run = lambda *args: subprocess.run([sys.executable, "-c", "from builder.cli import main; main()", "audit", *args],
                                       capture_output=True, text=True, timeout=120, cwd=REPO)
    proc = run("report", "--release", str(release.path), "--annotations-dir", str(ann_dir))
    assert proc.returncode == 0, proc.stderr
    assert (ann_dir / "1.0.0" / "audit.md").exists() and (ann_dir / "1.0.0" / "confusion_matrix.png").exists()
    proc = run("apply", "--release", str(release.path), "--annotations-dir", str(ann_dir),
               "--release-out", str(tmp_path / "next"))
    assert proc.returncode == 0, proc.stderr
    assert "2 relabel, 1 retarget, 0 drop, 1 needs_curation, 1 undecided" in proc.stdout
    assert len(read_fixes(ann_dir / "1.0.0" / "fixes.jsonl")) == 5
    assert json.loads((tmp_path / "next" / "manifest.json").read_text())["version"] == "1.0.1"
    assert len(load_labels(ann_dir / "1.0.0" / "labels.jsonl")) == 18
