"""An independent judge re-labels each record an LLM wrote; a disagreement on needs_clarification drops or
flags it (`llm.verify`). The audit's judge suspects ask the same requests."""

from __future__ import annotations

from typing import Sequence

from builder.llm.prompts import load_prompt
from builder.llm.spec import Result
from builder.synthesize.llm.base import LLMSettings, Request, register


@register
class Verify:
    name = "verify"
    method = "verify"
    stage = "records"
    prompts = ("verify",)

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings

    @classmethod
    def active(cls, settings: LLMSettings) -> bool:
        return settings.verify != "off"

    def plan(self, records: Sequence[dict]) -> list[Request]:
        prompt, s = load_prompt("verify"), self.settings
        judge = {**s.params(), "temperature": 0.0}  # a judge should not be creative
        return [Request(self.name, prompt.spec(s.model, judge, history=r["history"], query=r["query"],
                                               documents=r["documents"], setting=r["setting"]), None, {"record": r})
                for r in records]

    def parse(self, request: Request, reply: Result) -> str | None:
        """Why the record is disputed, or None when the judge agrees with its label."""
        if not reply.ok:
            return f"verify: no verdict ({reply.error})"
        if reply.value["needs_clarification"] != request.data["record"]["needs_clarification"]:
            said = "needs clarification" if reply.value["needs_clarification"] else "clear"
            return f"verify: judge says {said} ({reply.value['reason'][:160]})"
        return None
