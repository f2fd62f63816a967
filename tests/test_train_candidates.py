"""The candidate counts the baseline sees: how many things of the query's kind the context names."""

from builder.train.candidates import CANDIDATE_FEATURES, candidate_features, named, query_kind


def _record(query, turns, docs=()):
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(turns)]
    return {"query": query, "history": history, "documents": [d if isinstance(d, dict) else {"title": "", "text": d} for d in docs]}


def _on(record):
    return {k for k, v in zip(CANDIDATE_FEATURES, candidate_features(record)) if v}


def test_query_kind_is_the_noun_of_an_open_kind_phrase():
    assert query_kind("Does this clinic offer mental health care?") == "clinic"
    assert query_kind("Does the Causeway VA Clinic offer mental health care?") is None  # named
    assert query_kind("What is the capital of France?") is None  # bound by what follows


def test_two_named_rivals_leave_the_kind_phrase_open_and_one_singles_it_out():
    two = _record("How long is the river?", ["Which rivers flow through Maine?",
                                             "The Penobscot River and the Kennebec River both do."])
    one = _record("How long is the river?", ["Tell me about the Penobscot River.",
                                             "The Penobscot River flows through Maine."])
    assert {"kind_phrase", "kind_named_history_2plus", "kind_named_last_exchange_2plus"} <= _on(two)
    assert {"kind_phrase", "kind_named_history_1", "kind_named_last_exchange_1"} <= _on(one)
    assert "kind_named_history_2plus" not in _on(one)


def test_a_lexicon_name_said_in_lower_case_is_a_candidate():
    said = named("People there mostly play soccer.", "sport")
    assert any(n.lower() == "soccer" for n in said)


def test_a_continent_is_no_mention_of_the_country_its_name_ends_with():
    # 'North America' is no 'America' (the United States): a talk about it names no country
    assert named("The urban site of Cahokia in North America was abandoned.", "country") == ()
    assert named("Trade with America and Mexico grew.", "country") == ("America", "Mexico")


def test_pronoun_rivals_are_things_of_one_kind_in_the_last_exchange():
    rec = _record("How does it help?", ["Which charts show the load?",
                                        "The Query Runtime Chart and the Query Throughput Chart do."])
    assert "pronoun_rivals_last_exchange_2plus" in _on(rec)
    one = _record("How does it help?", ["What does the Query Runtime Chart show?",
                                        "The Query Runtime Chart shows the time each query takes."])
    assert "pronoun_rivals_last_exchange_1" in _on(one)
    assert not any(k.startswith("pronoun_") for k in _on(_record("Is it true that fees apply?", ["Hi", "Hello"])))


def test_no_context_gives_no_count_but_still_marks_the_kind_phrase():
    row = _on(_record("Does this clinic offer mental health care?", []))
    assert row == {"kind_phrase"}


def test_query_kind_reads_the_head_past_modifiers_and_an_upper_case_kind():
    assert query_kind("When was the famous basketball player born?") == "player"
    assert query_kind("Does this outpatient clinic provide mental health services?") == "clinic"
    assert query_kind("What are the best practices for using the SDK?") == "sdk"


def test_passage_titles_of_the_kind_count_the_things_retrieved():
    docs = [{"title": "Kobe Bryant", "text": "Kobe Bryant is an American retired professional basketball player."},
            {"title": "LeBron James", "text": "James is a basketball player born in Akron."},
            {"title": "LeBron James", "text": "The player joined the Lakers."},
            {"title": "Akron, Ohio", "text": "Akron is a city in Ohio."}]
    rec = _record("When was the famous basketball player born?", [], docs)
    assert {"kind_phrase", "kind_titles_documents_2plus"} <= _on(rec)
    one = _record("When was the famous basketball player born?", [], docs[1:])
    assert "kind_titles_documents_1" in _on(one)


def test_a_name_said_short_and_long_is_one_candidate():
    from builder.train.candidates import named

    # the kind lexicon knows the Europa Clipper as a spacecraft (5ae7e68); its own words are what this checks
    assert named("Europa Clipper is a spacecraft. The Clipper spacecraft flies by Europa.", "spacecraft") == ("Europa Clipper",)
    assert named("The Great Wall of China is long. The Great Wall is old.", "wall") == ("Great Wall of China",)
    assert named("The Lite plan and the Standard plan.", "plan") == ("Lite plan", "Standard plan")
    assert len(named("an IRA or a Roth IRA account", "account")) == 2  # an acronym names the family


def test_a_measure_or_a_sort_is_no_kind_phrase():
    assert query_kind("Does the lender make money in this kind of transaction?") is None
    assert query_kind("Is this huge amount of data useful?") is None
    assert query_kind("Are these clinics open 24/7 on holidays?") == "clinic"  # '7' is no noun
    assert query_kind("How do these types of loans differ?") is None  # 'types' is a sort, like 'kind'

