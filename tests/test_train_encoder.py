"""The cross-encoder candidate, on a tiny random BERT built from a config (nothing is downloaded)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from builder.release import load_release  # noqa: E402
from builder.train.baseline import BaselinePredictor, train_baseline  # noqa: E402
from builder.train.encoder import EncoderSettings, pair_text  # noqa: E402

from train_helpers import make_records, tiny_bert, write_hand_release  # noqa: E402


def test_pair_text_puts_the_latest_turn_first_and_cuts_passages():
    record = {"query": "Is it open?", "history": [{"role": "user", "content": "old turn"},
                                                  {"role": "assistant", "content": "new turn"}],
              "documents": [{"id": "d", "title": "T", "text": "x" * 500}]}
    query, context = pair_text(record, EncoderSettings(max_doc_chars=10))
    assert query == "Is it open?"
    assert context == "assistant: new turn | user: old turn || passages: T: " + "x" * 10
    assert pair_text({"query": "q", "history": [], "documents": []}, EncoderSettings())[1] == "no history"


def test_encoder_is_a_candidate_chosen_on_validation(tmp_path):
    release = write_hand_release(tmp_path / "dist", train=10, validation=2, test=2)
    splits = load_release(release)
    base = tiny_bert(tmp_path / "tiny", [" ".join(pair_text(r, EncoderSettings())) for rs in splits.values()
                                         for r in rs])
    settings = EncoderSettings(epochs=3, batch_size=8, lr=1e-3, max_length=96, threads=1)
    meta = train_baseline(release, tmp_path / "m", embedder="tfidf", log=lambda _: None, encoder=True,
                          encoder_settings=settings, encoder_base=str(base))
    scores = meta["selection"]["scores"]
    assert "cross-encoder" in scores and len(meta["encoder"]["history"]) == 3
    # the saved classifier is the first of the best on validation
    best = max(scores.values())
    assert meta["classifier"] == next(name for name, acc in scores.items() if acc == best)
    saved = {p.name for p in (tmp_path / "m").iterdir()}
    assert ("encoder" in saved) == (meta["classifier"] == "cross-encoder")
    # whichever won, the reloaded predictor reproduces the test accuracy written in the metadata
    test = splits["test"]
    predictor = BaselinePredictor.load(tmp_path / "m")
    preds = predictor.predict(test)
    acc = np.mean([p.needs_clarification == r["needs_clarification"] for p, r in zip(preds, test)])
    assert acc == pytest.approx(meta["metrics"]["test"]["accuracy"])
    assert json.loads((tmp_path / "m" / "metadata.json").read_text())["classifier"] == meta["classifier"]


def test_a_saved_encoder_reloads_with_the_same_probabilities(tmp_path):
    from builder.train.encoder import ENCODER_DIR, EncoderClassifier, train_encoder

    train, val = make_records(6, 1), make_records(2, 2, offset=6)
    base = tiny_bert(tmp_path / "tiny", [" ".join(pair_text(r, EncoderSettings())) for r in train + val])
    settings = EncoderSettings(epochs=1, batch_size=8, max_length=64, threads=1)
    summary = train_encoder(train, val, tmp_path / "m", settings, base=str(base), log=lambda _: None)
    assert summary["steps"] == summary["total_steps"] == 4 and summary["stop"] == "epochs done"
    clf = EncoderClassifier(tmp_path / "m" / ENCODER_DIR, summary["settings"])
    probs = clf.probabilities(val)
    assert probs.shape == (len(val),) and ((probs > 0) & (probs < 1)).all()
    assert float(((probs >= 0.5) == np.array([r["needs_clarification"] for r in val])).mean()) == pytest.approx(
        summary["validation_accuracy"])
