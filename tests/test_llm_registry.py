"""The LLM-generator registry (builder/synthesize/llm/): names, versions and config keys come from it, and a
parser edited after a build re-pays nothing (parse runs after the cache). Real client, fake server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fake_openai import FakeOpenAI  # noqa: E402
from test_llm_generators import responder  # noqa: E402

from builder.config import LLMConfig, apply_overrides, load_config
from builder.errors import InputError
from builder.llm import load_prompt
from builder.record import SPLITS
from builder.release import load_release
from builder.synthesize.base import load_rules
from builder.synthesize.llm.base import REGISTRY, load_llm, register, turn_generators
from builder.synthesize.llm.hard_negative import HardNegative

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "configs" / "demo-llm.yaml"


def test_registry_names_versions_from_the_prompt_files():
    registry = load_llm()
    assert set(turn_generators()) == {"ambiguate", "hard_negative"}
    assert {n: c.stage for n, c in registry.items()} == {"ambiguate": "turns", "hard_negative": "turns",
                                                          "naturalize": "records", "verify": "records"}
    for cls in registry.values():
        assert cls.version == "+".join(f"{p}@{load_prompt(p).version}" for p in cls.prompts)
    assert registry["ambiguate"].prompts == ("ambiguate", "clarify")
    # LLM methods and rule names share the manifest's `generators`: none may shadow another.
    assert not {c.method for c in registry.values()} & set(load_rules())


def test_register_refuses_a_hand_written_version_and_a_missing_prompt_tuple():
    class Versioned:
        name, method, stage, prompts, version = "x_versioned", "llm_x", "turns", ("hard_negative",), "2"

        def plan(self, contexts):
            return []

        def parse(self, request, reply):
            return None

    with pytest.raises(TypeError, match="'version' comes from its prompts"):
        register(Versioned)
    del Versioned.version
    Versioned.prompts = "hard_negative"  # a string, not a tuple
    with pytest.raises(TypeError, match="tuple of prompt names"):
        register(Versioned)
    assert "x_versioned" not in REGISTRY


def test_config_keys_are_checked_against_the_registry(tmp_path):
    import yaml

    data = yaml.safe_load(CONFIG.read_text())
    data["llm"]["generators"] = {"ambiguate": 1.0, "paraphrase": 0.5}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match=r"llm\.generators.*unknown LLM generator 'paraphrase'; known: ambiguate, "
                                         r"hard_negative"):
        load_config(path)
    data["llm"]["generators"] = {"verify": 1.0}  # a records step is no generator over turns
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match="unknown LLM generator 'verify'"):
        load_config(path)
    assert LLMConfig().generators == {"ambiguate": 1.0, "hard_negative": 1.0}  # the default: every registered one


# --- editing a parser never re-pays ----------------------------------------------------------------------


class PronounReferentFix(HardNegative):
    """A parser fix after the build: a bare pronoun is no referent; fall back to the standalone question."""

    def parse(self, request, reply):
        out = super().parse(request, reply)
        if getattr(out, "resolution", None) and out.resolution["referent"].lower() in {"it", "they", "them"}:
            out.resolution = {**out.resolution, "referent": out.resolution["resolved_query"]}
        return out


def _build(config, out: Path, cache: Path) -> dict[str, list[dict]]:
    from builder.build import build

    build(config, out, cache_dir=str(cache))
    return load_release(out / config.name / config.version)


def _by_method(splits: dict[str, list[dict]], method: str) -> dict[str, dict]:
    return {r["id"]: r for s in SPLITS for r in splits[s] if r["provenance"]["method"] == method}


def test_an_edited_parser_rebuilds_from_the_cache_with_zero_requests(tmp_path, monkeypatch):
    server = FakeOpenAI(responder=responder).start()
    try:
        config = apply_overrides(load_config(CONFIG), base_url=server.url)
        before = _build(config, tmp_path / "a", tmp_path / "cache")
        paid = server.requests
        assert paid > 0
        monkeypatch.setitem(REGISTRY, "hard_negative", PronounReferentFix)  # the parser alone; the client is real
        after = _build(config, tmp_path / "b", tmp_path / "cache")
        assert server.requests == paid, "an edited parser must be served from the cache"
    finally:
        server.stop()
    old, new = _by_method(before, "llm_hard_negative"), _by_method(after, "llm_hard_negative")
    assert old and set(old) == set(new)  # the same records (ids leave the resolution out) ...
    assert {r["resolution"]["referent"] for r in old.values()} == {"it"}  # what the fake model answers
    assert all(r["resolution"]["referent"] == r["resolution"]["resolved_query"] for r in new.values())  # ... fixed
    for method in ("llm_ambiguate", "followup_twins"):
        assert _by_method(before, method) == _by_method(after, method)  # nothing else moved
