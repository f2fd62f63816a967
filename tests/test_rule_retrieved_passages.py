"""retrieved_passages: the generic query's own BM25 retrieval decides the label (see the rule's docstring)."""

import re

from builder.conversation import Conversation, Passage, Turn
from builder.record import Record
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection
from builder.synthesize.context import TurnContext
from builder.synthesize.corpus import Corpus
from builder.synthesize.rules.retrieved_passages import RetrievedPassages, generalize
from builder.validate import validate

YALE = Passage("yale-1", "Yale University is a private Ivy League research university in New Haven. "
               "Yale was founded in 1701 as the Collegiate School.", "Yale University")
HARVARD = Passage("harvard-1", "Harvard University is a private research university in Cambridge, Massachusetts. "
                  "Harvard was founded in 1636.", "Harvard University")
YALE_OWN = Passage("yale-own", "Yale University was founded in 1701 in Saybrook Colony.", "Yale University", True)
PENOBSCOT = Passage("pen-1", "Penobscot River is a river in the state of Maine. The river was named by the "
                    "Penobscot people.", "Penobscot River")
PENOBSCOT_OWN = Passage("pen-own", "The Penobscot River was named after the Penobscot Nation.", "Penobscot River", True)
MAINE = Passage("maine-1", "Maine was named after the province of Maine in France.", "Maine")


def _conv(cid, domain, turns):
    return Conversation(cid, domain, turns)


# The pool: passages other turns retrieved; each turn's own passages are what its named query retrieved.
FOUNDED = _conv("founded", "edu", [
    Turn("user", "When was Yale University founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
])
ABOUT_YALE = _conv("about-yale", "edu", [
    Turn("user", "Tell me about Yale University.", [YALE], rewrite="Tell me about Yale University."),
    Turn("assistant", "Yale University is a private research university in New Haven."),
    Turn("user", "When was it founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
])
OTHER = _conv("other", "edu", [Turn("user", "What is Harvard known for?", [HARVARD])])
NAMED = _conv("named", "geo", [
    Turn("user", "When was the Penobscot River named?", [PENOBSCOT_OWN], rewrite="When was the Penobscot River named?"),
])
GEO = _conv("geo", "geo", [Turn("user", "Where is the Penobscot River?", [PENOBSCOT, MAINE])])
ALL = [FOUNDED, ABOUT_YALE, OTHER, NAMED, GEO]


def _ctx(conv, turn, corpus):
    index = conv.user_turn_indices()[turn - 1]
    return TurnContext(conv, turn, index, 7, "test", [], corpus=corpus)


# Every record a turn allows (the build's defaults ask most queries only after their own history).
ALL_HISTORIES = {"k": 5, "fresh_share": 1.0, "alone_rate": 1.0}


def _run(conv, turn, **options):
    corpus = Corpus.from_conversations(ALL)
    return list(RetrievedPassages(**(ALL_HISTORIES | options)).generate(_ctx(conv, turn, corpus)))


def test_corpus_pools_each_domain_once_and_ranks_deterministically():
    corpus = Corpus.from_conversations(ALL)
    assert corpus.size("edu") == 3 and corpus.size("geo") == 3  # yale-own is one passage though two turns cite it
    hits = corpus.search("edu", "When was the university founded?", 5)
    assert {p.id for p in hits} == {"yale-own", "yale-1", "harvard-1"}
    assert [p.id for p in corpus.search("geo", "Where is Maine?", 5)][0] == "maine-1"
    assert hits == corpus.search("edu", "When was the university founded?", 5)
    assert "yale-own" not in [p.id for p in corpus.search("edu", "university founded", 5, exclude=["yale-own"])]
    assert corpus.search("edu", "zzz qqq", 5) == []
    assert corpus.describe()["method"] == "bm25s"


def test_generic_query_keeps_the_kind_and_drops_the_name():
    got = generalize("When was Yale University founded?", [YALE_OWN])
    assert got.query == "When was the university founded?" and got.kind.noun == "university"
    assert isinstance(generalize("When was it founded?", []), str)


def test_no_generic_query_when_an_appositive_still_names_the_thing():
    europa = Passage("europa-1", "Europa is a moon of Jupiter. Jupiter's moon Europa has an icy surface.", "Europa")
    # 'Jupiter's Moon' made 'the moon' leaves ', Europa,' naming it: no reading is open (read 30).
    got = generalize("What is the surface of Jupiter's Moon, Europa, like?", [europa])
    assert isinstance(got, str) and "one of a list" in got
    # A comma clause that names nothing is no appositive.
    assert generalize("How big is Yale University, and when was it founded?", [YALE_OWN]).query == \
        "How big is the university, and when was it founded?"


def test_no_generic_query_for_one_member_of_a_list_or_comparison():
    # 'Should I choose the account or a 401K?' read as the IRA was a hard negative (read 65, ce-9f53f899fad4a989).
    ira = Passage("ira-1", "An IRA is an individual retirement account. A 401K is a retirement account an employer offers.", "IRA")
    for query in ("Should I choose an IRA or a 401K for my investment?", "What is the difference between a 401K and an IRA?"):
        got = generalize(query, [ira])
        assert isinstance(got, str) and "one of a list" in got, got
    # 'and' before a clause joins two questions, not two things.
    assert generalize("When was Yale University founded and where is it?", [YALE_OWN]).query == \
        "When was the university founded and where is it?"


def test_two_universities_retrieved_make_a_positive_naming_both_with_facts():
    out = _run(FOUNDED, 1)
    [positive] = [o for o in out if isinstance(o, Record)]
    assert positive.needs_clarification and positive.category == "multiple_interpretations"
    assert positive.setting == "post_retrieval" and positive.history == []
    assert positive.query == "When was the university founded?"
    ids = [d["id"] for d in positive.documents]
    assert "yale-own" not in ids  # the named query's own passage would leak the answer
    assert {"yale-1", "harvard-1"} <= set(ids)
    assert sorted(positive.interpretations) == ["When was Harvard University founded?", "When was Yale University founded?"]
    question = positive.target["clarification"]
    # Two candidates known: the question names both (no open 'Which university do you mean?').
    assert positive.clarification_pattern == "hedge"
    assert "Yale University" in question and "Harvard University" in question
    # Each option carries a fact its passage states.
    assert "a private Ivy League research university in New Haven" in question or "a private research university in Cambridge" in question
    prov = positive.provenance
    assert prov["retrieval"] == {"method": "bm25s", "k": 5, "query": "When was the university founded?"}
    assert prov["document_sources"] == ["founded"]  # the pool ties no other conversation to this record
    valid, quarantined = validate([positive.to_dict()])
    assert quarantined == [] and len(valid) == 1  # provenance.retrieval is in the schema


def test_history_that_names_the_referent_resolves_the_ambiguous_passages():
    out = [o for o in _run(ABOUT_YALE, 2) if isinstance(o, Record)]
    fresh = next(r for r in out if not r.history)
    resolved = next(r for r in out if r.history)
    assert fresh.needs_clarification and not resolved.needs_clarification
    assert resolved.category == "hard_negative" and resolved.resolution["source"] == "history"
    assert resolved.resolution["referent"] == "Yale University" and resolved.resolution["turn_index"] in (0, 1)
    assert resolved.documents == fresh.documents and resolved.query == fresh.query
    assert resolved.pair_id == fresh.pair_id  # a contrastive pair: same words, same passages


ABOUT_PENOBSCOT = _conv("about-pen", "geo", [
    Turn("user", "Tell me about the Penobscot River.", [PENOBSCOT_OWN], rewrite="Tell me about the Penobscot River."),
    Turn("assistant", "The Penobscot River flows through Maine."),
    Turn("user", "When was it named?", [PENOBSCOT_OWN], rewrite="When was the Penobscot River named?"),
])


def _run_with_names(conv, turn, names, **options):
    corpus = Corpus.from_conversations(ALL)
    index = conv.user_turn_indices()[turn - 1]
    ctx = TurnContext(conv, turn, index, 7, "test", [], domain_names=names, corpus=corpus)
    return list(RetrievedPassages(**(ALL_HISTORIES | options)).generate(ctx))


def test_one_river_retrieved_and_nothing_in_the_chat_is_still_which_river():
    # The passages BM25 found for 'the river' are about one river; the user never said which: a positive.
    [positive] = [o for o in _run_with_names(NAMED, 1, {"river": ["Snake River", "Penobscot River"]}) if isinstance(o, Record)]
    assert positive.query == "When was the river named?" and positive.history == []
    assert positive.needs_clarification and positive.category == "underspecified_entity"
    assert positive.clarification_pattern == "hedge"
    assert "Penobscot River" in positive.target["clarification"]  # the passages' one, named with its fact
    assert positive.interpretations == ["When was the Penobscot River named?", "When was the Snake River named?"]
    assert "pen-own" not in [d["id"] for d in positive.documents]
    assert validate([positive.to_dict()])[1] == []


def test_one_river_and_no_other_name_of_the_kind_is_rejected_with_the_reason():
    out = _run(NAMED, 1)
    assert out and all(isinstance(o, Rejection) for o in out)
    assert any("no other name of the kind" in o.reason for o in out)


def test_one_river_retrieved_after_the_chat_about_it_is_a_hard_negative_resolved_by_the_documents():
    out = [o for o in _run_with_names(ABOUT_PENOBSCOT, 2, {"river": ["Snake River"]}) if isinstance(o, Record)]
    [negative] = [r for r in out if r.history]
    assert negative.query == "When was the river named?"
    assert not negative.needs_clarification and negative.category == "hard_negative"
    assert negative.resolution["source"] == "documents" and negative.resolution["document_id"] == "pen-1"
    assert negative.resolution["referent"] == "Penobscot River"
    assert negative.interpretations == ["When was the Penobscot River named?"]
    # Its twin without the chat is the positive: same words, same passages.
    [fresh] = [r for r in out if not r.history]
    assert fresh.needs_clarification and fresh.pair_id == negative.pair_id and fresh.documents == negative.documents


def test_rejects_with_a_reason_when_no_entity_of_the_kind_is_retrieved():
    lone = _conv("lone", "edu", [Turn("user", "When was the Snake River founded?", [], rewrite="When was the Snake River founded?")])
    corpus = Corpus.from_conversations(ALL)
    out = list(RetrievedPassages(**ALL_HISTORIES).generate(_ctx(lone, 1, corpus)))
    assert out and all(isinstance(o, Rejection) for o in out)
    assert "river" in out[0].reason


def test_deterministic_and_never_a_placeholder_interpretation():
    first = [o.to_dict() if isinstance(o, Record) else o.to_dict() for c in ALL for t in (1, 2) if t <= len(c.user_turn_indices()) for o in _run(c, t)]
    second = [o.to_dict() if isinstance(o, Record) else o.to_dict() for c in ALL for t in (1, 2) if t <= len(c.user_turn_indices()) for o in _run(c, t)]
    assert first == second
    records = [r for r in first if "interpretations" in r]
    assert records
    for r in records:
        for reading in r["interpretations"]:
            assert not re.search(r"something else|\(meaning|a question about|\{|\}", reading), reading
            assert reading != r["query"]


# The kind lexicon (lexicon.yaml): "California" is a state although its name carries no kind noun.
PERMIT_CA = Passage("ca-1", "California requires a provisional permit for drivers under 18. The permit is issued by the DMV.", "DMV")
PERMIT_NV = Passage("nv-1", "Nevada issues an instruction permit to drivers who are 15 and a half.", "DMV Nevada")
PERMIT_OWN = Passage("ca-own", "In California you apply for a provisional permit at a DMV office.", "DMV", True)
ASKS_PERMIT = _conv("permit", "gov", [
    Turn("user", "How do I apply for a provisional permit in California?", [PERMIT_OWN],
         rewrite="How do I apply for a provisional permit in California?"),
])
ABOUT_PERMITS = _conv("permits", "gov", [Turn("user", "Which permits exist?", [PERMIT_CA, PERMIT_NV])])


def test_kind_lexicon_names_states_and_their_aliases_are_one_reading():
    corpus = Corpus.from_conversations([ASKS_PERMIT, ABOUT_PERMITS])
    out = list(RetrievedPassages(**ALL_HISTORIES).generate(_ctx(ASKS_PERMIT, 1, corpus)))
    [positive] = [o for o in out if isinstance(o, Record)]
    assert positive.query == "How do I apply for a provisional permit in the state?"
    assert sorted(positive.interpretations) == ["How do I apply for a provisional permit in California?",
                                                "How do I apply for a provisional permit in Nevada?"]
    from builder.synthesize.rules.retrieved_passages import _same_entity, canonical
    assert canonical("USA") == canonical("United States") == "United States"
    assert _same_entity("Covid", "COVID-19", "disease") and not _same_entity("Yale University", "Harvard University", "university")


# Same topic: the conversation talked about universities before it named Yale.
SAME_TOPIC = _conv("same-topic", "edu", [
    Turn("user", "How do private universities pick students?", [HARVARD], rewrite="How do private universities pick students?"),
    Turn("assistant", "Most private research universities look at grades, essays and interviews."),
    Turn("user", "Tell me about Yale University.", [YALE], rewrite="Tell me about Yale University."),
    Turn("assistant", "Yale University is a private Ivy League research university in New Haven."),
    Turn("user", "When was it founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
])


def test_own_history_cut_before_it_names_the_referent_is_a_same_topic_positive():
    corpus = Corpus.from_conversations(ALL + [SAME_TOPIC])
    records = [o for o in RetrievedPassages(**ALL_HISTORIES).generate(_ctx(SAME_TOPIC, 3, corpus)) if isinstance(o, Record)]
    by_len = {len(r.history): r for r in records}
    assert set(by_len) == {0, 2, 4}
    assert by_len[0].needs_clarification and by_len[2].needs_clarification  # nothing names Yale or Harvard yet
    assert by_len[2].provenance["history_source"] == {"conversation_id": "same-topic", "turns": 2}
    assert not by_len[4].needs_clarification and by_len[4].resolution["source"] == "history"
    assert by_len[4].resolution["turn_index"] in (2, 3)


def test_unrelated_history_from_a_block_mate_is_a_topic_switch_positive():
    donor = _conv("rivers", "edu", [
        Turn("user", "How long is the Nile?", []), Turn("assistant", "About 6,650 km."),
        Turn("user", "And the Amazon?", []), Turn("assistant", "About 6,400 km."),
    ])
    corpus = Corpus.from_conversations(ALL)
    index = FOUNDED.user_turn_indices()[0]
    ctx = TurnContext(FOUNDED, 1, index, 7, "test", [donor], corpus=corpus)
    records = [o for o in RetrievedPassages(fresh_share=0.0, donor_share=1.0, alone_rate=1.0).generate(ctx) if isinstance(o, Record)]
    stitched = [r for r in records if r.history]
    assert stitched and all(r.needs_clarification for r in stitched)
    assert stitched[0].provenance["history_source"]["conversation_id"] == "rivers"
    assert all(not r.history for r in RetrievedPassages(donor_histories=0, alone_rate=1.0).generate(ctx) if isinstance(r, Record))


def test_retrieval_provenance_survives_the_release_parquet(tmp_path):
    from builder.release import parquet_bytes, read_parquet_records

    [positive] = [o for o in _run(FOUNDED, 1) if isinstance(o, Record)]
    row = positive.to_dict() | {"split": "train"}
    path = tmp_path / "train.parquet"
    path.write_bytes(parquet_bytes([row]))
    [back] = read_parquet_records(path)
    assert back["provenance"]["retrieval"] == {"method": "bm25s", "k": 5, "query": "When was the university founded?"}


# One passage that lists two universities is ambiguous on its own: a single-passage positive.
IVY = Passage("ivy-1", "The Ivy League includes universities such as Brown University and Cornell University. "
              "Brown University was founded in 1764. Cornell University was founded in 1865.", "Ivy League")
CORNELL_OWN = Passage("cornell-own", "Cornell University was founded in 1865 by Ezra Cornell.", "Cornell University", True)
ASKS_CORNELL = _conv("asks-cornell", "ivy", [
    Turn("user", "How do colleges admit students?", [], rewrite="How do colleges admit students?"),
    Turn("assistant", "Most colleges look at grades and essays."),
    Turn("user", "When was Cornell University founded?", [CORNELL_OWN], rewrite="When was Cornell University founded?"),
])
POOL = _conv("ivy-pool", "ivy", [Turn("user", "What is the Ivy League?", [IVY])])


def test_one_passage_naming_two_of_the_kind_is_a_single_passage_positive_after_its_own_history():
    corpus = Corpus.from_conversations([ASKS_CORNELL, POOL])
    ctx = _ctx(ASKS_CORNELL, 2, corpus)
    # The build's shares: no fresh or block-mate copy, so the only record is the one after its own history.
    records = [o for o in RetrievedPassages(k=1, fresh_share=0.0, donor_share=0.0).generate(ctx) if isinstance(o, Record)]
    [positive] = records
    assert positive.needs_clarification and [d["id"] for d in positive.documents] == ["ivy-1"]
    assert positive.history == ctx.history  # colleges in general: nothing singles out a university
    assert sorted(positive.interpretations) == ["When was Brown University founded?", "When was Cornell University founded?"]
    assert positive.provenance["retrieval"]["k"] == 1


def test_k_is_drawn_per_query_from_the_list_and_recorded():
    corpus = Corpus.from_conversations(ALL)
    drawn = set()
    for seed in range(12):
        # one river at any k, and another river name known: a record either way
        ctx = TurnContext(NAMED, 1, 0, seed, "test", [], domain_names={"river": ["Snake River"]}, corpus=corpus)
        for r in RetrievedPassages(k=[1, 5], **{"fresh_share": 1.0, "alone_rate": 1.0}).generate(ctx):
            if isinstance(r, Record):
                drawn.add(r.provenance["retrieval"]["k"])
                assert len(r.documents) <= r.provenance["retrieval"]["k"]
    assert drawn == {1, 5}


def test_a_turn_without_own_history_is_asked_only_at_the_alone_rate():
    corpus = Corpus.from_conversations(ALL)
    assert not [o for o in RetrievedPassages(k=5, alone_rate=0.0).generate(_ctx(FOUNDED, 1, corpus)) if isinstance(o, Record)]


def test_bad_options_are_refused_with_the_option_named():
    import pytest

    for options, word in (({"k": 0}, "k"), ({"k": [2, 11]}, "k"), ({"fresh_share": 1.5}, "fresh_share"), ({"max_entities": 0}, "max_entities"), ({"prefixes": 0}, "prefixes")):
        with pytest.raises(ValueError, match=word):
            RetrievedPassages(**options)


def test_a_history_about_the_referent_resolves_it_even_when_the_passages_cover_others():
    chat = _conv("yale-chat", "ivy", [
        Turn("user", "Tell me about Yale University.", [], rewrite="Tell me about Yale University."),
        Turn("assistant", "Yale University is a private research university in New Haven."),
        Turn("user", "When was it founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
    ])
    corpus = Corpus.from_conversations([chat, POOL])
    records = [o for o in RetrievedPassages(k=1, fresh_share=0.0, donor_share=0.0, alone_rate=0.0).generate(_ctx(chat, 2, corpus))
               if isinstance(o, Record)]
    [negative] = records  # Brown and Cornell retrieved; the chat was about Yale
    assert not negative.needs_clarification and negative.resolution["source"] == "history"
    assert negative.resolution["referent"] == "Yale University" and negative.resolution["turn_index"] in (0, 1)
    assert negative.interpretations == ["When was Yale University founded?"]


def test_known_candidates_are_named_in_the_clarification():
    # 'Which disease do you mean?' over passages naming two diseases (read 17) hides what the passages show
    import random

    from builder.synthesize.rules.retrieved_passages import Kind, Option, clarification

    two = [Option("Sickle cell disease", "", "a"), Option("Huntington's disease", "", "b")]
    for seed in range(40):
        question, pattern = clarification(two, Kind("disease", "diseases"), random.Random(seed))
        assert pattern == "hedge" and "Sickle cell disease" in question and "Huntington's disease" in question
    assert clarification(two[:1], Kind("disease", "diseases"), random.Random(0))[1] == "open"


def test_a_history_naming_what_ties_to_the_referent_resolves_the_passages():
    # 'What is the number of teams in the league?' after the Arizona Cardinals (read 21): the talk says which
    campus = Passage("campus", "Yale University is the oldest college in Connecticut.", "Yale University")
    haven = _conv("haven", "edu", [
        Turn("user", "What is there to see in Connecticut?", [Passage("ct", "Connecticut has Yale University.", "Connecticut")],
             rewrite="What is there to see in Connecticut?"),
        Turn("assistant", "The Peabody Museum and the Green."),
        Turn("user", "When was the university founded?", [YALE_OWN, campus], rewrite="When was Yale University founded?"),
    ])
    records = [o for o in _run_with(haven, 2) if isinstance(o, Record) and o.history]
    assert records and not any(r.needs_clarification for r in records)
    assert records[0].resolution["source"] == "history" and records[0].resolution["turn_index"] == 0


def _run_with(conv, turn):
    corpus = Corpus.from_conversations(ALL + [conv])
    return list(RetrievedPassages(**ALL_HISTORIES).generate(_ctx(conv, turn, corpus)))


# A talk about universities in general for two exchanges before it names Yale: two earlier stitch points.
LONG_TOPIC = _conv("long-topic", "edu", [
    Turn("user", "How do private universities pick students?", [HARVARD], rewrite="How do private universities pick students?"),
    Turn("assistant", "Most private research universities look at grades, essays and interviews."),
    Turn("user", "Do they charge application fees?", [], rewrite="Do private universities charge application fees?"),
    Turn("assistant", "Most charge a fee of about 80 dollars, and many waive it on request."),
    Turn("user", "Tell me about Yale University.", [YALE], rewrite="Tell me about Yale University."),
    Turn("assistant", "Yale University is a private Ivy League research university in New Haven."),
    Turn("user", "When was it founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
])


def test_prefixes_adds_shorter_own_stitch_points_that_name_nothing_of_the_kind():
    corpus = Corpus.from_conversations(ALL + [LONG_TOPIC])

    def by_len(**options):
        gen = RetrievedPassages(**(ALL_HISTORIES | options))
        return {len(r.history): r for r in gen.generate(_ctx(LONG_TOPIC, 4, corpus)) if isinstance(r, Record)}

    one, two = by_len(), by_len(prefixes=2)
    assert set(one) == {0, 4, 6} and set(two) == {0, 2, 4, 6}
    assert two[2].needs_clarification and two[2].provenance["history_source"] == {"conversation_id": "long-topic", "turns": 2}
    assert all(one[n].to_dict() == two[n].to_dict() for n in one)  # the other records stay as they were
    assert not two[6].needs_clarification


def test_a_remark_is_no_generic_query():
    remark = _conv("remark", "edu", [
        Turn("user", "When was Yale University founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
        Turn("assistant", "In 1701."),
        Turn("user", "I'd better go to Yale University ...", [YALE_OWN], rewrite="I'd better go to Yale University ..."),
    ])
    out = _run_with(remark, 2)
    assert not [o for o in out if isinstance(o, Record)]
    assert [o.reason for o in out] == ["the standalone query is no question or request"]


def test_a_name_the_question_keeps_that_ties_to_the_referent_leaves_no_positive():
    # 'Is there hydrogen on the planet to make water with the oxygen produced by MOXIE?' (read 25): MOXIE says Mars.
    moxie = [Passage(f"moxie-{i}", f"MOXIE makes oxygen from the carbon dioxide of Mars, note {i}.", "MOXIE") for i in range(3)]
    earth = Passage("earth-1", "Water on Earth and water on Mars: hydrogen is rare on Mars, common on Earth.", "Water")
    pool = _conv("space-pool", "space", [Turn("user", "What does MOXIE do?", moxie + [earth])])
    asks = _conv("space", "space", [
        Turn("user", "Is there hydrogen on Mars to make water with the oxygen produced by MOXIE?",
             [Passage("own", "MOXIE on Mars.", "MOXIE", True)],
             rewrite="Is there hydrogen on Mars to make water with the oxygen produced by MOXIE?"),
    ])
    corpus = Corpus.from_conversations([pool, asks])
    out = list(RetrievedPassages(**ALL_HISTORIES).generate(_ctx(asks, 1, corpus)))
    assert not [o for o in out if isinstance(o, Record) and o.needs_clarification]
    # One planet in the passages: no other planet is said with MOXIE to read the question with (this refuses it
    # first); where one were, the tie to Mars would.
    assert any(isinstance(o, Rejection) and ("still names 'MOXIE'" in o.reason or "no other name of the kind" in o.reason)
               and "planet" in o.query for o in out)


def test_a_rare_name_said_only_with_the_referent_ties_the_question_to_it():
    # 'Was the country better off as a result of MacArthur not criminalizing the Emperor?': the domain's one
    # passage that says MacArthur says Japan and no other country (read 33, ce-382f73c533e99230)
    from builder.synthesize import kinds as kd

    def ctx(macarthur_text):
        pool = _conv("war-pool", "hist", [Turn("user", "Who was MacArthur?", [
            Passage("mac", macarthur_text, "Douglas MacArthur"),
            Passage("it", "Italy and France signed the treaty.", "Treaty")])])
        asks = _conv("war", "hist", [Turn("user", "Was Japan better off after MacArthur?", [],
                                          rewrite="Was Japan better off after MacArthur?")])
        return _ctx(asks, 1, Corpus.from_conversations([pool, asks]))

    query = "Was the country better off after MacArthur?"
    c = ctx("MacArthur led the occupation of Japan after the war.")
    assert kd.singled_by_other_name(c, "Japan", "country", query) == "MacArthur"
    # said with a rival too, or without the referent: no tie
    assert kd.singled_by_other_name(ctx("MacArthur served in Japan and in Italy."), "Japan", "country", query) is None
    assert kd.singled_by_other_name(ctx("MacArthur was a general."), "Japan", "country", query) is None


def _tie_ctx(name, texts, query):
    pool = _conv(f"{name}-pool", "space", [Turn("user", f"What is {name}?", [
        Passage(f"p{i}", t, name) for i, t in enumerate(texts)])])
    asks = _conv(f"{name}-asks", "space", [Turn("user", query, [], rewrite=query)])
    return _ctx(asks, 1, Corpus.from_conversations([pool, asks]))


def test_a_rival_said_only_beside_the_referent_does_not_break_the_tie():
    # 'Did Juno and Galileo find cyclones on the planet?' had been open between Jupiter and Earth: every Juno page
    # that says Earth says Jupiter too, as the yardstick ('cyclones as large as Earth'; read 46, ce-3688f6db8cdf113c)
    from builder.synthesize import kinds as kd

    query = "Did Juno find cyclones on the planet?"
    juno = ["Juno found polar cyclones on Jupiter as large as Earth.", "Juno orbits Jupiter, far from Earth.",
            "Juno measured the magnetic field of Jupiter.", "Juno studies Jupiter's auroras."]
    assert kd.singled_by_other_name(_tie_ctx("Juno", juno, query), "Jupiter", "planet", query) == "Juno"
    # a rival said where the referent is not still competes: no tie
    split = ["Juno found cyclones on Jupiter.", "Juno orbits Jupiter.", "Juno flew past Earth.", "Juno left Earth."]
    assert kd.singled_by_other_name(_tie_ctx("Juno", split, query), "Jupiter", "planet", query) is None
    # nor does a rival said beside the referent as often as it
    beside = ["Juno saw Jupiter and Saturn.", "Juno compared Jupiter with Saturn."]
    assert kd.singled_by_other_name(_tie_ctx("Juno", beside, query), "Jupiter", "planet", query) is None


def test_a_name_typed_in_lower_case_ties_the_talk_as_its_capitalized_form():
    # 'the league' after 'where do the arizona cardinals play this week' had been open between the NFL, the NBA, ...:
    # the block's rewrites spell the name capitalized, and its passages go with the NFL (read 47, ce-83a9a2401688dfb5)
    from builder.synthesize import kinds as kd

    query = "How many teams are in the league?"
    ctx = _tie_ctx("Arizona Cardinals", ["The Arizona Cardinals play in the NFL.", "The NFL's Arizona Cardinals lost."], query)
    talk = [{"role": "user", "content": "where do the arizona cardinals play this week"},
            {"role": "assistant", "content": "I do not know."}]
    assert kd.singled_by_history(ctx, "NFL", "league", talk) is None  # no rewrite in the block spells it
    ctx.block_entities = [("Arizona Cardinals", "cards", 1), ("Chicago Cardinals", "cards", 2)]
    assert kd.singled_by_history(ctx, "NFL", "league", talk) == "Arizona Cardinals"


def test_passages_that_name_places_in_the_referent_tie_the_question_to_it():
    # 'What is the MLS All-Star Game called outside of the country?': its passages name Colorado and Kansas, not
    # the USA (read 34, ce-572d15bae6af64d5); a city the lexicon places in a country counts the same way.
    from builder.synthesize import kinds as kd

    def ctx(*texts):
        pool = _conv("mls-pool", "sport", [Turn("user", "MLS games?", [
            Passage(f"p{i}", t, "MLS All-Star Game") for i, t in enumerate(texts)])])
        asks = _conv("mls", "sport", [Turn("user", "What is the MLS All-Star Game called outside of the USA?", [],
                                           rewrite="What is the MLS All-Star Game called outside of the USA?")])
        return _ctx(asks, 1, Corpus.from_conversations([pool, asks]))

    query = "What is the MLS All-Star Game called outside of the country?"
    us = ctx("The 2007 MLS All-Star Game was played in Commerce City, Colorado.",
             "The 2013 MLS All-Star Game was played in Kansas City, Kansas.")
    assert kd.singled_by_other_name(us, "USA", "country", query) == "MLS All-Star Game"
    assert kd.singled_by_other_name(us, "Italy", "country", query) is None
    berlin = ctx("The MLS All-Star Game toured Berlin.", "The MLS All-Star Game drew crowds in Berlin.")
    assert kd.singled_by_other_name(berlin, "Germany", "country", query) == "MLS All-Star Game"
    assert kd.singled_by_other_name(ctx("The MLS All-Star Game is played each summer.",
                                        "The MLS All-Star Game draws crowds."), "USA", "country", query) is None
    talk = [{"role": "user", "content": "when did the wall in berlin come down"},
            {"role": "assistant", "content": "The Berlin Wall began to come down on 9 November 1989."}]
    assert kd.place_in(talk, "country") == ("Berlin", "Germany")


def test_a_history_naming_a_state_resolves_the_country_to_the_united_states():
    # 'Which is the largest river in the country?' after a talk about Maine (read 28, ce-7a86d6e2a3b8bfd7)
    snake = Passage("snake", "The Snake River is the thirteenth longest river in the United States.", "Snake River")
    nile = Passage("nile", "The Nile is the longest river in Egypt and flows north into the sea.", "Nile")
    own = Passage("us-own", "The Missouri River is the longest river in the United States.", "Missouri River", True)
    maine = _conv("maine", "geo", [
        Turn("user", "Where does the Penobscot River start?", [PENOBSCOT], rewrite="Where does the Penobscot River start?"),
        Turn("assistant", "The Penobscot River begins in north-central Maine and flows into Penobscot Bay."),
        Turn("user", "Which is the largest river in the United States?", [own],
             rewrite="Which is the largest river in the United States?"),
    ])
    pool = _conv("rivers", "geo", [Turn("user", "Which rivers are long?", [snake, nile])])
    corpus = Corpus.from_conversations(ALL + [maine, pool])
    out = list(RetrievedPassages(**ALL_HISTORIES).generate(_ctx(maine, 2, corpus)))
    records = [o for o in out if isinstance(o, Record) and o.query == "Which is the largest river in the country?"]
    after_maine = [r for r in records if r.history and "Maine" in r.history[-1]["content"]]
    assert after_maine and not any(r.needs_clarification for r in after_maine)
    assert after_maine[0].resolution["referent"] == "United States" and after_maine[0].resolution["turn_index"] == 1
    assert any(r.needs_clarification for r in records if not r.history)  # with nothing said, still 'which country?'


def test_an_option_is_shown_as_a_sentence_says_it():
    # 'There are many stars, like Sun.' (read 28's look at the single-passage positives)
    from builder.synthesize.rules.retrieved_passages import Option

    assert Option("Sun", "", "p").shown() == "the Sun"
    assert Option("Yale University", "founded in 1701", "p").shown() == "Yale University, founded in 1701"


def test_a_title_is_no_option_and_a_persons_fact_says_who():
    # read 29, ce-8c10012a9f319c3e: 'Western emperor' and 'Roman Emperor' were options for 'the emperor', and
    # 'Charlemagne, which inherited the Frankish realm'
    from builder.synthesize.rules.retrieved_passages import Kind, fact_about, kind_options

    emperors = Passage("emp-1", "Charlemagne inherited the Frankish realm in 768. Augustus was the first Roman "
                       "Emperor. The Western emperor lost power in 476.", "Charlemagne")
    names = [o.name for o in kind_options([emperors], Kind("emperor", "emperors"))]
    assert "Charlemagne" in names and "Roman Emperor" not in names and "Western emperor" not in names
    assert fact_about("Charlemagne", ["Charlemagne inherited the Frankish realm in 768."], "emperor") == \
        "who inherited the Frankish realm in 768"


def test_a_fact_is_said_of_a_name_only_where_it_is_the_subject():
    from builder.synthesize.rules.retrieved_passages import fact_about

    # read 30, ce-2dd2f481146aad59: 'the Super Bowl, which has performed to a previously recorded track'
    band = ["Every band in the last 10 years at the Super Bowl has performed to a previously recorded track."]
    assert fact_about("Super Bowl", band, "game") == ""
    assert fact_about("Super Bowl", ["The Super Bowl draws over 100 million viewers."], "game") == \
        "which draws over 100 million viewers"


def test_a_fact_is_not_cut_inside_a_number():
    # read 69, ce-159c6f2be2f820a9: 'Creutzfeldt-Jakob disease, a sporadic prion disease arising in 1' (of '1:1,000,000')
    from builder.synthesize.rules.retrieved_passages import fact_about

    said = ["Creutzfeldt-Jakob disease, a sporadic prion disease arising in 1:1,000,000 people, and variant CJD are rare."]
    assert fact_about("Creutzfeldt-Jakob disease", said, "disease") == "a sporadic prion disease arising in 1:1,000,000 people"
    assert fact_about("Yale", ["Yale, founded in New Haven in 1701, has 14 colleges."], "university") == \
        "founded in New Haven in 1701"


def test_a_part_of_the_one_product_the_talk_is_about_is_no_positive():
    # 'Where can I find the SDK ...?' after a talk about Cloudant asks for Cloudant's SDK, whatever SDKs the passages
    # name (read 31, ce-9da336eae30217b3); in a fresh chat the passages' SDKs are the readings
    java = Passage("java-1", "The Java SDK is a library for pushing and fetching data from Java apps.", "Java SDK")
    python = Passage("py-1", "The Python SDK is a library for pushing and fetching data from Python apps.", "Python SDK")
    own = Passage("sdk-own", "Use the Cloudant SDK for pushing and fetching data.", "Cloudant", True)
    talk = _conv("cloudant", "cloud", [
        Turn("user", "What is IBM Cloudant?", rewrite="What is IBM Cloudant?"),
        Turn("assistant", "IBM Cloudant is a managed database service for JSON documents."),
        Turn("user", "Where can I find the Cloudant SDK for pushing and fetching data?", [own],
             rewrite="Where can I find the Cloudant SDK for pushing and fetching data?"),
    ])
    pool = _conv("sdks", "cloud", [Turn("user", "Which SDKs are there?", [java, python])])
    corpus = Corpus.from_conversations([talk, pool])
    out = list(RetrievedPassages(**ALL_HISTORIES).generate(_ctx(talk, 2, corpus)))
    records = [o for o in out if isinstance(o, Record)]
    assert not [r for r in records if r.history and r.needs_clarification]
    assert any("the history talks of one product" in o.reason for o in out if isinstance(o, Rejection))


def test_the_one_thing_the_user_asked_about_resolves_names_only_the_reply_added():
    # 'What are the benefits of the platform?' after 'What is Red Hat OpenShift?', answered 'a Kubernetes container
    # platform': the user asked about OpenShift, the reply added Kubernetes (read 32, ce-859af1264a2c1686)
    chat = _conv("asks-yale", "ivy", [
        Turn("user", "What is Yale University?", rewrite="What is Yale University?"),
        Turn("assistant", "Yale University is a private research university, founded after Harvard University."),
        Turn("user", "When was the university founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
    ])
    pool = _conv("two", "ivy", [Turn("user", "Which universities are old?", [YALE, HARVARD])])
    corpus = Corpus.from_conversations([chat, pool])
    out = list(RetrievedPassages(**ALL_HISTORIES).generate(_ctx(chat, 2, corpus)))
    own = [o for o in out if isinstance(o, Record) and o.history]
    assert own and not any(r.needs_clarification for r in own)
    assert own[0].resolution["source"] == "history" and "Yale" in own[0].resolution["referent"]
    # when the user's own turns name both, the question stays open
    both = _conv("asks-both", "ivy", [
        Turn("user", "Is Yale University older than Harvard University?", rewrite="Is Yale University older than Harvard University?"),
        Turn("assistant", "No, Harvard University is older."),
        Turn("user", "When was the university founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
    ])
    corpus = Corpus.from_conversations([both, pool])
    out = [o for o in RetrievedPassages(**ALL_HISTORIES).generate(_ctx(both, 2, corpus)) if isinstance(o, Record)]
    assert any(r.needs_clarification for r in out if r.history)


def test_a_history_that_says_one_readings_own_words_leaves_no_positive():
    # 'How can I make the game interesting?' after 'increase the score for each sample tube collected': the Mars
    # Sample Collection game, not the Mars Helicopter one (read 33, ce-2a982d61e696ef7e)
    from builder.synthesize.rules.retrieved_passages import Option, _echoed

    games = [Option("Mars Sample Collection Video Game", "", "g1"), Option("Mars Helicopter Video Game", "", "g2")]
    said = "You could increase the score by one or more points for each sample tube collected."
    assert _echoed(said, games, "game") == ("Mars Sample Collection Video Game", "collection', 'sample")
    assert _echoed("Mars games are fun to code.", games, "game") is None  # words every reading has
    assert _echoed("A helicopter can collect a sample.", games, "game") is None  # words of both
    # one shared word is chance: 'blood cells' says nothing of sickle cell disease
    diseases = [Option("Sickle cell disease", "", "d1"), Option("Huntington's disease", "", "d2")]
    assert _echoed("Bone marrow makes about 500 billion blood cells per day.", diseases, "disease") is None


def test_a_kind_noun_that_opens_a_tables_field_label_names_nothing():
    # read 35, ce-65e3cc9f89bd84dd: '2 : 05 p.m. MST Game weather : Played indoors' offered an 'MST Game'
    from builder.synthesize.rules.retrieved_passages import Kind, kind_options

    table = Passage("t", "Date : December 10 Game time : 2 : 05 p.m. MST Game weather : Played indoors", "2017 season")
    names = [o.name for o in kind_options([table], Kind("game", "games"))]
    assert "MST Game" not in names, names
    named = [o.name for o in kind_options([Passage("a", "The MLS All-Star Game was played in July.", "MLS")],
                                          Kind("game", "games"))]
    assert "MLS All-Star Game" in named, named


def test_a_name_used_only_as_a_yardstick_is_no_thing_the_passages_cover():
    # read 41, ce-06e2e19b32808cce: Juno's discoveries 'at the planet' were offered as Earth or Jupiter over
    # passages on Juno at Jupiter that say Earth only in 'as large as Earth', 'one Earth diameter', 'from Earth'
    from builder.synthesize.rules.retrieved_passages import Kind, kind_options

    juno = Passage("j", "Polar cyclones as large as Earth swirl there. Juno was one Earth diameter from Jupiter. "
                        "Previous spacecraft visiting Jupiter saw the view visible from Earth.", "Juno - NASA Science")
    assert [o.name for o in kind_options([juno], Kind("planet", "planets"))] == ["Jupiter"]
    mars = Passage("m", "Mars has two small moons. Its day is a little longer than Earth's.", "")
    assert [o.name for o in kind_options([mars], Kind("planet", "planets"))] == ["Mars"]  # Earth only as a yardstick
    earth = Passage("e", "Earth is the third planet from the Sun.", "Home")
    assert "Earth" in [o.name for o in kind_options([juno, earth], Kind("planet", "planets"))]


def test_a_known_name_the_query_still_says_is_no_other_reading():
    # read 41, ce-8574d85eda6a508f: 'Should I choose the account or a 401K ...?' was read as 'the 401K account or a 401K'
    # (a list member is no longer made generic at all; a comparison with 'than' still keeps the other name)
    import random

    from builder.synthesize.rules.retrieved_passages import Option

    standalone = "Is the Penobscot River colder than the Kennebec this spring?"
    got = generalize(standalone, [PENOBSCOT_OWN])
    assert got.query == "Is the river colder than the Kennebec this spring?"
    ctx = TurnContext(NAMED, 1, 0, 7, "test", [], domain_names={"river": ["Kennebec River", "Snake River"]},
                      corpus=Corpus.from_conversations(ALL))
    record = RetrievedPassages()._single(ctx, got, 1, [PENOBSCOT], Option("Penobscot River", "", "pen-1"), [], None,
                                         random.Random(0), "retrieved_passages")
    assert sorted(record.interpretations) == ["Is the Penobscot River colder than the Kennebec this spring?",
                                              "Is the Snake River colder than the Kennebec this spring?"]


def test_a_fact_with_markup_in_it_is_no_fact():
    # read 44, ce-69e9aa9ca35a3e0c: 'Do you mean IBM Cloudant, which uses an [eventually consistent], or ...?'
    from builder.synthesize.rules.retrieved_passages import fact_about

    marked = ["IBM Cloudant uses an [eventually consistent] model for its replicas.",
              "IBM Cloudant uses an [eventually consistent](https://cloud.ibm.com/docs) model for its replicas."]
    for sentence in marked:
        assert fact_about("IBM Cloudant", [sentence], "service") == ""
    assert fact_about("IBM Cloudant", ["IBM Cloudant uses an eventually consistent model for its replicas."], "service") \
        == "which uses an eventually consistent model for its replicas"


def test_a_counted_kind_noun_after_an_adjective_names_nothing():
    # 'Macbeth is the fifth Shakespearean play produced ...' counts plays of a sort: 'Shakespearean play' was a
    # reading (read 55, ce-80bc8b6f2bc4c273). 'Macbeth is a play' still names Macbeth.
    from builder.synthesize.rules.retrieved_passages import Kind, kind_options

    counted = Passage("s", "Macbeth is the fifth Shakespearean play produced on the Chinese stage.", "Shakespeare's reputation")
    assert [o.name for o in kind_options([counted], Kind("play", "plays"))] == ["Macbeth"]
    every = Passage("e", "Every Elizabethan Play was licensed by the Master of the Revels.", "Licensing")
    assert [o.name for o in kind_options([every], Kind("play", "plays"))] == []
    named = Passage("h", "The Mousetrap Play opened in London in 1952 and still runs.", "The Mousetrap")
    assert [o.name for o in kind_options([named], Kind("play", "plays"))] == ["Mousetrap Play"]


def _river_in_maine(extra: list[Passage]):
    # Maine is said beside the Penobscot River once and in two passages with no river: no tie of the question to it.
    lakes = Passage("lakes-1", "Maine has thousands of lakes and ponds.", "Maine lakes")
    pool = _conv("rivers", "geo", [Turn("user", "Which rivers are in Maine?", [PENOBSCOT, MAINE, lakes, *extra])])
    asks = _conv("asks", "geo", [Turn("user", "When was the Penobscot River in Maine named?", [PENOBSCOT_OWN],
                                      rewrite="When was the Penobscot River in Maine named?")])
    corpus = Corpus.from_conversations([pool, asks])
    index = asks.user_turn_indices()[0]
    ctx = TurnContext(asks, 1, index, 7, "test", [], domain_names={"river": ["Snake River", "Kennebec River"]}, corpus=corpus)
    out = [o for o in RetrievedPassages(**ALL_HISTORIES).generate(ctx) if getattr(o, "query", "").startswith("When was the river in Maine")]
    return [o for o in out if isinstance(o, Record) and o.needs_clarification], out


def test_a_question_that_names_a_place_is_read_only_with_the_kinds_said_with_it():
    # 'Was Japan better off as a result of the general not criminalizing the Emperor?' was read with Meng Tian, a Qin
    # general no passage says with Japan (read 59, ce-bfc5b513804db760): one river in the passages, said with Maine,
    # and the domain's other rivers never said with Maine leave no second reading.
    positives, out = _river_in_maine([])
    assert not positives
    assert any(isinstance(o, Rejection) and "no other name of the kind" in o.reason for o in out)
    # a river that a passage says with Maine is a reading; one never said with it is not
    kennebec = Passage("kennebec-1", "The Kennebec River rises in the mountains of western Maine.", "Kennebec River")
    positives, _ = _river_in_maine([kennebec])
    assert positives and all("When was the Kennebec River in Maine named?" in r.interpretations for r in positives)
    assert not any("Snake" in i for r in positives for i in r.interpretations)



def _after_own_four_turns(chat):
    """The records of `chat`'s third user turn asked after its own four-turn history, over a pool that also holds
    Yale and Harvard passages."""
    pool = _conv("two", "ivy", [Turn("user", "Which universities are old?", [YALE, HARVARD])])
    out = RetrievedPassages(**ALL_HISTORIES).generate(_ctx(chat, 3, Corpus.from_conversations([chat, pool])))
    return [o for o in out if isinstance(o, Record) and len(o.history) == 4]


def test_the_thing_the_user_asked_about_stays_the_topic_past_a_pronoun_follow_up():
    # 'Can you tell me about the virtualization aspect of the platform?' after 'What is Red Hat OpenShift?' and 'What
    # benefits does it offer?', whose replies also named Kubernetes: the user's last turn need not name OpenShift
    # again (read 62, ce-60a413d1d3d0bd00)
    chat = _conv("asks-yale-then-it", "ivy", [
        Turn("user", "What is Yale University?", rewrite="What is Yale University?"),
        Turn("assistant", "Yale University is a private research university, founded after Harvard University."),
        Turn("user", "Is it expensive?", rewrite="Is Yale University expensive?"),
        Turn("assistant", "Tuition is high, as at Harvard University, but aid is generous."),
        Turn("user", "When was the university founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
    ])
    own = _after_own_four_turns(chat)
    assert own and not any(r.needs_clarification for r in own), [(r.query, r.interpretations) for r in own]
    assert own[0].resolution["source"] == "history" and "Yale" in own[0].resolution["referent"]


def test_a_new_keyword_turn_moves_the_topic_off_the_thing_the_user_asked_about():
    # 'What are the solutions offered by the platform?' after 'What is Red Hat OpenShift?' and then 'Virtualization'
    # (answered with IBM Cloud Virtualization) was resolved as OpenShift (read 67, ce-ebfaa78e837dda42).
    chat = _conv("asks-yale-then-harvard", "ivy", [
        Turn("user", "What is Yale University?", rewrite="What is Yale University?"),
        Turn("assistant", "Yale University is a private research university in New Haven."),
        Turn("user", "Cambridge", rewrite="Which university is in Cambridge?"),
        Turn("assistant", "Harvard University is a private research university in Cambridge."),
        Turn("user", "When was the university founded?", [YALE_OWN], rewrite="When was Yale University founded?"),
    ])
    own = _after_own_four_turns(chat)
    assert own and all(r.needs_clarification for r in own), [(r.query, r.resolution) for r in own]


def test_a_name_longer_than_the_pattern_reaches_is_not_cut_into_another():
    # 'York State Attorney General’s Office' was a hard negative's referent (read 67, ce-f678f0c48fccf951).
    from builder.synthesize.rules.retrieved_passages import Kind, _named_in_text

    office = Kind("office", "offices")
    text = ("She was head of the Brooklyn Regional Office of the New York State Attorney General’s Office. "
            "Call the Alameda County Public Works Office.")
    names = _named_in_text(text, office)
    assert "Brooklyn Regional Office" in names and "Alameda County Public Works Office" in names
    assert not any(n.startswith("York") for n in names), names


def test_four_or_more_options_are_all_named_in_a_list_never_three_in_a_hedge():
    # 'Do you mean Germany, the United Kingdom or Spain?' over five countries (read 66, ce-992e774ec1d677d4)
    import random

    from builder.synthesize.rules.retrieved_passages import Kind, Option, clarification

    five = [Option(n, "", f"p{i}") for i, n in enumerate(["Germany", "France", "Spain", "the United States", "Italy"])]
    for seed in range(30):
        question, pattern = clarification(five, Kind("country", "countries"), random.Random(seed))
        assert pattern == "list" and all(tx.in_running_text(o.name) in question for o in five), question
    patterns = {clarification(five[:3], Kind("country", "countries"), random.Random(s))[1] for s in range(30)}
    assert patterns == {"hedge"}


def test_the_kind_said_of_one_unnamed_thing_last_leaves_no_positive_after_that_history():
    # 'Can you explain how the score is calculated?' right after an answer about 'your credit score' asks about that
    # score (reads 68 and 70, ce-79fb1e34ad5d64ed, ce-afe26083746d9a07), whatever scores the passages name.
    local = _conv("local", "geo", [
        Turn("user", "Is fishing good near my town?", rewrite="Is fishing good near my town?"),
        Turn("assistant", "Fishing on your local river depends on the season and the water level."),
        Turn("user", "Tell me about the Penobscot River.", rewrite="Tell me about the Penobscot River."),
        Turn("assistant", "The Penobscot River flows through Maine."),
        Turn("user", "When was it named?", [PENOBSCOT_OWN], rewrite="When was the Penobscot River named?"),
    ])
    corpus = Corpus.from_conversations(ALL + [local])
    ctx = TurnContext(local, 3, 4, 7, "test", [], domain_names={"river": ["Snake River", "Penobscot River"]}, corpus=corpus)
    out = list(RetrievedPassages(**ALL_HISTORIES).generate(ctx))
    records = [o for o in out if isinstance(o, Record)]
    assert not [r for r in records if r.history and r.needs_clarification], [(r.query, r.history) for r in records]
    assert [r for r in records if len(r.history) == 4 and not r.needs_clarification]  # the talk that names it resolves it
    assert any("without naming it" in o.reason for o in out if isinstance(o, Rejection))
    assert [r for r in records if not r.history and r.needs_clarification]  # a fresh chat still asks which river
