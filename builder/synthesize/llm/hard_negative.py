"""Standalone turn -> elliptical or pronominal follow-up that its own history resolves (answer, don't ask)."""

from __future__ import annotations

from typing import Sequence

from builder.llm.prompts import load_prompt
from builder.llm.spec import Result
from builder.record import Record, clear_target
from builder.synthesize.context import TurnContext
from builder.synthesize.llm.base import LLMSettings, Request, failed, prompt_info, register
from builder.synthesize.rejection import Rejection

FORMS = ("elliptical", "pronominal")


@register
class HardNegative:
    name = "hard_negative"
    method = "llm_hard_negative"
    stage = "turns"
    prompts = ("hard_negative",)

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings

    def plan(self, contexts: Sequence[TurnContext]) -> list[Request]:
        """One request per later turn with a history; the form asked for is seeded."""
        prompt, s = load_prompt("hard_negative"), self.settings
        out = []
        for ctx in contexts:
            if ctx.turn <= 1 or not ctx.history:
                continue
            form = ctx.rng(self.method).choice(FORMS)
            spec = prompt.spec(s.model, s.params(), query=ctx.standalone, history=ctx.history, form=form)
            out.append(Request(self.name, spec, ctx, {"form": form}))
        return out

    def parse(self, request: Request, reply: Result) -> Record | Rejection:
        ctx = request.ctx
        if not reply.ok:
            return failed(request, self.method, reply)
        out = reply.value
        rewrite = out["rewrite"].strip()
        if rewrite.lower() == ctx.standalone.strip().lower():
            return ctx.reject(self.method, "llm: the rewrite is still standalone", rewrite)
        turn = out["resolving_turn"] if out["resolving_turn"] < len(ctx.history) else None
        prov = ctx.provenance(self.method, self.version)
        prov["prompt"] = prompt_info(self.prompts)
        return Record(
            domain=ctx.conv.domain, setting="pre_retrieval", history=ctx.history, query=rewrite, documents=[],
            needs_clarification=False, category="hard_negative", interpretations=[ctx.standalone],
            target=clear_target(), provenance=prov,
            resolution={"source": "history", "turn_index": turn, "document_id": None,
                        "referent": out["referent"].strip() or ctx.standalone, "resolved_query": ctx.standalone},
            pair_id=None, clarification_pattern=None,
        )
