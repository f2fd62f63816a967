"""Clear grounded turn -> ambiguous rewrite after an unrelated history (ambiguate), then its clarifying
question (clarify, a follow-up request about the draft)."""

from __future__ import annotations

from typing import Sequence

from builder.llm.prompts import load_prompt
from builder.llm.spec import Result
from builder.record import POSITIVE_CATEGORIES, Record
from builder.synthesize.context import TurnContext, donor_history, pair_id
from builder.synthesize.llm.base import LLMSettings, Request, documents, failed, prompt_info, register
from builder.synthesize.rejection import Rejection

PATTERNS = ("hedge", "list", "open")
AMBIGUOUS_KINDS = ("underspecified_entity", "unresolved_reference", "missing_parameter", "multiple_interpretations")


@register
class Ambiguate:
    name = "ambiguate"
    method = "llm_ambiguate"
    stage = "turns"
    prompts = ("ambiguate", "clarify")
    followups = 1  # one clarify per draft

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings

    def plan(self, contexts: Sequence[TurnContext]) -> list[Request]:
        """One ambiguate request per turn with passages; the category asked for and the donor history are seeded."""
        prompt, s = load_prompt("ambiguate"), self.settings
        out = []
        for ctx in contexts:
            docs = documents(ctx.relevant_passages())
            if not docs:
                continue
            rng = ctx.rng(self.method)
            history, source = donor_history(ctx, rng)
            category = rng.choice(AMBIGUOUS_KINDS)
            spec = prompt.spec(s.model, s.params(), query=ctx.standalone, documents=docs, history=history,
                               category=category)
            out.append(Request(self.name, spec, ctx, {"history": history, "history_source": source,
                                                      "category": category, "documents": docs}))
        return out

    def parse(self, request: Request, reply: Result) -> Record | Rejection | Request:
        if request.prompt == "ambiguate":
            return self.parse_draft(request, reply)
        return self.parse_question(request, reply)

    def parse_draft(self, request: Request, reply: Result) -> Rejection | Request:
        """The ambiguous rewrite -> the clarify request about it (or why it is no rewrite)."""
        ctx = request.ctx
        if not reply.ok:
            return failed(request, self.method, reply)
        draft = reply.value
        query = draft["ambiguous_query"].strip()
        if query.lower() == ctx.standalone.strip().lower():
            return ctx.reject(self.method, "llm: the rewrite equals the clear query", query)
        pattern = ctx.rng("llm_clarify").choice(PATTERNS)
        s = self.settings
        spec = load_prompt("clarify").spec(s.model, s.params(), query=query, history=request.data["history"],
                                           documents=[], interpretations=draft["interpretations"], pattern=pattern)
        return Request(self.name, spec, ctx, {**request.data, "draft": draft, "query": query})

    def parse_question(self, request: Request, reply: Result) -> Record | Rejection:
        """The clarifying question -> the positive record."""
        ctx, data = request.ctx, request.data
        if not reply.ok:
            return failed(request, self.method, reply, data["query"])
        question = reply.value["question"].strip()
        if not question.endswith("?"):
            return ctx.reject(self.method, "llm: the clarification is not a question", data["query"])
        draft = data["draft"]
        category = draft["category"] if draft["category"] in POSITIVE_CATEGORIES else data["category"]
        prov = ctx.provenance(self.method, self.version, data["history_source"], [d["id"] for d in data["documents"]])
        prov["prompt"] = prompt_info(self.prompts)
        return Record(
            domain=ctx.conv.domain, setting="pre_retrieval", history=data["history"], query=data["query"],
            documents=[], needs_clarification=True, category=category, interpretations=list(draft["interpretations"]),
            target={"clarification": question}, provenance=prov, resolution=None,
            pair_id=pair_id(ctx, self.method), clarification_pattern=reply.value["pattern"],
        )
