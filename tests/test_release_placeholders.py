"""No placeholder reading or clarification anywhere in a release: every interpretation is a complete reading that
names a concrete candidate, every clarification names real options or asks openly."""

import re

import pytest

from builder.release import load_release

from conftest import ROOT, needs_mtrag, run_cli

# What the old rule-based generators wrote when they had no concrete candidate.
READING_PLACEHOLDERS = [
    r"\bsomething else\b",
    r"\bsomething not mentioned\b",
    r"\ba question about\b",
    r"\(meaning\b",
    r"\(about\b",
    r"\banother (?:one|thing|topic)\b",
    r"[{}]",
]
CLARIFICATION_PLACEHOLDERS = [
    r"\bsomething not mentioned\b",
    r"\ba question about\b",
    r"\(meaning\b",
    r"[{}]",
    r"refer to in your question\?.*\bthere\b|\"there\" refer",  # an existential 'there' asked about
    r"such as: ?[.?]|about ,|: ,|, ,|\(\)",  # an empty option list
    r"\bthe (?:passages|documents)\b|\bI found\b|\bI see information\b",  # talk of retrieval the user never saw
]


def placeholder_hits(records: list[dict]) -> list[tuple[str, str, str]]:
    hits = []
    for r in records:
        for reading in r["interpretations"]:
            for pattern in READING_PLACEHOLDERS:
                if re.search(pattern, reading, flags=re.I):
                    hits.append((r["id"], "interpretation", reading))
        question = r["target"]["clarification"]
        for pattern in CLARIFICATION_PLACEHOLDERS:
            if re.search(pattern, question, flags=re.I):
                hits.append((r["id"], "clarification", question))
        if r["needs_clarification"]:
            lowered = [x.strip().rstrip("?.").lower() for x in r["interpretations"]]
            if len(set(lowered)) < len(lowered):
                hits.append((r["id"], "interpretation", "two readings are the same"))
            if r["query"].strip().rstrip("?.").lower() in lowered:
                # 'Will there be a return result using this sdk?' read as '... this SDK?': the open query itself
                hits.append((r["id"], "interpretation", "a reading is the query itself"))
    return hits


def test_the_scan_catches_placeholders():
    bad = {"id": "x", "needs_clarification": True, "query": "How deep is it?", "interpretations": ["How deep is it?", "How deep is it? (meaning Lake Tahoe)"],
           "target": {"clarification": "What does \"there\" refer to in your question?"}}
    kinds = {kind for _, kind, _ in placeholder_hits([bad])}
    assert kinds == {"interpretation", "clarification"}
    echo = dict(bad, query="Is this SDK free?", interpretations=["Is this sdk free?", "Is the Swift SDK free?"],
                target={"clarification": "Which SDK do you mean?"})
    assert [what for _, _, what in placeholder_hits([echo])] == ["a reading is the query itself"]
    talk = dict(bad, interpretations=["How deep is Lake Tahoe?"],
                target={"clarification": "Which lake do you mean? The passages cover more than one."})
    assert [kind for _, kind, _ in placeholder_hits([talk])] == ["clarification"]
    good = {"id": "y", "needs_clarification": True, "query": "Does this clinic offer therapy?",
            "interpretations": ["Does the Causeway VA Clinic offer therapy?", "Does the Brockton VA Clinic offer therapy?"],
            "target": {"clarification": "Are you asking about Causeway VA Clinic, Brockton VA Clinic, or something else?"}}
    assert placeholder_hits([good]) == []


def test_demo_release_has_no_placeholders(demo_release):
    records = [r for rows in load_release(demo_release).values() for r in rows]
    assert records
    assert placeholder_hits(records) == []


@needs_mtrag
@pytest.mark.slow
def test_mtrag_release_has_no_placeholders(tmp_path):
    result = run_cli("build", "--config", str(ROOT / "configs" / "mtrag.yaml"), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    records = [r for rows in load_release(tmp_path / "clariedge-mtrag" / "1.0.0").values() for r in rows]
    assert len(records) > 1000
    hits = placeholder_hits(records)
    assert hits == [], hits[:5]
