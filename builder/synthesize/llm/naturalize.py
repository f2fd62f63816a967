"""Post-edit the wording of rule-based records (query and clarification); labels are kept (`llm.naturalize`).
An edited record gets a new id (the query changed) and is verified again."""

from __future__ import annotations

from typing import Sequence

from builder.llm.prompts import load_prompt
from builder.llm.spec import Result
from builder.record import Record
from builder.synthesize.llm.base import LLMSettings, Request, prompt_info, register


@register
class Naturalize:
    name = "naturalize"
    method = "naturalize"
    stage = "records"
    prompts = ("naturalize",)

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings

    @classmethod
    def active(cls, settings: LLMSettings) -> bool:
        return settings.naturalize

    def plan(self, records: Sequence[dict]) -> list[Request]:
        prompt, s = load_prompt("naturalize"), self.settings
        return [Request(self.name, prompt.spec(s.model, s.params(), history=r["history"], query=r["query"],
                                               clarification=r["target"]["clarification"]), None, {"record": r})
                for r in records]

    def parse(self, request: Request, reply: Result) -> dict | None:
        """The edited record, or None to keep the original (no reply, or a clear record no longer CLEAR)."""
        record = request.data["record"]
        clear = record["target"]["clarification"] == "CLEAR"
        if not reply.ok or (clear and reply.value["clarification"].strip() != "CLEAR"):
            return None
        new = dict(record, id="", query=reply.value["query"].strip(),
                   target={"clarification": reply.value["clarification"].strip()})
        prov = dict(record["provenance"])
        prov["method"] = f"{prov['method']}+{self.method}"
        prov["method_version"] = f"{prov['method_version']}+{self.version}"
        prov["prompt"] = prompt_info(self.prompts)
        new["provenance"] = prov
        return Record.from_dict(new).to_dict()  # id recomputed from the new text
