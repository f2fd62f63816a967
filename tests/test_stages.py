import copy
from dataclasses import FrozenInstanceError

import pytest

from builder.dedup import dedup
from builder.rows import AccountingRow, Assignment, Duplicate, Quarantined, SplitDrop
from builder.split import leakage_report, split
from builder.validate import validate


def record(rid, query, history="h", label=False, conv="c1", pair=None, setting="pre_retrieval"):
    return {
        "id": rid,
        "domain": "d",
        "setting": setting,
        "history": [{"role": "user", "content": history}],
        "query": query,
        "documents": [] if setting == "pre_retrieval" else [{"id": "p", "title": "t", "text": "x"}],
        "needs_clarification": label,
        "category": "unresolved_reference" if label else "clear",
        "interpretations": ["a", "b"] if label else ["a"],
        "target": {"clarification": "Which one?" if label else "CLEAR"},
        "clarification_pattern": "open" if label else None,
        "resolution": None,
        "pair_id": pair,
        "provenance": {"source_dataset": "t", "conversation_id": conv, "turn": 1, "method": "m",
                       "method_version": "1", "seed": 1, "label_source": "generator"},
    }


def test_validate_quarantines_with_pointer_and_message():
    good = record("ce-0000000000000001", "what is it")
    bad = copy.deepcopy(good)
    bad["id"] = "ce-0000000000000002"
    bad["needs_clarification"] = True  # a positive with one interpretation and a CLEAR target
    valid, quarantined = validate([good, bad])
    assert [r["id"] for r in valid] == [good["id"]]
    [q] = quarantined
    assert q.id == bad["id"] and q.record == bad
    pointers = {e["pointer"] for e in q.errors}
    assert "/target/clarification" in pointers or "/interpretations" in pointers
    assert all(e["message"] for e in q.errors)


def test_dedup_drops_same_example_keeps_contrastive_pair():
    a = record("ce-000000000000000a", "What is the annual fee?")
    b = record("ce-000000000000000b", "what is the annual fee")  # same context and label
    c = record("ce-000000000000000c", "What is the annual fee?", history="other", label=True)  # other context
    d = record("ce-000000000000000d", "What is the annual fee??", label=True)  # same context, other label
    result = dedup([a, b, c, d], threshold=92)
    kept = {r["id"] for r in result.kept}
    assert kept == {a["id"], c["id"], d["id"]}
    [drop] = result.dropped
    assert drop.id == b["id"] and drop.kept_id == a["id"] and drop.score >= 92 and drop.reason == "exact duplicate"
    by_id = {r["id"]: r for r in result.kept}
    assert by_id[a["id"]]["pair_id"] and by_id[a["id"]]["pair_id"] == by_id[c["id"]]["pair_id"], "contrastive pair linked"


def test_split_keeps_groups_together_and_reports_no_leakage():
    import random

    rng = random.Random(5)
    words = ["river", "tax", "visa", "loan", "cloud", "lake", "bridge", "pension", "server", "museum", "tariff",
             "glacier", "mortgage", "kernel", "harbor", "vaccine", "castle", "router", "orchard", "ledger"]
    records = []
    for conv in range(30):
        for k in range(6):
            query = " ".join(rng.sample(words, 6)) + f" {rng.randrange(10**6)}?"
            records.append(record(f"ce-{conv:08d}{k:08d}", query, conv=f"conv{conv}", label=k % 2 == 0,
                                  pair=f"pair{conv}" if k < 2 else None))
    # One near-duplicate query in another conversation: a soft link, which never merges the two conversations.
    twin = next(r for r in records if r["id"] == "ce-0000000300000001")
    records.append(record("ce-9999999999999999", twin["query"] + "!", conv="conv9"))
    result = split(records, {"train": 0.8, "validation": 0.1, "test": 0.1}, seed=5)
    assert result.groups == 30
    where = {r["provenance"]["conversation_id"]: s for s, rows in result.splits.items() for r in rows}
    for s, rows in result.splits.items():
        assert rows, f"{s} is empty"
        for r in rows:
            assert where[r["provenance"]["conversation_id"]] == s
    placed = {r["id"]: s for s, rows in result.splits.items() for r in rows}
    dropped = {d.id: d for d in result.dropped}
    for a, b in (("ce-9999999999999999", twin["id"]), (twin["id"], "ce-9999999999999999")):
        if a in dropped:  # the leaking one is dropped and says which record it matches
            assert dropped[a].kept_id == b and b in placed
    if not dropped:
        assert placed["ce-9999999999999999"] == placed[twin["id"]]
    assert len(placed) + len(dropped) == len(records)
    assert result.leakage["passed"] and result.leakage["conversations_in_several_splits"] == 0
    assert result.leakage["method"] == "exact"
    again = split(records, {"train": 0.8, "validation": 0.1, "test": 0.1}, seed=5)
    assert {s: [r["id"] for r in v] for s, v in again.splits.items()} == {s: [r["id"] for r in v] for s, v in result.splits.items()}


def test_leakage_report_catches_a_crossing():
    a = record("ce-0000000000000001", "how deep is the lake", conv="x")
    b = record("ce-0000000000000002", "how deep is the lake?", conv="y")
    report = leakage_report({"train": [a], "validation": [b], "test": []}, 92)
    assert report["near_duplicate_queries_across_splits"] == 1 and not report["passed"]


def test_side_rows_write_the_fields_their_files_hold():
    assert Duplicate("ce-2", "ce-1", 100.0, "exact duplicate").to_dict() == {
        "id": "ce-2", "kept_id": "ce-1", "score": 100.0, "reason": "exact duplicate"}
    assert SplitDrop("ce-3", None, None, "block severed: x").to_dict() == {
        "id": "ce-3", "split": None, "kept_id": None, "reason": "block severed: x"}
    errors = [{"pointer": "/query", "message": "None is not of type 'string'"}]
    assert Quarantined(None, errors, {"query": None}).to_dict() == {"id": None, "errors": errors, "record": {"query": None}}
    assert Assignment("test", {"id": "ce-4"}).to_dict() == {"split": "test", "record": {"id": "ce-4"}}
    # An accounting row leaves out what does not apply to its fate, but always names method and id (None or not).
    where = {"conversation_id": "c1", "turn": 3}
    assert AccountingRow(**where, method="m", id="ce-5", status="deduplicated", kept_id="ce-1", score=0.0).to_dict() == {
        **where, "method": "m", "id": "ce-5", "status": "deduplicated", "kept_id": "ce-1", "score": 0.0}
    assert AccountingRow(**where, method=None, id=None, status="rejected", reason="no generator").to_dict() == {
        **where, "method": None, "id": None, "status": "rejected", "reason": "no generator"}
    with pytest.raises(FrozenInstanceError):
        Duplicate("ce-2", "ce-1", 100.0, "exact duplicate").kept_id = "ce-9"
