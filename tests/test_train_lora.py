"""LoRA train → save → reload → predict on a tiny random Llama whose tokenizer is trained here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")
pytest.importorskip("tokenizers")

from builder.errors import InputError  # noqa: E402
from builder.record import model_output  # noqa: E402
from builder.release import load_release  # noqa: E402
from builder.train.lora import LoraPredictor, LoraSettings, encode, prompt_text, resolve_base, train_lora  # noqa: E402

from train_helpers import write_hand_release, tiny_llama  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from builder.cli import main; main()"]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_hand_release(tmp_path_factory.mktemp("dist"), train=6, validation=1, test=2)


@pytest.fixture(scope="module")
def base(tmp_path_factory, release) -> Path:
    from transformers import AutoTokenizer

    splits = load_release(release)
    # The tokenizer sees the prompts and targets it will encode, as a real base's would.
    probe = tiny_llama(tmp_path_factory.mktemp("probe"), ["warm up"])
    tok = AutoTokenizer.from_pretrained(probe)
    texts = [prompt_text(r, tok, 400) + model_output(r) for rs in splits.values() for r in rs]
    return tiny_llama(tmp_path_factory.mktemp("tiny-llama"), texts)


# A random model: a high learning rate and every linear layer, so 80 steps are enough to learn the format.
SETTINGS = dict(r=8, alpha=16, dropout=0.0, lr=2e-2, epochs=40, batch_size=6, eval_every=10, patience=50,
                max_length=512, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                "down_proj"], max_steps=80, log_every=5)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, release, base) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("adapter")
    config = train_lora(str(base), release, out, LoraSettings(**SETTINGS), device="cpu", log=lambda _: None)
    return out, config


def test_encode_masks_the_prompt_and_ends_with_eos(release, base):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(base)
    record = load_release(release)["train"][2]  # post_retrieval: passages are in the prompt
    example, cut = encode(record, tok, LoraSettings(max_length=512))
    target = [t for t in example["labels"] if t != -100]
    assert not cut
    assert tok.decode(target[:-1]) == model_output(record)
    assert target[-1] == tok.eos_token_id
    prompt = tok.decode(example["input_ids"][: len(example["input_ids"]) - len(target)])
    assert record["documents"][0]["title"] in prompt and prompt.endswith("<|assistant|>")
    # Cut from the left: the query (at the end) survives a tight max_length.
    tight = len(target) + 8
    short, cut = encode(record, tok, LoraSettings(max_length=tight))
    assert cut and len(short["input_ids"]) == tight
    assert tok.decode(short["input_ids"]).endswith(model_output(record) + "</s>")


def test_training_lowers_the_loss_and_saves_adapter_log_and_config(trained):
    out, config = trained
    assert (out / "adapter_config.json").is_file() and (out / "adapter_model.safetensors").is_file()
    log = [json.loads(line) for line in (out / "training_log.jsonl").read_text().splitlines()]
    train_losses = [row["train_loss"] for row in log if "train_loss" in row]
    val_losses = [row["validation_loss"] for row in log if "validation_loss" in row]
    assert train_losses[-1] < 0.5 * train_losses[0]
    assert min(val_losses) < val_losses[0]  # step-0 loss is the untrained adapter's
    saved = json.loads((out / "train_config.json").read_text())
    assert saved["kind"] == "clariedge-lora" and saved["steps"] == 80 and saved["stop"] == "step cap 80"
    assert saved["settings"]["r"] == 8 and saved["prompt"]["name"] == "lora_instruction"
    assert config["best_validation_loss"] == min(val_losses)


def test_reloaded_adapter_predicts_parseable_json(trained, release, base):
    out, _ = trained
    test = load_release(release)["test"]
    predictor = LoraPredictor(str(base), out, batch_size=4, max_new_tokens=64, device="cpu")
    predictions = predictor.predict(test)
    assert [p.id for p in predictions] == [r["id"] for r in test]
    parsed = [p for p in predictions if p.needs_clarification is not None]
    assert len(parsed) == len(test), [p.raw for p in predictions if p.error]
    # The frequent target, CLEAR, is learnt exactly.
    assert any(p.raw.strip() == '{"clarification":"CLEAR"}' for p in predictions)


def test_early_stopping_stops_when_validation_loss_stalls(tmp_path, release, base):
    # lr=0 never improves on the step-0 loss: stop after `patience` evaluations.
    settings = LoraSettings(**{**SETTINGS, "lr": 0.0, "patience": 2, "eval_every": 2, "max_steps": 50})
    config = train_lora(str(base), release, tmp_path, settings, device="cpu", log=lambda _: None)
    assert config["steps"] == 4 and config["stop"].startswith("early stop")
    assert (tmp_path / "adapter_config.json").is_file()  # the step-0 adapter is the best one


def test_bad_base_and_bad_adapter_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="not a model directory"):
        resolve_base(str(tmp_path))
    with pytest.raises(InputError, match="no adapter_config.json"):
        LoraPredictor(str(tmp_path), tmp_path)


def test_cli_predict_writes_a_predictions_file(trained, release, base, tmp_path):
    out, _ = trained
    preds = tmp_path / "preds.jsonl"
    proc = subprocess.run([*CLI, "predict", "--base", str(base), "--adapter", str(out), "--release",
                           str(release), "--split", "test", "--out", str(preds), "--batch-size", "4",
                           "--max-new-tokens", "64", "--device", "cpu"],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in preds.read_text().splitlines()]
    assert len(rows) == 10 and {"id", "output", "needs_clarification", "error"} <= set(rows[0])
    assert "malformed (counted as wrong)" in proc.stderr
