"""Baseline classifier: scikit-learn over embeddings and hand features of (history, query, documents).

`train_baseline(release, out)` picks a classifier on the validation split, reports validation and
test accuracy, and saves `model.joblib` + `metadata.json`. `BaselinePredictor.load(out)` reloads it.
The model file is a pickle (joblib): load only models you trained yourself.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from builder.errors import InputError
from builder.predict import Prediction
from builder.record import conversations_of, method_of, topic_switch
from builder.io import dumps, read_json, write_json
from builder.train.embed import MiniLMEmbedder, TfidfEmbedder, make_embedder
from builder.train.features import DEMONSTRATIVES, PRONOUNS, feature_matrix, record_texts, words

KIND = "clariedge-baseline"
MODEL_FILE = "model.joblib"
META_FILE = "metadata.json"


def candidates(seed: int, emb_dim: int, n_train: int) -> dict[str, Any]:
    """The classifiers tried; the one with the best validation average precision is kept (ties: the first).
    Their final estimators take `sample_weight` (call inside `routing()`).

    Columns are [query embedding | similarity | hand features]. The query embedding alone is weak
    (twins share the query and differ in context) and the trees overfit it: in grouped 5-fold CV on
    train+validation, leaving it out of a regularised HGB scored best, so that comes first; the
    variant that sees it through a 32-component PCA is still tried.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.decomposition import PCA
    from sklearn.ensemble import HistGradientBoostingClassifier, VotingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    emb = list(range(emb_dim))
    rest = slice(emb_dim, None)

    def logreg():
        return make_pipeline(ColumnTransformer([("context", "passthrough", rest)]),
                             StandardScaler().set_fit_request(sample_weight=False),
                             LogisticRegression(C=1.0, max_iter=3000, random_state=seed).set_fit_request(sample_weight=True))

    def hgb():  # context only, shallow and regularised
        return make_pipeline(ColumnTransformer([("context", "passthrough", rest)]),
                             HistGradientBoostingClassifier(max_iter=400, learning_rate=0.05, max_leaf_nodes=15,
                                                            min_samples_leaf=40, l2_regularization=1.0,
                                                            random_state=seed).set_fit_request(sample_weight=True))

    def hgb_pca():
        pca = PCA(n_components=max(1, min(32, emb_dim, n_train - 1)), random_state=seed)
        return make_pipeline(ColumnTransformer([("query", pca, emb), ("context", "passthrough", rest)]),
                             HistGradientBoostingClassifier(max_iter=300, learning_rate=0.08, random_state=seed)
                             .set_fit_request(sample_weight=True))

    return {
        "vote(logreg,hgb)": VotingClassifier([("logreg", logreg()), ("hgb", hgb())], voting="soft"),
        "vote(logreg,hgb+pca)": VotingClassifier([("logreg", logreg()), ("hgb", hgb_pca())], voting="soft"),
        "hgb": hgb(),
        "logreg": logreg(),
    }


def _labels(records: list[dict]) -> np.ndarray:
    return np.array([bool(r["needs_clarification"]) for r in records], dtype=bool)


# People stay on the conversation's topic in about three of four underspecified questions they ask after a
# history (MTRAG-UN). The release's topic switches are a larger share of its positives (the generators cannot
# make enough same-topic ones), and a model fitted on them as they are learns that a change of topic means
# "clarify". Fitting, selection and the threshold weight them down to this share.
SWITCH_SHARE = 0.25


def sample_weights(records: list[dict], switch_share: float = SWITCH_SHARE) -> np.ndarray:
    """1 per record, except the topic-switch positives: weighted so that they count as `switch_share` of the
    positives asked after a history (left at 1 when they are that few already, or when there are no others)."""
    weights = np.ones(len(records))
    after_history = [i for i, r in enumerate(records) if r["needs_clarification"] and len(r["history"])]
    switches = [i for i in after_history if topic_switch(records[i])]
    own = len(after_history) - len(switches)
    if switches and own and len(switches) / len(after_history) > switch_share:
        weights[switches] = switch_share / (1 - switch_share) * own / len(switches)
    return weights


def routing():
    """scikit-learn's metadata routing, which takes `sample_weight` through pipelines, votes and folds."""
    import sklearn

    return sklearn.config_context(enable_metadata_routing=True)


def _accuracy_by(records: list[dict], pred: np.ndarray, key: Callable[[dict], str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    y = _labels(records)
    for value in sorted({key(r) for r in records}):
        idx = [i for i, r in enumerate(records) if key(r) == value]
        out[value] = {"n": len(idx), "accuracy": float((pred[idx] == y[idx]).mean())}
    return out


def _scores(records: list[dict], pred: np.ndarray) -> dict[str, Any]:
    y = _labels(records)
    if not len(y):
        return {"n": 0}
    return {
        "n": int(len(y)),
        "accuracy": float((pred == y).mean()),
        "by_category": _accuracy_by(records, pred, lambda r: r["category"]),
        "by_setting": _accuracy_by(records, pred, lambda r: r["setting"]),
        # A generator whose records the model gets wrong teaches it nothing it can use (or the wrong thing).
        "by_method": _accuracy_by(records, pred, method_of),
    }


def _release_info(release: Path) -> dict[str, Any]:
    manifest = release / "manifest.json"
    if not manifest.exists():
        return {"path": str(release)}
    data = read_json(manifest)
    return {"path": str(release), "name": data.get("name"), "version": data.get("version")}


def load_splits(release: Path) -> dict[str, list[dict]]:
    from builder.release.layout import open_release

    return open_release(release).load()


def train_baseline(release: Path, out: Path, embedder: str = "auto", seed: int = 13,
                   log=print, encoder: bool = False, encoder_settings: Any = None,
                   encoder_base: str | None = None) -> dict[str, Any]:
    """Train, select on validation, evaluate on test, save. Returns the metadata written.

    With `encoder`, a fine-tuned MiniLM cross-encoder (builder.train.encoder) is one more candidate;
    it is kept only if it beats the scikit-learn models on validation average precision.
    """
    from threadpoolctl import threadpool_limits

    start = time.perf_counter()
    splits = load_splits(release)
    train, val, test = splits["train"], splits["validation"], splits["test"]
    if len({r["needs_clarification"] for r in train}) < 2:
        raise InputError(f"{release}/data/train.parquet: needs both labels to train, has {len(train)} records")
    embed, note = make_embedder(embedder)
    if note:
        log(f"note: {note}")
    embed.fit([t for r in train for t in _texts(r)])
    t0 = time.perf_counter()
    X = {name: feature_matrix(rs, embed).X for name, rs in (("train", train), ("validation", val), ("test", test))}
    feature_seconds = time.perf_counter() - t0
    names = feature_matrix(train[:1], embed).names
    emb_dim = sum(n.startswith("emb_query_") for n in names)
    y_train = _labels(train)

    selection, accuracy = {}, {}
    best_name, best_model, best_score = None, None, -1.0
    # Without a validation split, select on the training split (reported as such).
    Xs, ys = (X["validation"], _labels(val)) if val else (X["train"], y_train)
    w_train, w_val = sample_weights(train), sample_weights(val)
    ws = w_val if val else w_train
    if len(w_train) and w_train.min() < 1:
        log(f"  topic-switch positives weighted {w_train.min():.2f}: {SWITCH_SHARE:.0%} of the positives after a history")
    metric = selection_metric(ys, "validation" if val else "train")
    with routing():
        models = candidates(seed, emb_dim, len(train))
    for name, model in models.items():
        with threadpool_limits(2), routing():  # the machine has 2 cores; more BLAS threads only contend
            model.fit(X["train"], y_train, sample_weight=w_train)
        probs = model.predict_proba(Xs)[:, list(model.classes_).index(True)]
        accuracy[name] = float(((probs >= 0.5) == ys).mean())
        selection[name] = selection_score(ys, probs, ws)
        log(f"  {name:<22} {metric} {selection[name]:.4f} (accuracy {accuracy[name]:.4f})")
        if selection[name] > best_score:
            best_name, best_model, best_score = name, model, selection[name]
    encoder_summary, chosen = None, best_model
    if encoder:
        encoder_summary, chosen, best_name = _encoder_candidate(train, val, Path(out), encoder_settings, encoder_base,
                                                                best_name, best_model, best_score, selection, log)

    def proba(split: str) -> np.ndarray:
        if best_name == ENCODER:
            return chosen.probabilities(splits[split])
        return best_model.predict_proba(X[split])[:, list(best_model.classes_).index(True)]

    threshold, threshold_source = None, "validation F1"
    if best_name != ENCODER:  # refitting the encoder per fold costs minutes; it keeps the validation threshold
        held = [X["train"], X["validation"]] if val else [X["train"]]
        threshold = out_of_fold_threshold(best_model, np.vstack(held), np.concatenate([y_train, _labels(val)]),
                                          _groups(train + val), seed, np.concatenate([w_train, w_val]))
        threshold_source = (f"F1 of out-of-fold probabilities, {FOLDS} folds of train+validation grouped by "
                            "linked conversations")
    if threshold is None:
        threshold, threshold_source = (choose_threshold(_labels(val), proba("validation"), w_val), "validation F1") if val \
            else (0.5, "default")
    log(f"  threshold {threshold:.2f} (best {threshold_source})")
    seconds = time.perf_counter() - start

    def predict(split: str) -> np.ndarray:
        return proba(split) >= threshold if splits[split] else np.array([])

    metrics = {split: _scores(splits[split], predict(split)) for split in ("train", "validation", "test")}
    meta = {
        "kind": KIND,
        "release": _release_info(Path(release)),
        "embedder": embed.state(),
        "embedder_note": note,
        "classifier": best_name,
        "threshold": threshold,
        "threshold_source": threshold_source,
        "selection": {"metric": metric, "scores": selection, "accuracy": accuracy},
        "weights": {"switch_share": SWITCH_SHARE,
                    "topic_switch_positive": float(w_train.min()) if len(w_train) else 1.0},
        "features": names,
        "seed": seed,
        "train_seconds": round(seconds, 2),
        "feature_seconds": round(feature_seconds, 2),
        "metrics": metrics,
        "versions": _versions(),
    }
    if encoder_summary is not None:
        meta["encoder"] = encoder_summary
    save(out, best_model, embed, meta)
    return meta


ENCODER = "cross-encoder"
THRESHOLDS = tuple(round(0.1 + 0.05 * i, 2) for i in range(17))  # 0.10 ... 0.90


def selection_metric(gold: np.ndarray, split: str) -> str:
    return f"{split} average precision" if len(set(gold.tolist())) == 2 else f"{split} accuracy"


def selection_score(gold: np.ndarray, probs: np.ndarray, weights: np.ndarray | None = None) -> float:
    """How a candidate is chosen: the average precision of its probabilities (positive = needs clarification).
    The decision threshold is chosen afterwards, so the model is judged on how it ranks at every threshold, not
    on its accuracy at 0.5, where one record of the validation split can decide. Accuracy when only one label
    is there. Records count by their `sample_weights`."""
    from sklearn.metrics import average_precision_score

    if len(set(gold.tolist())) < 2:
        return float(np.average((probs >= 0.5) == gold, weights=weights))
    return float(average_precision_score(gold, probs, sample_weight=weights))


def choose_threshold(gold: np.ndarray, probs: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The decision threshold with the best F1 of these probabilities (positive = needs clarification; records
    count by `weights`); ties: nearest 0.5."""
    from sklearn.metrics import f1_score

    def f1(t: float) -> float:
        return float(f1_score(gold, probs >= t, sample_weight=weights, zero_division=0.0))

    return max(THRESHOLDS, key=lambda t: (f1(t), -abs(t - 0.5)))


FOLDS = 5


def _groups(records: list[dict]) -> list[str]:
    """Fold group of each record: the connected set of conversations it draws on (its own, its history's, its
    passages'). A record whose history or passages come from a block-mate links the two conversations, so a fold
    never trains on one and scores the other, as the release split never does."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    index: dict[str, int] = {}
    rows, cols = [], []
    for i, r in enumerate(records):
        for conv in sorted(c for c in conversations_of(r) if c) or [r["id"]]:
            rows.append(i)
            cols.append(index.setdefault(conv, len(index)))
    n = len(records) + len(index)
    edges = coo_matrix(([1] * len(rows), (rows, [len(records) + c for c in cols])), shape=(n, n))
    _, component = connected_components(edges, directed=False)
    return [f"g{component[i]}" for i in range(len(records))]


def out_of_fold_threshold(model: Any, X: np.ndarray, y: np.ndarray, groups: list[str], seed: int,
                          weights: np.ndarray | None = None) -> float | None:
    """The threshold with the best F1 over out-of-fold probabilities of train+validation (folds never split a
    group of linked conversations). The validation split alone is a few hundred records, and its best-F1 threshold swung from 0.20
    to 0.80 between builds of one config; every training record once held out gives a steadier estimate. Records
    count by `weights` (`sample_weights`), in the fits and in the F1. None
    when the data cannot make the folds (fewer conversations or records of a label than folds)."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedGroupKFold, cross_val_predict
    from threadpoolctl import threadpool_limits

    if len(set(groups)) < FOLDS or min(int(y.sum()), int((~y).sum())) < FOLDS:
        return None
    folds = StratifiedGroupKFold(FOLDS, shuffle=True, random_state=seed)
    params = {"groups": groups} if weights is None else {"groups": groups, "sample_weight": weights}
    with threadpool_limits(2), routing():
        probs = cross_val_predict(clone(model), X, y, cv=folds, method="predict_proba", params=params)
    return choose_threshold(y, probs[:, list(np.unique(y)).index(True)], weights)


def _encoder_candidate(train, val, out: Path, settings, base, best_name, best_model, best_score, selection, log):
    """Fine-tune the cross-encoder; keep it (saved under out/encoder) only if it wins on validation, by the same
    score as the scikit-learn candidates (`selection_score`)."""
    import shutil

    from builder.train.encoder import ENCODER_DIR, EncoderClassifier, train_encoder

    summary = train_encoder(train, val, out, settings, base=base, log=log)
    model = EncoderClassifier(out / ENCODER_DIR, summary["settings"])
    held = val or train
    selection[ENCODER] = selection_score(_labels(held), np.asarray(model.probabilities(held)), sample_weights(held))
    log(f"  {ENCODER:<22} {selection_metric(_labels(held), 'validation' if val else 'train')} {selection[ENCODER]:.4f} "
        f"(accuracy {summary['validation_accuracy']:.4f}; {summary['stop']}, {summary['seconds']:.0f} s)")
    if selection[ENCODER] > best_score:
        return summary, model, ENCODER
    shutil.rmtree(out / ENCODER_DIR)
    return summary, best_model, best_name


def _texts(record: dict) -> list[str]:
    t = record_texts(record)
    return [t.query, *t.history, *t.documents]


def _versions() -> dict[str, str]:
    import sklearn

    return {"scikit-learn": sklearn.__version__, "numpy": np.__version__}


def save(out: Path, model: Any, embed: Any, meta: dict[str, Any]) -> None:
    import joblib

    from builder.io import atomic_path

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    payload = {"classifier": model, "tfidf": embed.pipeline if isinstance(embed, TfidfEmbedder) else None}
    with atomic_path(out / MODEL_FILE) as tmp:
        joblib.dump(payload, tmp)
    write_json(out / META_FILE, meta)


_PRONOUN_ORDER = ("them", "it", "they", "this", "that", "these", "those", "there", "its", "their",
                  "he", "she", "his", "her", "him", "one")
_DEF_NP = re.compile(r"\bthe\s+([a-z][a-z\-]+)", re.IGNORECASE)


def template_question(record: dict) -> str:
    """A clarifying question from a template: the baseline classifies, it does not generate."""
    q_words = words(record["query"])
    for pronoun in _PRONOUN_ORDER:
        if pronoun in q_words and (pronoun in PRONOUNS or pronoun in DEMONSTRATIVES):
            return f'What does "{pronoun}" refer to in your question? Could you name it?'
    matches = list(_DEF_NP.finditer(record["query"]))
    if matches:  # the last one: "the limits on the plan" asks which plan
        return f"Could you tell me which {matches[-1].group(1).lower()} you mean?"
    return "Could you clarify what you are asking about?"


@dataclass
class BaselinePredictor:
    model: Any
    embed: Any
    meta: dict[str, Any]
    name: str = "baseline"

    @classmethod
    def load(cls, path: str | Path) -> "BaselinePredictor":
        import joblib

        path = Path(path)
        meta_path = path / META_FILE
        if not meta_path.exists() or not (path / MODEL_FILE).exists():
            raise InputError(f"{path}: not a baseline model directory (needs {META_FILE} and {MODEL_FILE})")
        meta = read_json(meta_path)
        if meta.get("kind") != KIND:
            raise InputError(f"{meta_path}: field 'kind' is {meta.get('kind')!r}, expected {KIND!r}")
        payload = joblib.load(path / MODEL_FILE)
        if meta.get("classifier") == ENCODER:
            from builder.train.encoder import ENCODER_DIR, EncoderClassifier

            return cls(EncoderClassifier(path / ENCODER_DIR, meta["encoder"]["settings"]), None, meta,
                       name=f"baseline:{path.name}")
        if meta["embedder"]["name"] == TfidfEmbedder.name:
            embed = TfidfEmbedder()
            embed.pipeline = payload["tfidf"]
        else:
            try:
                embed = MiniLMEmbedder(max_seq_length=meta["embedder"].get("max_seq_length", 128))
            except ImportError as err:
                raise InputError(f"{meta_path}: model was trained with {meta['embedder']['name']}, "
                                 f"which is not installed here ({err})") from None
        return cls(payload["classifier"], embed, meta, name=f"baseline:{path.name}")

    @property
    def threshold(self) -> float:
        return float(self.meta.get("threshold", 0.5))  # models saved before thresholds were chosen: 0.5

    def probabilities(self, records: list[dict]) -> np.ndarray:
        if not records:
            return np.zeros(0)
        if self.meta.get("classifier") == ENCODER:
            return self.model.probabilities(records)
        X = feature_matrix(records, self.embed).X
        return self.model.predict_proba(X)[:, list(self.model.classes_).index(True)]

    def predict(self, records: list[dict]) -> list[Prediction]:
        out = []
        threshold = self.threshold
        for record, p in zip(records, self.probabilities(records)):
            needs = bool(p >= threshold)
            question = template_question(record) if needs else None
            raw = dumps({"clarification": question if needs else "CLEAR"})
            out.append(Prediction(id=record["id"], needs_clarification=needs, clarification=question, raw=raw))
        return out


def summary_rows(meta: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(split/slice, n, accuracy) rows for the CLI table; hard negatives get their own row, generators a
    'generator' one each."""
    rows = []
    for split in ("validation", "test"):
        m = meta["metrics"].get(split, {})
        if not m.get("n"):
            continue
        rows.append((split, str(m["n"]), f"{m['accuracy']:.4f}"))
        for key, prefix in (("by_setting", ""), ("by_category", ""), ("by_method", "generator ")):
            for value, s in m[key].items():
                rows.append((f"  {split} · {prefix}{value}", str(s["n"]), f"{s['accuracy']:.4f}"))
    return rows


def describe(meta: dict[str, Any]) -> str:
    return json.dumps({k: meta[k] for k in ("classifier", "train_seconds", "embedder")}, sort_keys=True)
