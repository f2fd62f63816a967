"""Prompt files: `prompts/<name>.md` = YAML front matter (name, version, schema, system) + a Jinja2 user template.

The file's sha256 goes into provenance, so an edited prompt is visible in every record it produced.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import frontmatter
import jinja2
import yaml

from builder.errors import InputError
from builder.io import dumps
from builder.llm.spec import RequestSpec
from builder.resources import resource

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
# Compact, sorted, unescaped JSON: the exact string a few-shot answer or a trained target looks like.
_ENV.filters["compact_json"] = dumps


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    sha256: str
    system: str
    template: jinja2.Template
    schema: dict[str, Any] | None

    def messages(self, **variables: Any) -> list[dict[str, str]]:
        variables.setdefault("max_doc_chars", 1500)
        try:
            user = self.template.render(**variables).strip()
        except jinja2.UndefinedError as err:
            raise InputError(f"prompt {self.name}: {err.message}") from None
        out = [{"role": "system", "content": self.system.strip()}] if self.system.strip() else []
        return out + [{"role": "user", "content": user}]

    def spec(self, model: str, params: dict[str, Any] | None = None, **variables: Any) -> RequestSpec:
        return RequestSpec(model=model, messages=self.messages(**variables), params=dict(params or {}),
                           schema=self.schema, schema_name=self.name, prompt_name=self.name,
                           prompt_version=self.version)

    def info(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "sha256": self.sha256}


@lru_cache(maxsize=None)
def load_prompt(name: str) -> Prompt:
    try:
        path = resource(f"prompts/{name}.md")
    except FileNotFoundError:
        raise InputError(f"prompt {name!r} not found (looked for prompts/{name}.md)") from None
    raw = path.read_text(encoding="utf-8")
    try:
        post = frontmatter.loads(raw)
        template = _ENV.from_string(post.content)
    except (yaml.YAMLError, jinja2.TemplateSyntaxError) as err:
        raise InputError(f"{path}: bad prompt file ({err})") from None
    for required in ("name", "version"):
        if required not in post.metadata:
            raise InputError(f"{path}: front matter lacks '{required}'")
    schema = post.get("schema")
    if schema is not None and not isinstance(schema, dict):
        raise InputError(f"{path}: front matter 'schema' must be a JSON Schema object")
    return Prompt(
        name=str(post["name"]),
        version=str(post["version"]),
        sha256=hashlib.sha256(raw.encode("utf-8")).hexdigest(),
        system=str(post.get("system", "")),
        template=template,
        schema=schema,
    )
