"""Model-based suspects: out-of-fold predictions that confidently disagree with the label.

A TF-IDF + logistic-regression classifier predicts each record's category from its text with
k-fold cross-validation, so no record is scored by a model that saw it. Following confident
learning (Northcutt et al., cleanlab), a record labelled i is suspect when some other class j gets
p_j >= t_j, the mean self-confidence of records labelled j. Suspects are ranked by the margin
p_j - p_i (how much more the model believes j than the given label).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from builder.audit.release import AuditRelease
from builder.errors import InputError


@dataclass
class Suspect:
    record_id: str
    score: float
    reason: str
    method: str
    split: str
    label: str  # the record's category
    predicted: str
    given_p: float
    predicted_p: float
    confident: bool = False  # in the confident joint: p(predicted) >= that class's threshold
    rank: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def context_text(record: dict[str, Any]) -> str:
    turns = " ".join(f"{t['role']}: {t['content']}" for t in record["history"])
    docs = " ".join(f"{d.get('title', '')} {d['text']}" for d in record["documents"])
    return f"setting_{record['setting']} {turns} {docs}"


def features(records: list[dict[str, Any]]):
    """Query and context get their own vocabularies: the same word means different things in each."""
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer

    query = TfidfVectorizer(ngram_range=(1, 2), min_df=1, sublinear_tf=True, token_pattern=r"(?u)\b\w+\b")
    context = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, max_features=50_000)
    q = query.fit_transform([r["query"] for r in records])
    c = context.fit_transform([context_text(r) for r in records])
    return hstack([q, c]).tocsr()


def out_of_fold_probabilities(records: list[dict[str, Any]], labels: list[str], folds: int, seed: int):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    classes = sorted(set(labels))
    y = np.array([classes.index(label) for label in labels])
    # Vectorizers are unsupervised; fitting them on all texts leaks no label.
    x = features(records)
    probs = np.zeros((len(records), len(classes)))
    smallest = min(np.bincount(y))
    folds = max(2, min(folds, len(records) // 2))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rare classes: fewer members than folds is fine here
        for train, test in splitter.split(x, y):
            model = LogisticRegression(C=4.0, max_iter=2000, class_weight="balanced")
            model.fit(x[train], y[train])
            fold_probs = np.zeros((len(test), len(classes)))
            fold_probs[:, model.classes_] = model.predict_proba(x[test])
            probs[test] = fold_probs
    return classes, y, probs, smallest


def model_suspects(release: AuditRelease, folds: int = 5, seed: int = 0) -> list[Suspect]:
    ids = release.ordered
    records = [release.records[i] for i in ids]
    labels = [r["category"] for r in records]
    if len(set(labels)) < 2:
        raise InputError(f"{release.path}: model-based suspects need at least two categories in the release")
    if len(records) < 20:
        raise InputError(f"{release.path}: {len(records)} records are too few for a cross-validated model (need 20)")
    classes, y, probs, _ = out_of_fold_probabilities(records, labels, folds, seed)
    # Per-class threshold: mean self-confidence of the records carrying that label.
    thresholds = np.array([probs[y == j, j].mean() if (y == j).any() else 1.0 for j in range(len(classes))])
    suspects = []
    for i, rid in enumerate(ids):
        given, best = y[i], int(np.argmax(probs[i]))
        if best == given:
            continue
        margin = float(probs[i, best] - probs[i, given])
        confident = bool(probs[i, best] >= thresholds[best])
        suspects.append(
            Suspect(
                record_id=rid,
                score=round(margin, 6),
                reason=(f"labelled {classes[given]} (p={probs[i, given]:.2f}); out-of-fold model says "
                        f"{classes[best]} (p={probs[i, best]:.2f}, "
                        f"{'above' if confident else 'below'} its class threshold {thresholds[best]:.2f})"),
                method="model",
                split=release.records[rid]["split"],
                label=classes[given],
                predicted=classes[best],
                given_p=round(float(probs[i, given]), 6),
                predicted_p=round(float(probs[i, best]), 6),
                confident=confident,
            )
        )
    suspects.sort(key=lambda s: (-s.score, s.record_id))
    for rank, s in enumerate(suspects, start=1):
        s.rank = rank
    return suspects
