"""Resolvability features on small hand-made records (every expected value worked out by hand)."""

from __future__ import annotations

from builder.train.features import HAND_FEATURES, hand_features
from builder.train.resolve import RESOLVE_FEATURES, Ref, instances, referring_expressions, resolvability, stem


def rec(query, history=(), documents=()):
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": h} for i, h in enumerate(history)]
    docs = [{"id": f"d{i}", "title": t, "text": x} for i, (t, x) in enumerate(documents)]
    return {"query": query, "history": turns, "documents": docs,
            "setting": "post_retrieval" if docs else "pre_retrieval"}


def f(record, name):
    return resolvability(record)[RESOLVE_FEATURES.index(name)]


def test_kind_noun_phrases_and_their_heads():
    (ref,) = referring_expressions("Does this outpatient clinic provide mental health services?")
    # the verb "provide" ends the phrase; the head is the kind noun
    assert ref == Ref("demonstrative", "this", "clinic", ("outpatient",))
    (ref,) = referring_expressions("When was the famous basketball player born?")
    assert (ref.kind, ref.head, ref.modifiers) == ("definite", "player", ("famous", "basketball"))
    price, bond = referring_expressions("What is the current price of the bond?")
    assert price.restricted and price.head == "price"  # bound by "of ..."
    assert bond.head == "bond" and not bond.restricted
    (named,) = referring_expressions("Does the Causeway VA Clinic offer dental care?")
    assert named.named and named.head == "clinic"
    assert referring_expressions("What is the best way to start?")[0].restricted


def test_a_participle_after_an_inverted_subject_is_the_verb_not_a_bound_clause():
    # 'When was the university founded?': the auxiliary comes first, 'founded' is the question's verb
    for query in ("When was the university founded?", "Was the plan approved?", "Where is the campus located?"):
        (ref,) = referring_expressions(query)
        assert not ref.restricted, query
    # 'What are the services offered by ...': 'what' is the subject, the participle binds the services
    assert referring_expressions("What are the services offered by the library?")[0].restricted
    assert referring_expressions("I want the car loaded with options.")[0].restricted


def test_pronouns_but_not_expletives_or_existentials():
    assert [r.word for r in referring_expressions("Are they safer than AAA bonds?")] == ["they"]
    assert referring_expressions("Are they safer than AAA bonds?")[0].plural
    assert referring_expressions("Is there a minimum amount required?") == []
    assert referring_expressions("Is it true that volunteers help?") == []  # expletive it, complementizer that
    assert [r.word for r in referring_expressions("How does this affect the cell?")][:1] == ["this"]
    assert stem("clinics") == "clinic" and stem("company's") == "company" and stem("policies") == "policy"


def test_instances_of_a_kind_in_a_text():
    text = "Which is better: the query runtime distribution chart or the query throughput chart?"
    assert instances(text, "chart") == {"query runtime distribution chart", "query throughput chart"}
    # a generic mention names no instance
    assert instances("The bond price is what you pay to acquire a bond.", "bond") == set()
    assert instances("AAA bonds are safe.", "bond") == {"aaa bond"}


def test_a_kind_the_history_does_not_single_out():
    query = "Does this outpatient clinic provide mental health services?"
    # the history is about something else: the kind is absent, nothing singles the clinic out
    off_topic = rec(query, ["How do I manage inventory turnover?", "Track stock levels weekly."])
    assert f(off_topic, "kind_absent_from_context") == 1 and f(off_topic, "kind_unsingled") == 1
    assert f(off_topic, "kind_unsingled_demonstrative") == 1 and f(off_topic, "kind_instances_history_0") == 1
    # exactly one clinic in the history: resolved
    one = rec(query, ["Tell me about the Causeway VA Clinic.", "The Causeway VA Clinic offers primary care."])
    assert f(one, "kind_unsingled") == 0 and f(one, "kind_instances_history_1") == 1
    assert f(one, "kind_in_history") == 1 and f(one, "kind_in_last_exchange") == 1
    # two clinics: which one?
    two = rec(query, ["Compare the Causeway VA Clinic and the Brockton Urgent Care Clinic.", "Both are open daily."])
    assert f(two, "kind_instances_history_2plus") == 1 and f(two, "kind_unsingled") == 1
    # a full sentence, not a fragment
    assert f(off_topic, "query_full_sentence") == 1 and f(off_topic, "query_fragment") == 0


def test_passages_that_name_one_or_several_of_the_kind():
    query = "What is the Jewish population of the country?"
    several = rec(query, documents=[("Israel", "Israel is a country in the Middle East. The Haifa country office."),
                                    ("Egypt", "Egypt is a country in Africa. The Cairo country report.")])
    assert f(several, "kind_instances_documents_2plus") == 1 and f(several, "kind_unsingled") == 1
    one = rec(query, documents=[("Israel", "The Haifa country office counts the population.")])
    assert f(one, "kind_instances_documents_1") == 1 and f(one, "kind_unsingled") == 0


def test_pronoun_candidates_in_the_last_turn():
    query = "How does it help us understand performance?"
    two = rec(query, ["Which is better: the Runtime Chart or the Throughput Chart?", "Neither is better."])
    assert f(two, "pronoun_last_turn_coordination") == 1 and f(two, "pronoun_last_turn_names_2plus") == 1
    one = rec(query, ["What does the Runtime Chart show?", "It shows the query runtimes."])
    assert f(one, "pronoun_last_turn_coordination") == 0 and f(one, "pronoun_last_turn_names_1") == 1
    bare = rec(query)
    assert f(bare, "pronoun_no_context") == 1 and f(one, "pronoun_no_context") == 0


def test_fragments_and_named_queries():
    assert f(rec("taxation?"), "query_fragment") == 1 and f(rec("taxation?"), "query_full_sentence") == 0
    assert f(rec("When was Kobe Bryant born?"), "query_names") == 1
    assert f(rec("When was the famous basketball player born?"), "query_names") == 0


def test_hand_features_carry_the_resolvability_columns():
    record = rec("Did the defendant file an answer in this case?", ["Who is the plaintiff?", "The person who sues."])
    row = hand_features(record)
    assert len(row) == len(HAND_FEATURES)
    assert row[HAND_FEATURES.index("kind_unsingled")] == 1  # neither "defendant" nor "case" is singled out


def test_pronoun_antecedent_candidates_in_the_last_user_turn():
    query = "How does it help?"
    # two names: "Runtime Chart" and "Throughput Chart"
    two = rec(query, ["Which is better, the Runtime Chart or the Throughput Chart?", "Neither."])
    assert f(two, "pronoun_last_user_candidates_2plus") == 1
    # one unnamed kind phrase: "the query planner"
    one = rec(query, ["what does the query planner do", "It picks a plan."])
    assert f(one, "pronoun_last_user_candidates_1") == 1
    # no pronoun: the buckets stay empty
    assert f(rec("How does the planner help?", ["what does the query planner do"]),
             "pronoun_last_user_candidates_1") == 0


def test_a_demonstrative_subject_is_no_kind_phrase():
    from builder.train.resolve import referring_expressions

    for query in ("Does this mean that my computer is safe?", "Is this intended for professionals?",
                  "that sounds not hard. Which brand is best?"):
        refs = referring_expressions(query)
        assert refs and refs[0].kind == "pronoun" and refs[0].head is None, query
    for query, head in (("Does this plan include domains?", "plan"), ("How wealthy is this county of California?", "county"),
                        ("Is this clinic open?", "clinic")):
        assert referring_expressions(query)[0].head == head, query
