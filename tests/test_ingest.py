import json

import pytest

from builder.errors import InputError
from builder.ingest import ingest, read_generic

from conftest import MTRAG, needs_mtrag


def test_demo_corpus_loads_with_passages_and_rewrites():
    convs = ingest(None)
    assert 12 <= len(convs) <= 20
    assert len({c.domain for c in convs}) >= 3
    for conv in convs:
        assert conv.turns[-1].role == "user"
        users = [conv.turns[i] for i in conv.user_turn_indices()]
        assert all(t.passages for t in users)
        assert all(t.rewrite for t in users[1:])


def test_generic_roundtrip(tmp_path):
    conv = {
        "id": "c1",
        "domain": "d",
        "turns": [
            {"role": "user", "text": "What is the Lake Tahoe area?", "passages": [{"id": "p1", "title": "Lake Tahoe", "text": "A lake.", "relevant": True}]},
            {"role": "assistant", "text": "A lake region."},
            {"role": "user", "text": "How deep is it?", "rewrite": "How deep is Lake Tahoe?"},
        ],
    }
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(conv) + "\n")
    [back] = read_generic(path)
    assert back.turns[0].passages[0].relevant is True
    assert back.turns[2].rewrite == "How deep is Lake Tahoe?"
    assert back.to_dict()["turns"][2]["rewrite"] == "How deep is Lake Tahoe?"


@needs_mtrag
def test_mtrag_ingest_joins_ids_rewrites_and_relevance():
    convs = ingest(MTRAG / "conversations" / "conversations.json", "auto", MTRAG / "retrieval_tasks")
    assert len(convs) == 110
    assert len({c.id for c in convs}) == 110
    assert not any(c.id.startswith("mtrag-") for c in convs), "every conversation matched a task id"
    assert sum(len(c.user_turn_indices()) for c in convs) == 842
    assert {c.domain for c in convs} == {"clapnq", "govt", "fiqa", "ibmcloud"}
    rewrites = sum(1 for c in convs for t in c.turns if t.role == "user" and t.rewrite)
    assert rewrites >= 770
    relevance = [p.relevant for c in convs for t in c.turns for p in t.passages]
    assert True in relevance and False in relevance
    # The first conversation (Arizona Cardinals): the editor said "no" to a passage the author said "yes" to.
    first = next(c for c in convs if c.id == "dd6b6ffd177f2b311abe676261279d2f")
    second_passage = first.turns[0].passages[1]
    assert second_passage.id == "822086267_7384-8758-0-1374" and second_passage.relevant is False


def test_mtrag_relevance_rule_prefers_editor_then_author(tmp_path):
    raw = [{
        "author": "A", "editor": "E", "domain": "mt-rag-govt-elser",
        "messages": [
            {"speaker": "user", "text": "q1"},
            {"speaker": "agent", "text": "a1", "contexts": [
                {"document_id": "d1", "text": "t1", "feedback": {"relevant": {"A": {"value": "yes"}, "E": {"value": "no"}}}},
                {"document_id": "d2", "text": "t2", "feedback": {"relevant": {"A": {"value": "yes"}}}},
                {"document_id": "d3", "text": "t3", "feedback": {}},
            ]},
        ],
    }]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(raw))
    [conv] = ingest(path)
    assert [p.relevant for p in conv.turns[0].passages] == [False, True, None]
    assert conv.domain == "govt"
    assert conv.turns[-1].role == "user", "the trailing agent turn is dropped"


def test_missing_required_field_names_line_and_field(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"id": "x", "domain": "d", "turns": [{"role": "user", "text": "hi"}]}) + "\n"
                    + json.dumps({"id": "y", "turns": [{"role": "user", "text": "hi"}]}) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl:2: conversation 'y': missing required field 'domain'"):
        ingest(path)


def test_mis_decoded_text_is_repaired_and_right_text_is_kept():
    from builder.ingest import repair

    assert repair("What is the goal of NASA‚Äôs Europa Clipper mission?") == "What is the goal of NASA’s Europa Clipper mission?"
    assert repair("NASAâ€™s “report”") == "NASA’s “report”"
    assert repair("a café in Zürich, 北京 — fine") == "a café in Zürich, 北京 — fine"
