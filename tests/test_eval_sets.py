"""Benchmark adapters on small fixtures in each format, plus Abg-CoQA on the real file when ../shared is present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builder.eval_sets import load_benchmark
from builder.errors import InputError

FIX = Path(__file__).parent / "fixtures" / "benchmarks"
SHARED_ABG = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "abg-coqa" / "coqa_abg_val.json"
SHARED_MTRAG = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mtrag"


def by_query(records):
    return {r["query"]: r for r in records}


def test_mtragun_labels_history_documents_and_overlap_drop():
    bench = load_benchmark("mtragun", FIX / "mtragun_reference.jsonl", build_input=FIX / "mtrag_conversations.json")
    recs = by_query(bench.records)
    # The Cardinals task shares its first user turn (case aside) with the build input: dropped and counted.
    assert "and next week?" not in recs
    assert bench.info["dropped_overlap"] == 1 and bench.info["dropped_task_ids"] == ["un-c5<::>2"]
    assert len(bench.records) == 4
    planet = recs["how big is mercury"]
    assert planet["needs_clarification"] is True
    assert planet["target"] == {"clarification": "Do you mean the planet Mercury or the element mercury?"}
    assert planet["history"] == [{"role": "user", "content": "tell me about space"},
                                 {"role": "assistant", "content": "Space is the expanse beyond Earth's atmosphere."}]
    assert [d["id"] for d in planet["documents"]] == ["clapnq-101", "clapnq-102"]
    assert planet["setting"] == "post_retrieval" and planet["domain"] == "clapnq"
    # No contexts: pre-retrieval; UNANSWERABLE / ANSWERABLE are clear with a CLEAR target.
    assert recs["what about the other one"]["setting"] == "pre_retrieval"
    assert recs["what about the other one"]["domain"] == "govt"
    for query in ("what is an IRA", "what is the price in 1990"):
        assert recs[query]["needs_clarification"] is False
        assert recs[query]["target"] == {"clarification": "CLEAR"} and recs[query]["category"] == "clear"
    assert recs["what is the price in 1990"]["domain"] == "ibmcloud"
    assert len({r["id"] for r in bench.records}) == 4


def test_mtragun_requires_build_input_and_names_bad_lines(tmp_path):
    with pytest.raises(InputError, match="--build-input"):
        load_benchmark("mtragun", FIX / "mtragun_reference.jsonl")
    bad = tmp_path / "reference.jsonl"
    task = json.loads((FIX / "mtragun_reference.jsonl").read_text().splitlines()[0])
    task["answerability"] = ["MAYBE"]
    bad.write_text(json.dumps(task) + "\n")
    with pytest.raises(InputError, match=r"reference.jsonl:1 \(task 'un-c1<::>2'\): field 'answerability'"):
        load_benchmark("mtragun", bad, build_input=FIX / "mtrag_conversations.json")


@pytest.mark.shared
@pytest.mark.skipif(not SHARED_MTRAG.exists(), reason="../shared/data/mtrag absent")
def test_mtragun_overlap_against_real_mtrag_conversations():
    bench = load_benchmark("mtragun", FIX / "mtragun_reference.jsonl", build_input=SHARED_MTRAG)
    # The fixture's Cardinals task copies the first user turn of a real MTRAG conversation.
    assert bench.info["dropped_task_ids"] == ["un-c5<::>2"]


def test_abgcoqa_fixture():
    bench = load_benchmark("abgcoqa", FIX / "abgcoqa_val.json")
    recs = by_query(bench.records)
    amb = recs["what color was it?"]
    assert amb["needs_clarification"] is True and amb["setting"] == "post_retrieval"
    assert amb["target"]["clarification"] == "Do you mean the color of the bike or of the kite?"
    assert amb["history"][:2] == [{"role": "user", "content": "what did Tom have?"},
                                  {"role": "assistant", "content": "two bikes"}]
    assert len(amb["history"]) == 4 and amb["documents"][0]["text"].startswith("Tom had a red bike")
    assert amb["domain"] == "mctest" and amb["provenance"]["turn"] == 5
    assert recs["who went with Tom?"]["target"] == {"clarification": "CLEAR"}
    assert recs["where does it flow?"]["domain"] == "wikipedia"


@pytest.mark.shared
@pytest.mark.skipif(not SHARED_ABG.exists(), reason="../shared/data/abg-coqa absent")
def test_abgcoqa_real_validation_file():
    bench = load_benchmark("abgcoqa", SHARED_ABG)
    assert len(bench.records) == 1092
    assert sum(r["needs_clarification"] for r in bench.records) == 130
    assert all(r["documents"] and r["history"] for r in bench.records)
    assert all(r["target"]["clarification"] != "CLEAR" for r in bench.records if r["needs_clarification"])


def test_clariq_groups_rows_per_topic_with_need_threshold():
    bench = load_benchmark("clariq", FIX / "clariq_dev.tsv")
    recs = by_query(bench.records)
    assert len(bench.records) == 4 and bench.info == {"rows": 5, "topics": 4}
    dino = recs["I'm interested in dinosaurs"]
    assert dino["needs_clarification"] is True  # need 4
    assert dino["target"]["clarification"] == "are you looking for a specific web site"
    assert dino["interpretations"] == ["what are the different types of dinosaurs", "find dinosaur fossils near me"]
    assert recs["Tell me about Atari"]["needs_clarification"] is True  # need 3 counts
    assert recs["what is the boiling point of water at sea level"]["needs_clarification"] is False  # need 2 does not
    assert recs["how to measure the speed of light"]["target"] == {"clarification": "CLEAR"}
    assert all(r["setting"] == "pre_retrieval" and r["documents"] == [] for r in bench.records)


def test_clariq_bad_need_is_named(tmp_path):
    bad = tmp_path / "dev.tsv"
    lines = (FIX / "clariq_dev.tsv").read_text().splitlines()
    lines[4] = lines[4].replace("\t1\t", "\tseven\t")
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"dev.tsv:5: topic 102: 'clarification_need' is 'seven'"):
        load_benchmark("clariq", bad)


def test_clamber_json_string_lines():
    bench = load_benchmark("clamber", FIX / "clamber_benchmark.jsonl")
    recs = by_query(bench.records)
    assert len(bench.records) == 4
    bank = recs["What is the best bank?"]
    assert bank["needs_clarification"] is True and bank["setting"] == "pre_retrieval" and bank["domain"] == "semantic"
    assert bank["target"]["clarification"] == "Best for what: savings rates, loans or customer service?"
    award = recs["When did he win the award?"]
    assert award["setting"] == "post_retrieval" and award["documents"][0]["text"].startswith("Marie Curie")
    assert recs["Who wrote Pride and Prejudice?"]["target"] == {"clarification": "CLEAR"}


def test_clamber_missing_field_is_named(tmp_path):
    bad = tmp_path / "clamber.jsonl"
    bad.write_text(json.dumps(json.dumps({"question": "x?", "require_clarification": 1})) + "\n")
    with pytest.raises(InputError, match=r"clamber.jsonl:1: require_clarification is 1 but 'clarifying_question'"):
        load_benchmark("clamber", bad)


def test_unknown_benchmark():
    with pytest.raises(InputError, match="unknown"):
        load_benchmark("squad", FIX / "clariq_dev.tsv")
