"""Command-line conventions: --version, completion, renamed options that still work, NO_COLOR, config overrides."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from builder import __version__
from builder.cli import app
from builder.cli_options import error_line, old_option, renamed
from builder.config import BuildConfig, apply_overrides, load_config
from builder.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from builder.cli import main; main()"]


def test_version_and_completion():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"clariedge {__version__}"
    assert "--install-completion" in CliRunner().invoke(app, ["--help"]).output


def test_old_spellings_still_reach_the_config_with_a_note(tmp_path):
    cmd = [*CLI, "build", "--config", str(ROOT / "configs/demo-llm.yaml"), "--model", "old-name", "--dry-run",
           "--cache", str(tmp_path / "cache"), "--out", str(tmp_path / "dist")]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "dry run, old-name at" in proc.stdout + proc.stderr
    assert "--model is deprecated" in proc.stderr and "use --llm-model" in proc.stderr
    assert "--cache is deprecated" in proc.stderr and "use --cache-dir" in proc.stderr
    # Hidden: the help names only the new spellings.
    help_text = CliRunner().invoke(app, ["build", "--help"], env={"COLUMNS": "200"}).output
    assert "--llm-model" in help_text and "--cache-dir" in help_text
    assert "--model " not in help_text and "--cache " not in help_text


def test_renamed_prefers_the_new_spelling(capsys):
    assert renamed("new", None, "--old", "--new") == "new"
    assert capsys.readouterr().err == ""
    assert renamed(None, "old", "--old", "--new") == "old"
    assert renamed("new", "old", "--old", "--new") == "new"
    assert capsys.readouterr().err.count("--old is deprecated") == 2


@pytest.mark.parametrize("no_color, colored", [("", True), ("1", False)])
def test_error_line_honours_no_color(monkeypatch, no_color, colored):
    monkeypatch.setenv("NO_COLOR", no_color)
    demo = typer.Typer()

    @demo.command()
    def fails(old: str = old_option("--old", "--new")) -> None:
        error_line("something is wrong")

    result = CliRunner().invoke(demo, [], color=True)
    assert "error: something is wrong" in result.output
    assert ("\x1b[" in result.output) is colored


def test_apply_overrides_copies_and_checks(tmp_path):
    conversations = tmp_path / "My_Chats.jsonl"
    conversations.write_text("")
    base = BuildConfig()
    cfg = apply_overrides(base, input=conversations, fmt="generic", seed=7, name_from_input=True)
    assert (cfg.input.path, cfg.input.format, cfg.seed, cfg.name) == (str(conversations.resolve()), "generic", 7, "clariedge-my-chats")
    assert base == BuildConfig(), "the config passed in is not changed"
    assert apply_overrides(base, input=conversations).name == base.name
    with pytest.raises(InputError, match="file not found"):
        apply_overrides(base, input=tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="need a config with an `llm:` section"):
        apply_overrides(base, llm_model="m")
    judged = apply_overrides(base, llm_model="m", base_url="http://127.0.0.1:9/v1", default_llm=True)
    assert (judged.llm.model, judged.llm.endpoint.base_url) == ("m", "http://127.0.0.1:9/v1") and base.llm is None
    llm = load_config(ROOT / "configs/demo-llm.yaml")
    assert apply_overrides(llm, llm_model="other").llm.model == "other" and llm.llm.model != "other"


# --- renamed options of publish, diff and llm: the new spelling, and the old one still working with a note ---


def _note(old: str, new: str) -> str:
    return f"note: {old} is deprecated and goes away in the next minor version; use {new}"


def test_publish_takes_release_option_and_the_old_positional_with_a_note(tmp_path, monkeypatch):
    from fake_hub import FakeHub
    from publish_helpers import make_splits, write_test_release

    release = write_test_release(tmp_path / "dist", "1.0.0", make_splits())
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_TOKEN", "hf_cliToken")
    note = _note("RELEASE as an argument", "--release RELEASE")
    with FakeHub("hf_cliToken") as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        new = CliRunner().invoke(app, ["publish", "--release", str(release), "--repo", "org/new", "--backoff", "0"])
        old = CliRunner().invoke(app, ["publish", str(release), "--repo", "org/old", "--backoff", "0"])
        missing = CliRunner().invoke(app, ["publish", "--repo", "org/none"])
        assert new.exit_code == 0 and old.exit_code == 0, new.output + old.output
        assert note in old.stderr and "deprecated" not in new.output
        unhashed = lambda text: re.sub(r"commit [0-9a-f]{10}", "commit …", text)  # noqa: E731 (commits differ)
        assert unhashed(old.stdout.replace("org/old", "org/new")) == unhashed(new.stdout)
        published = [dict(hub.repos[repo].resolve("v1.0.0").files) for repo in ("org/old", "org/new")]
        cards = [files.pop("README.md") for files in published]  # each card names its own repo
        assert published[0] == published[1] and len(published[0]) > 1 and all(b"org/" in card for card in cards)
        assert missing.exit_code == 2 and "--release" in missing.output and "org/none" not in hub.repos
    help_text = CliRunner().invoke(app, ["publish", "--help"], env={"COLUMNS": "200"}).output
    assert "--release" in help_text and "Deprecated" not in help_text


def test_diff_takes_previous_and_release_options_and_the_old_positionals_with_a_note(tmp_path):
    from publish_helpers import make_record, make_splits, write_test_release

    s1 = make_splits(9)
    s2 = {k: list(v) for k, v in s1.items()}
    s2["test"].append(make_record(90))
    a = write_test_release(tmp_path / "dist", "1.0.0", s1)
    b = write_test_release(tmp_path / "dist", "1.1.0", s2)
    note = _note("OLD NEW as arguments", "--previous OLD --release NEW")
    new = CliRunner().invoke(app, ["diff", "--previous", str(a), "--release", str(b), "--json", str(tmp_path / "new.json")])
    old = CliRunner().invoke(app, ["diff", str(a), str(b), "--json", str(tmp_path / "old.json")])
    assert new.exit_code == 0 and old.exit_code == 0, new.output + old.output
    assert note in old.stderr and "deprecated" not in new.output
    assert (tmp_path / "old.json").read_bytes() == (tmp_path / "new.json").read_bytes()
    assert json.loads((tmp_path / "new.json").read_text())["totals"]["added"] == 1
    assert old.stdout.replace("old.json", "new.json") == new.stdout
    # One side named, the other positional: the positional fills the missing side.
    mixed = CliRunner().invoke(app, ["diff", "--previous", str(a), str(b), "--json", str(tmp_path / "mixed.json")])
    assert mixed.exit_code == 0 and (tmp_path / "mixed.json").read_bytes() == (tmp_path / "new.json").read_bytes()
    for args in (["diff", "--previous", str(a)], ["diff", str(a), str(b), str(a)]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2 and "--release" in result.output, args


@pytest.fixture
def llm_cache(tmp_path) -> Path:
    from builder.llm.cache import Cache
    from builder.llm.spec import CACHE_FILE

    db = Cache(tmp_path / "cache" / CACHE_FILE)
    db.put("k1", '{"a": 1}', prompt="clarify@1")
    db.put_failure("k2", "http 500: boom", attempts=3, prompt="clarify@1")
    db.close()
    return tmp_path / "cache"


def test_llm_stats_json_takes_a_file_and_the_old_flag_prints_it_with_a_note(llm_cache, tmp_path):
    new = subprocess.run([*CLI, "llm", "stats", "--cache-dir", str(llm_cache), "--json", str(tmp_path / "s.json")],
                         capture_output=True, text=True, cwd=ROOT)
    assert new.returncode == 0 and "deprecated" not in new.stderr, new.stderr
    assert "responses  1" in new.stdout and f"wrote {tmp_path / 's.json'}" in new.stdout
    info = json.loads((tmp_path / "s.json").read_text())
    assert (info["responses"], info["failures"], info["by_prompt"]) == (1, 1, {"clarify@1": 1})
    # The old flag, last or before another option (never taken as a file name), prints the JSON alone on stdout.
    for args in (["--cache-dir", str(llm_cache), "--json"], ["--json", "--cache-dir", str(llm_cache)]):
        old = subprocess.run([*CLI, "llm", "stats", *args], capture_output=True, text=True, cwd=ROOT)
        assert old.returncode == 0, old.stderr
        assert _note("--json without FILE (JSON on stdout)", "--json FILE") in old.stderr
        assert json.loads(old.stdout) == info
    assert not (ROOT / "--cache-dir").exists()


def test_llm_cache_dir_and_the_old_cache_spelling_with_a_note(llm_cache):
    note = _note("--cache", "--cache-dir")
    new = CliRunner().invoke(app, ["llm", "stats", "--cache-dir", str(llm_cache)])
    old = CliRunner().invoke(app, ["llm", "stats", "--cache", str(llm_cache)])
    assert new.exit_code == 0 and old.exit_code == 0, new.output + old.output
    assert note in old.stderr and "deprecated" not in new.output and old.stdout == new.stdout
    assert "failures   1" in new.stdout
    cleared = CliRunner().invoke(app, ["llm", "clear-failures", "--cache", str(llm_cache)])
    assert cleared.exit_code == 0 and note in cleared.stderr and "cleared 1 failures" in cleared.stdout
    assert "cleared 0 failures" in CliRunner().invoke(app, ["llm", "clear-failures", "--cache-dir", str(llm_cache)]).stdout
    for command in ("stats", "clear-failures"):
        help_text = CliRunner().invoke(app, ["llm", command, "--help"], env={"COLUMNS": "200"}).output
        assert "--cache-dir" in help_text and "--cache " not in help_text and "--json-to-stdout" not in help_text
