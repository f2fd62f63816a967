"""Each bad input: a clear one-line-per-problem message, exit code 2, no traceback, no partial output."""

import json

import pytest

from conftest import run_cli

GOOD = {"id": "c1", "domain": "d", "turns": [{"role": "user", "text": "What is the Eurail Pass?"}]}


def _check(result, *needles, out=None):
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr
    if out is not None:
        assert not any(p.is_file() and p.suffix in {".parquet", ".json", ".md"} for p in out.rglob("*")), "no partial release"


def _write(tmp_path, lines, name="in.jsonl"):
    path = tmp_path / name
    path.write_bytes(lines if isinstance(lines, bytes) else "\n".join(lines).encode() + b"\n")
    return path


def test_malformed_jsonl_reports_file_and_line(tmp_path):
    path = _write(tmp_path, [json.dumps(GOOD), '{"id": "c2", "domain": '])
    _check(run_cli("build", "--input", str(path), "--out", str(tmp_path / "out")), "in.jsonl:2", "malformed JSON", out=tmp_path / "out")


def test_malformed_json_mtrag(tmp_path):
    path = _write(tmp_path, b'[{"messages": [}]', name="conversations.json")
    _check(run_cli("build", "--input", str(path), "--format", "mtrag", "--out", str(tmp_path / "out")), "conversations.json:1", "malformed JSON")


def test_missing_required_field(tmp_path):
    bad = {"id": "c2", "turns": [{"role": "user", "text": "hi"}]}
    path = _write(tmp_path, [json.dumps(GOOD), json.dumps(bad)])
    _check(run_cli("build", "--input", str(path), "--out", str(tmp_path / "out")), "in.jsonl:2", "'c2'", "missing required field 'domain'")


def test_missing_field_inside_a_turn(tmp_path):
    bad = {"id": "c2", "domain": "d", "turns": [{"role": "user"}]}
    path = _write(tmp_path, [json.dumps(bad)])
    _check(run_cli("build", "--input", str(path), "--out", str(tmp_path / "out")), "in.jsonl:1", "missing required field 'turns/0/text'")


def test_empty_conversation_and_empty_turn(tmp_path):
    empty_conv = {"id": "c2", "domain": "d", "turns": []}
    empty_turn = {"id": "c3", "domain": "d", "turns": [{"role": "user", "text": "   "}]}
    path = _write(tmp_path, [json.dumps(empty_conv), json.dumps(empty_turn)])
    result = run_cli("build", "--input", str(path), "--out", str(tmp_path / "out"))
    _check(result, "in.jsonl:1: conversation 'c2'", "field 'turns': empty", "in.jsonl:2: conversation 'c3'", "field 'turns/0/text': empty text")


def test_non_utf8_bytes(tmp_path):
    path = _write(tmp_path, json.dumps(GOOD).encode() + b"\n" + b'{"id": "c\xff\xfe"}\n')
    _check(run_cli("build", "--input", str(path), "--out", str(tmp_path / "out")), "in.jsonl:2", "not valid UTF-8")


def test_duplicate_conversation_ids(tmp_path):
    path = _write(tmp_path, [json.dumps(GOOD), json.dumps(GOOD)])
    _check(run_cli("build", "--input", str(path), "--out", str(tmp_path / "out")), "duplicate conversation id 'c1'")


def test_last_turn_not_user(tmp_path):
    conv = {"id": "c1", "domain": "d", "turns": [{"role": "user", "text": "hi"}, {"role": "assistant", "text": "hello"}]}
    path = _write(tmp_path, [json.dumps(conv)])
    _check(run_cli("build", "--input", str(path), "--out", str(tmp_path / "out")), "in.jsonl:1", "'turns/1/role'", "last turn must be a user turn")


def test_config_naming_a_missing_file(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("name: x\ninput:\n  path: nowhere/conversations.json\n")
    _check(run_cli("build", "--config", str(cfg), "--out", str(tmp_path / "out")), "cfg.yaml", "input.path", "file not found")


def test_config_with_unknown_field(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("name: x\nseeed: 3\n")
    _check(run_cli("build", "--config", str(cfg), "--out", str(tmp_path / "out")), "cfg.yaml", "seeed")


def test_missing_input_file(tmp_path):
    _check(run_cli("build", "--input", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "out")), "nope.jsonl", "not found")


def test_stage_before_its_input_exists(tmp_path):
    _check(run_cli("dedup", "--out", str(tmp_path / "out")), "validated.jsonl", "run `clariedge validate` first")
