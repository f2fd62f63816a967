"""A prompted OpenAI-compatible model as a predictor, zero-shot or few-shot (prompts/predict_clarification.md)."""

from __future__ import annotations

import random
from typing import Any

from builder.evaluate.chat import Endpoint, complete_many
from builder.predict import Prediction, prediction_from_output
from builder.evaluate.prompting import load_prompt

PROMPT = "predict_clarification"


def pick_shots(pool: list[dict], k: int, seed: int = 0) -> list[dict]:
    """k examples, alternating positive/negative as far as the pool allows; deterministic by seed."""
    if k <= 0 or not pool:
        return []
    rng = random.Random(seed)
    pos = sorted((r for r in pool if r["needs_clarification"]), key=lambda r: r["id"])
    neg = sorted((r for r in pool if not r["needs_clarification"]), key=lambda r: r["id"])
    rng.shuffle(pos)
    rng.shuffle(neg)
    shots = []
    while len(shots) < k and (pos or neg):
        for side in (pos, neg):
            if side and len(shots) < k:
                shots.append(side.pop())
    return shots


class OpenAIPredictor:
    def __init__(
        self,
        model: str,
        base_url: str = "http://127.0.0.1:8000/v1",
        shots: int = 0,
        shot_pool: list[dict] | None = None,
        seed: int = 0,
        **endpoint_options: Any,
    ):
        self.endpoint = Endpoint(base_url=base_url, model=model, seed=seed, **endpoint_options)
        self.prompt = load_prompt(PROMPT)
        self.examples = pick_shots(shot_pool or [], shots, seed)
        if shots and len(self.examples) < shots:
            from builder.errors import InputError

            raise InputError(f"--shots {shots}: only {len(self.examples)} examples available in the shot pool")
        self.name = f"openai:{model}" + (f" ({shots}-shot)" if shots else " (zero-shot)")

    def describe(self) -> dict[str, Any]:
        return {"kind": "openai", **self.endpoint.describe(), "shots": [e["id"] for e in self.examples],
                "prompt": self.prompt.info()}

    def predict(self, records: list[dict]) -> list[Prediction]:
        shot_ids = {e["id"] for e in self.examples}
        leaked = [r["id"] for r in records if r["id"] in shot_ids]
        if leaked:
            from builder.errors import InputError

            raise InputError(f"few-shot example {leaked[0]} is also an evaluation record; draw shots from another split")
        conversations = [self.prompt.messages(record=r, examples=self.examples) for r in records]
        replies = complete_many(self.endpoint, conversations, prompt=self.prompt, label="predict")
        out = []
        for record, (_, text, error) in zip(records, replies):
            # Parsed here, not by the engine: malformed output is the model's error and counts as wrong.
            pred = prediction_from_output(record["id"], text or "")
            if error and pred.needs_clarification is None:
                pred.error = error if not text else f"{pred.error}; {error}"
            out.append(pred)
        return out
