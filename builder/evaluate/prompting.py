"""Prompt files for evaluation (`prompts/predict_clarification.md`, `prompts/judge_clarification.md`).

They share the loader of the LLM engine: YAML front matter (name, version, system, schema) + a Jinja2 template.
"""

from builder.llm.prompts import Prompt, load_prompt

__all__ = ["Prompt", "load_prompt"]
