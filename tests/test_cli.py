"""Command-line conventions: --version, completion, renamed options that still work, NO_COLOR, config overrides."""

from __future__ import annotations

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
