"""Round trips (export, fill in programmatically, import) and bad input."""

import json
import subprocess
import sys

import pytest

from builder.audit.annotations import import_files, load_labels
from builder.audit.release import open_release
from builder.audit.sample import draw_sample, export_sample
from builder.errors import InputError
from test_audit_helpers import (
    ls_controls, ls_result, make_records, read_csv_rows, write_csv_rows, write_test_release, yes_no,
)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return open_release(write_test_release(tmp_path_factory.mktemp("rel") / "rel", make_records(per_cell=1, seed=2)))


@pytest.fixture()
def exported(release, tmp_path):
    return export_sample(release, draw_sample(release, 20, seed=4), tmp_path / "sample")


def answer_for(record, annotator_index):
    """What a (simulated) annotator says: agrees with the generator, except every third record for annotator 1."""
    needs, category = record["needs_clarification"], record["category"]
    flip = annotator_index == 1 and int(record["id"][-2:], 16) % 3 == 0
    if flip:
        needs = not needs
        category = "clear" if not needs else "missing_parameter"
    return {
        "needs_clarification": yes_no(needs),
        "category": category,
        "clarification_acceptable": yes_no(annotator_index == 0) if record["needs_clarification"] else "",
        "suggested_clarification": "Which plan do you mean, basic or premium?" if flip and needs else "",
        "interpretations": "the basic plan\nthe premium plan" if flip and needs else "",
        "comment": f"note by {annotator_index} — naïve “quotes”, comma, \"double\"" if annotator_index == 0 else "",
    }


def test_csv_round_trip(release, exported, tmp_path):
    header, rows = read_csv_rows(exported["csv"])
    files = []
    for k, name in enumerate(("alice", "bob")):
        filled = []
        for row in rows:
            answers = answer_for(release.records[row["record_id"]], k)
            filled.append({**row, **answers, "annotator": name if k == 0 else "",
                           "annotated_at": "2025-03-01T10:00:00+01:00" if k == 0 else ""})
        path = tmp_path / f"filled-{name}.csv"
        write_csv_rows(path, header, filled)
        files.append(path)
    labels = tmp_path / "ann" / release.version / "labels.jsonl"
    # bob's sheet has no annotator column filled: --annotator supplies it; no time: the file's mtime is used.
    import_files(files[:1], release, labels)
    result = import_files(files[1:], release, labels, default_annotator="bob")
    assert result.added == 20 and len(result.annotations) == 40

    stored = load_labels(labels)
    assert len(stored) == 40
    by_key = {(a.record_id, a.annotator): a for a in stored}
    for row in rows:
        record = release.records[row["record_id"]]
        for k, name in enumerate(("alice", "bob")):
            a = by_key[(row["record_id"], name)]
            expected = answer_for(record, k)
            assert yes_no(a.needs_clarification) == expected["needs_clarification"]
            assert a.category == expected["category"]
            assert a.comment == expected["comment"]
            assert a.interpretations == [x for x in expected["interpretations"].split("\n") if x]
    alice = by_key[(rows[0]["record_id"], "alice")]
    assert alice.annotated_at == "2025-03-01T09:00:00Z" and alice.time_source == "annotation"
    assert by_key[(rows[0]["record_id"], "bob")].time_source == "file_mtime"
    lines = [json.loads(l) for l in labels.read_text(encoding="utf-8").splitlines()]
    assert {l["version"] for l in lines} == {release.version}
    assert all(l["source"].startswith(str(tmp_path)) for l in lines)

    # Importing the same file again changes nothing and says so.
    again = import_files(files[:1], release, labels)
    assert again.added == 0 and again.unchanged == 20 and len(load_labels(labels)) == 40


def ls_export(tasks, release, annotators, minimal=False):
    """What Label Studio exports after people answered in the editor (JSON, or JSON-MIN)."""
    out = []
    for i, task in enumerate(tasks, start=1):
        record = release.records[task["data"]["record_id"]]
        anns = []
        for k, user in enumerate(annotators):
            answers = answer_for(record, k)
            anns.append({"id": 100 * i + k, "completed_by": user, "result": ls_result(answers), "was_cancelled": False,
                         "ground_truth": False, "created_at": "2025-03-02T08:00:00.123456Z",
                         "updated_at": f"2025-03-02T08:0{k}:00.000000Z", "lead_time": 12.5, "task": i})
        if minimal:
            for ann, k in zip(anns, range(len(annotators))):
                flat = {**task["data"], "id": i, "annotator": annotators[k]["email"] if isinstance(annotators[k], dict) else annotators[k],
                        "annotation_id": ann["id"], "created_at": ann["created_at"], "updated_at": ann["updated_at"],
                        "lead_time": 12.5}
                flat.update({key: value for key, value in answer_for(record, k).items() if value})
                out.append(flat)
        else:
            out.append({"id": i, "data": task["data"], "annotations": anns, "predictions": [],
                        "created_at": "2025-03-01T00:00:00Z", "updated_at": "2025-03-02T00:00:00Z", "project": 7})
    return out


def test_label_studio_round_trip(release, exported, tmp_path):
    tasks = json.loads(exported["label_studio"].read_text(encoding="utf-8"))
    export = ls_export(tasks, release, [3, {"id": 9, "email": "bob@example.org"}])
    # One more task that someone skipped: counted, not imported.
    export.append({"id": 999, "data": tasks[0]["data"], "annotations": [
        {"id": 1, "completed_by": 4, "result": [], "was_cancelled": True, "created_at": "2025-03-02T08:00:00Z"}]})
    path = tmp_path / "project-7-at-2025-03-02.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    labels = tmp_path / "labels.jsonl"
    result = import_files([path], release, labels)
    assert result.added == 40 and len(result.cancelled) == 1 and len(result.unannotated) == 1
    stored = {(a.record_id, a.annotator): a for a in load_labels(labels)}
    assert {name for _, name in stored} == {"ls-user-3", "bob@example.org"}
    for task in tasks:
        record = release.records[task["data"]["record_id"]]
        a = stored[(record["id"], "bob@example.org")]
        expected = answer_for(record, 1)
        assert (yes_no(a.needs_clarification), a.category) == (expected["needs_clarification"], expected["category"])
        assert a.suggested_clarification == (expected["suggested_clarification"] or None)
        assert a.annotated_at == "2025-03-02T08:01:00Z"


def test_label_studio_json_min_round_trip(release, exported, tmp_path):
    tasks = json.loads(exported["label_studio"].read_text(encoding="utf-8"))
    path = tmp_path / "min.json"
    path.write_text(json.dumps(ls_export(tasks, release, ["carol@example.org"], minimal=True)), encoding="utf-8")
    result = import_files([path], release, tmp_path / "labels.jsonl")
    assert result.added == 20
    assert {a.annotator for a in result.annotations} == {"carol@example.org"}


def test_config_controls_match_importer():
    from builder.audit.annotations import LS_FIELDS

    assert set(ls_controls()) == set(LS_FIELDS)


# ---- bad input ---------------------------------------------------------------------------------


def filled_csv(release, exported, tmp_path, edit):
    header, rows = read_csv_rows(exported["csv"])
    rows = [{**row, **answer_for(release.records[row["record_id"]], 0), "annotator": "alice",
             "annotated_at": "2025-03-01T10:00:00Z"} for row in rows]
    edit(rows)
    path = tmp_path / "bad.csv"
    write_csv_rows(path, header, rows)
    return path


def test_unknown_record_id_names_file_and_row(release, exported, tmp_path):
    def edit(rows):
        rows[2]["record_id"] = "ce-0000000000000000"
    path = filled_csv(release, exported, tmp_path, edit)
    with pytest.raises(InputError, match=r"bad\.csv:row 4: record_id 'ce-0000000000000000' is not in release unit 1\.0\.0"):
        import_files([path], release, tmp_path / "labels.jsonl")
    assert not (tmp_path / "labels.jsonl").exists()  # nothing written on error


def test_unknown_labels_are_all_reported(release, exported, tmp_path):
    def edit(rows):
        rows[0]["category"] = "vague"
        rows[1]["needs_clarification"] = "maybe"
        rows[3]["clarification_acceptable"] = "sort of"
        rows[4]["needs_clarification"], rows[4]["category"] = "yes", "clear"
        rows[5]["annotated_at"] = "yesterday"
    path = filled_csv(release, exported, tmp_path, edit)
    with pytest.raises(InputError) as err:
        import_files([path], release, tmp_path / "labels.jsonl")
    message = str(err.value)
    assert "5 problem(s)" in message
    assert "row 2: field 'category': unknown value 'vague'" in message
    assert "row 3: field 'needs_clarification': unknown value 'maybe'" in message
    assert "row 5: field 'clarification_acceptable': unknown value 'sort of'" in message
    assert "row 6: category 'clear' contradicts needs_clarification=yes" in message
    assert "row 7: field 'annotated_at': not an ISO 8601 time: 'yesterday'" in message


def test_duplicate_annotations(release, exported, tmp_path):
    def edit(rows):
        rows.append(dict(rows[0]))
    path = filled_csv(release, exported, tmp_path, edit)
    with pytest.raises(InputError, match=r"row 22: duplicate annotation of ce-[0-9a-f]{16} by 'alice' \(also at .*row 2\)"):
        import_files([path], release, tmp_path / "labels.jsonl")


def test_conflicting_reimport_needs_replace(release, exported, tmp_path):
    labels = tmp_path / "labels.jsonl"
    import_files([filled_csv(release, exported, tmp_path, lambda rows: None)], release, labels)

    def edit(rows):
        rows[0]["comment"] = "changed my mind"
    changed = filled_csv(release, exported, tmp_path, edit)
    with pytest.raises(InputError, match="already imported from .* with a different answer"):
        import_files([changed], release, labels)
    result = import_files([changed], release, labels, replace=True)
    assert result.added == 20
    assert any(a.comment == "changed my mind" for a in load_labels(labels))


def test_missing_annotator_and_columns(release, exported, tmp_path):
    def edit(rows):
        rows[1]["annotator"] = ""
    with pytest.raises(InputError, match="row 3: field 'annotator' is empty"):
        import_files([filled_csv(release, exported, tmp_path, edit)], release, tmp_path / "l.jsonl")
    bad = tmp_path / "cols.csv"
    bad.write_text("record_id,needs_clarification\nce-1,yes\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column"):
        import_files([bad], release, tmp_path / "l.jsonl")


def test_blank_rows_are_counted_not_dropped(release, exported, tmp_path):
    def edit(rows):
        for row in rows[:5]:
            for key in ("needs_clarification", "category", "clarification_acceptable", "suggested_clarification",
                        "interpretations", "comment"):
                row[key] = ""
    result = import_files([filled_csv(release, exported, tmp_path, edit)], release, tmp_path / "l.jsonl")
    assert result.added == 15 and len(result.unannotated) == 5


def test_label_studio_unknown_control(release, exported, tmp_path):
    tasks = json.loads(exported["label_studio"].read_text(encoding="utf-8"))
    export = ls_export(tasks[:2], release, [1])
    export[1]["annotations"][0]["result"].append(
        {"from_name": "sentiment", "to_name": "query", "type": "choices", "value": {"choices": ["happy"]}})
    path = tmp_path / "ls.json"
    path.write_text(json.dumps(export), encoding="utf-8")
    with pytest.raises(InputError, match=r"ls\.json:task 2 annotation 200: unknown control 'sentiment'"):
        import_files([path], release, tmp_path / "l.jsonl")


def test_cli_reports_bad_input_in_one_line(release, exported, tmp_path):
    def edit(rows):
        rows[0]["category"] = "vague"
    path = filled_csv(release, exported, tmp_path, edit)
    proc = subprocess.run(
        [sys.executable, "-c", "from builder.cli import main; main()", "audit", "import", str(path),
         "--release", str(release.path), "--annotations-dir", str(tmp_path / "ann")],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "unknown value 'vague'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "ann").exists()
