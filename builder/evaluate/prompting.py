"""Prompt files: `prompts/<name>.md` = YAML front matter (name, version, system) + a Jinja2 user template."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import frontmatter
import jinja2

from builder.io import dumps
from builder.resources import resource

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
# The exact target string a trained model emits (builder.record.model_output), unescaped unlike `tojson`.
_ENV.filters["compact_json"] = dumps


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    sha256: str
    system: str
    template: jinja2.Template
    schema: dict[str, Any] | None = None  # JSON Schema of the reply, from the front matter

    def messages(self, **variables: Any) -> list[dict[str, str]]:
        variables.setdefault("max_doc_chars", 1500)
        user = self.template.render(**variables).strip()
        return [{"role": "system", "content": self.system.strip()}, {"role": "user", "content": user}]

    def info(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "sha256": self.sha256}


@lru_cache(maxsize=None)
def load_prompt(name: str) -> Prompt:
    path = resource(f"prompts/{name}.md")
    raw = path.read_text(encoding="utf-8")
    post = frontmatter.loads(raw)
    return Prompt(
        name=str(post.get("name", name)),
        version=str(post.get("version", "0")),
        sha256=hashlib.sha256(raw.encode("utf-8")).hexdigest(),
        system=str(post.get("system", "")),
        template=_ENV.from_string(post.content),
        schema=post.get("schema"),
    )
