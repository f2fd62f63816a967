"""Prompt files load through builder.resources, carry a valid response schema, and render."""

from __future__ import annotations

import jsonschema
import pytest

from builder.errors import InputError
from builder.llm import load_prompt
from builder.resources import resource

VARS = dict(
    query="how long is it?",
    history=[{"role": "user", "content": "Tell me about the Penobscot River."}],
    documents=[{"id": "d1", "title": "Penobscot River", "text": "The Penobscot River is 109 miles long."}],
    category="underspecified_entity",
    interpretations=["How long is the Penobscot River?", "How long is the Kennebec River?"],
    pattern="hedge",
    form="pronominal",
    setting="post_retrieval",
    clarification="Do you mean the Penobscot or the Kennebec?",
)


@pytest.mark.parametrize("name", ["ambiguate", "clarify", "hard_negative", "verify", "naturalize"])
def test_prompt_loads_renders_and_has_a_valid_schema(name):
    prompt = load_prompt(name)
    assert prompt.name == name and prompt.version
    assert len(prompt.sha256) == 64
    jsonschema.Draft202012Validator.check_schema(prompt.schema)
    messages = prompt.messages(**VARS)
    assert messages[0]["role"] == "system" and messages[-1]["role"] == "user"
    assert "how long is it?" in messages[-1]["content"]
    spec = prompt.spec("m", {"temperature": 0}, **VARS)
    assert (spec.prompt_name, spec.prompt_version, spec.schema) == (name, prompt.version, prompt.schema)


def test_prompt_hash_is_the_file_hash():
    import hashlib

    assert load_prompt("clarify").sha256 == hashlib.sha256(resource("prompts/clarify.md").read_bytes()).hexdigest()


def test_missing_variable_and_missing_prompt_are_input_errors():
    with pytest.raises(InputError, match="query"):
        load_prompt("clarify").messages(history=[], documents=[], interpretations=[], pattern="open")
    with pytest.raises(InputError, match="not found"):
        load_prompt("no_such_prompt")
