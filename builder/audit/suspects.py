"""Model-based suspects: out-of-fold predictions that confidently disagree with the label.

A TF-IDF + logistic-regression classifier predicts each record's category from its text with
k-fold cross-validation, so no record is scored by a model that saw it. Following confident
learning (Northcutt et al., cleanlab), a record labelled i is suspect when some other class j gets
p_j >= t_j, the mean self-confidence of records labelled j (`confident`). Suspects are records the
model disagrees with or trusts less than is typical for their label, ranked by self-confidence.
"""

from __future__ import annotations

import re
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
    confident: bool = False  # in the confident joint: the model prefers `predicted`, with p above that class's threshold
    rank: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_WORD = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def context_text(record: dict[str, Any]) -> str:
    turns = " ".join(f"{t['role']}: {t['content']}" for t in record["history"])
    docs = " ".join(f"{d.get('title', '')} {d['text']}" for d in record["documents"])
    return f"setting_{record['setting']} {turns} {docs}"


def crossed_tokens(record: dict[str, Any]) -> str:
    """Query words tagged with the setting and whether there is history, plus whether each content word
    of the query appears in the history or passages: whether context resolves the query is the label."""
    tags = (record["setting"], "history" if record["history"] else "no_history")
    query = _words(record["query"])
    seen = set(_words(context_text(record)))
    out = [f"{tag}|{w}" for tag in tags for w in query]
    out += [f"{tag}|{'in' if w in seen else 'not_in'}_context" for tag in tags for w in query if len(w) > 3]
    return " ".join(out)


def features(records: list[dict[str, Any]]):
    """Query, context and crossed tokens get their own vocabularies, plus a few shape counts.
    The vectorizers are unsupervised, so fitting them on all records leaks no label."""
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import TfidfVectorizer

    query = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b")
    context = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, max_features=50_000)
    crossed = TfidfVectorizer(token_pattern=r"\S+", sublinear_tf=True, lowercase=False)
    shape = np.array([[len(r["history"]) / 4, len(r["documents"]) / 3, len(_words(r["query"])) / 20,
                       float(r["setting"] == "post_retrieval")] for r in records])
    return hstack([
        query.fit_transform([r["query"] for r in records]),
        context.fit_transform([context_text(r) for r in records]),
        crossed.fit_transform([crossed_tokens(r) for r in records]),
        csr_matrix(shape),
    ]).tocsr()


def out_of_fold_probabilities(records: list[dict[str, Any]], labels: list[str], folds: int, seed: int):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold

    from threadpoolctl import threadpool_limits

    classes = sorted(set(labels))
    y = np.array([classes.index(label) for label in labels])
    x = features(records)
    probs = np.zeros((len(records), len(classes)))
    folds = max(2, min(folds, len(records) // 2))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    # One BLAS thread: on a shared small machine, more threads made this 100x slower, not faster.
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")  # rare classes: fewer members than folds is fine here
        for train, test in splitter.split(x, y):
            model = LogisticRegression(C=4.0, max_iter=2000, class_weight="balanced")
            model.fit(x[train], y[train])
            fold_probs = np.zeros((len(test), len(classes)))
            fold_probs[:, model.classes_] = model.predict_proba(x[test])
            probs[test] = fold_probs
    return classes, y, probs


def model_suspects(release: AuditRelease, folds: int = 5, seed: int = 0, repeats: int = 3) -> list[Suspect]:
    """Suspects ranked by self-confidence (1 - out-of-fold p of the given label), cleanlab's default
    label-quality score; on the demo build with planted flips it ranked them well above the margin did."""
    ids = release.ordered
    records = [release.records[i] for i in ids]
    labels = [r["category"] for r in records]
    if len(set(labels)) < 2:
        raise InputError(f"{release.path}: model-based suspects need at least two categories in the release")
    if len(records) < 20:
        raise InputError(f"{release.path}: {len(records)} records are too few for a cross-validated model (need 20)")
    # Averaging a few differently seeded fold assignments steadies the probabilities.
    runs = [out_of_fold_probabilities(records, labels, folds, seed + r) for r in range(max(1, repeats))]
    classes, y = runs[0][0], runs[0][1]
    probs = np.mean([run[2] for run in runs], axis=0)
    # Per-class threshold t_j: mean self-confidence of the records carrying label j (confident learning).
    thresholds = np.array([probs[y == j, j].mean() for j in range(len(classes))])
    suspects = []
    for i, rid in enumerate(ids):
        given = y[i]
        others = [j for j in range(len(classes)) if j != given]
        best = max(others, key=lambda j: probs[i, j])
        disagrees = probs[i, best] > probs[i, given]
        if not disagrees and probs[i, given] >= thresholds[given]:
            continue  # the model is at least as sure of this label as of a typical record with it
        confident = bool(disagrees and probs[i, best] >= thresholds[best])
        reason = (f"labelled {classes[given]} with p={probs[i, given]:.2f} out of fold "
                  f"(typical for that label: {thresholds[given]:.2f}); model prefers {classes[best]} "
                  f"(p={probs[i, best]:.2f}{', above its class threshold' if confident else ''})")
        suspects.append(
            Suspect(
                record_id=rid,
                score=round(float(1 - probs[i, given]), 6),
                reason=reason,
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
