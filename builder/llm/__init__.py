"""A small engine for OpenAI-compatible chat endpoints. It knows nothing about ClariEdge.

Names are imported on first use, so importing `builder.llm.cli` (for `clariedge --help`) does not
load the openai client.
"""

from importlib import import_module

_EXPORTS = {
    "arun_requests": "engine", "estimate": "engine", "reask_spec": "engine", "run_requests": "engine",
    "Prompt": "prompts", "load_prompt": "prompts",
    "ParseError": "parse", "extract_json": "parse", "parse_reply": "parse",
    "EngineConfig": "spec", "Estimate": "spec", "RequestSpec": "spec", "Result": "spec", "RunStats": "spec",
    "Tally": "spec", "MODES": "spec", "resolve_cache_dir": "spec", "names_format": "engine",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'builder.llm' has no attribute {name!r}")
    return getattr(import_module(f"builder.llm.{_EXPORTS[name]}"), name)
