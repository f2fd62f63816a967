"""A small engine for OpenAI-compatible chat endpoints. It knows nothing about ClariEdge."""

from builder.llm.engine import arun_requests, estimate, reask_spec, run_requests
from builder.llm.prompts import Prompt, load_prompt
from builder.llm.parse import ParseError, extract_json, parse_reply
from builder.llm.spec import EngineConfig, Estimate, RequestSpec, Result, RunStats, resolve_cache_dir

__all__ = [
    "EngineConfig", "Estimate", "ParseError", "Prompt", "load_prompt", "RequestSpec", "Result", "RunStats",
    "arun_requests", "estimate", "extract_json", "parse_reply", "reask_spec", "resolve_cache_dir", "run_requests",
]
