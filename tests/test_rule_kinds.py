"""The kind-reference generators (kind_reference, kind_switch, pronoun_reference) and their text helpers."""

from builder.conversation import Conversation, Passage, Turn
from builder.record import Record
from builder.synthesize import text as tx
from builder.synthesize.base import Rejection
from builder.synthesize.context import TurnContext
from builder.synthesize.rules.kind_reference import KindReference
from builder.synthesize.rules.kind_switch import KindSwitch
from builder.synthesize.rules.pronoun_reference import PronounReference


def _ctx(conv, turn, donors=(), block_names=None):
    index = conv.user_turn_indices()[turn - 1]
    return TurnContext(conv, turn, index, 13, "test", list(donors), block_names=block_names or {})


def _pooled_ctx(conv, turn, pool, block_names):
    """A turn's context whose domain passages are its own conversation's and `pool`'s."""
    from builder.synthesize.corpus import Corpus

    return TurnContext(conv, turn, conv.user_turn_indices()[turn - 1], 13, "test", [], block_names=block_names,
                       corpus=Corpus.from_conversations([conv, pool]))


def _records(outputs):
    return [o for o in outputs if isinstance(o, Record)]


def _kind_query(conv, turn):
    """The referent of a turn's standalone question and its kind query (or the rejection)."""
    from builder.synthesize import kinds as kd

    ctx = _ctx(conv, turn)
    ref = kd.referent_of(ctx, "test")
    return ref, kd.make_kind_query(ctx, ref, "test")


# Two clinics in the second exchange; the last turn asks about one of them by name.
CLINICS = Conversation("va", "govt", [
    Turn("user", "Where can veterans get health care in Boston?", rewrite="Where can veterans get health care in Boston?"),
    Turn("assistant", "Veterans in Boston have several health care options."),
    Turn("user", "Which clinics are nearby?", rewrite="Which VA clinics are near Boston?"),
    Turn("assistant", "The Causeway VA Clinic and the Jamaica Plain VA Clinic are both in the city."),
    Turn("user", "Does the Causeway one offer mental health services?",
         [Passage("p1", "The Causeway VA Clinic offers primary care and mental health services.", "Causeway VA Clinic", True)],
         rewrite="Does the Causeway VA Clinic offer mental health services?"),
])
# One clinic named before the question.
ONE_CLINIC = Conversation("one", "govt", [
    Turn("user", "What is the Causeway VA Clinic?", rewrite="What is the Causeway VA Clinic?"),
    Turn("assistant", "The Causeway VA Clinic is an outpatient clinic of the VA in Boston."),
    Turn("user", "Does it offer mental health services?", rewrite="Does the Causeway VA Clinic offer mental health services?"),
])
DONOR = Conversation("tax", "govt", [
    Turn("user", "When are federal taxes due?"), Turn("assistant", "Usually on April 15."),
    Turn("user", "Can I get an extension?"), Turn("assistant", "Yes, by filing Form 4868."),
    Turn("user", "thanks"),
])


def test_several_candidates_in_the_history_make_a_positive_naming_them():
    out = list(KindReference().generate(_ctx(CLINICS, 3)))
    pos = [r for r in _records(out) if r.needs_clarification]
    many = next(r for r in pos if r.category == "multiple_interpretations")
    assert many.query.endswith("clinic offer mental health services?") and "Causeway" not in many.query
    assert sorted(many.interpretations) == [
        "Does the Causeway VA Clinic offer mental health services?",
        "Does the Jamaica Plain VA Clinic offer mental health services?",
    ]
    assert many.history == [{"role": t.role, "content": t.text} for t in CLINICS.turns[:4]]
    assert many.provenance["history_source"] == {"conversation_id": "va", "turns": 4}
    clarification = many.target["clarification"]
    assert many.clarification_pattern == "open" or ("Causeway VA Clinic" in clarification and "Jamaica Plain VA Clinic" in clarification)


def test_one_candidate_is_the_hard_negative_twin_resolved_by_its_turn():
    out = list(KindReference().generate(_ctx(ONE_CLINIC, 2)))
    neg = next(r for r in _records(out) if not r.needs_clarification)
    assert neg.category == "hard_negative" and "Causeway" not in neg.query
    assert neg.resolution["referent"] == "Causeway VA Clinic"
    assert neg.resolution["turn_index"] in (0, 1) and neg.resolution["resolved_query"] == ONE_CLINIC.turns[2].rewrite
    assert neg.interpretations == [ONE_CLINIC.turns[2].rewrite]


def test_no_candidate_gives_an_open_positive_read_with_the_blocks_names():
    names = {"clinic": ["Causeway VA Clinic", "Jamaica Plain VA Clinic", "Brockton VA Clinic"]}
    out = list(KindReference().generate(_ctx(CLINICS, 3, block_names=names)))
    pairs = {r.pair_id for r in _records(out)}
    opened = [r for r in _records(out) if r.category == "underspecified_entity"]
    # The first exchange names no clinic and no word of 'Causeway VA Clinic': the kind is open there.
    assert opened and all(r.history == [{"role": t.role, "content": t.text} for t in CLINICS.turns[:2]] for r in opened)
    assert "Does the Brockton VA Clinic offer mental health services?" in opened[0].interpretations
    assert len(pairs) == 1, "the same query in every context is one contrastive pair"
    # The block's names are readings, not options the chat offered: the clarification asks openly.
    assert all(r.clarification_pattern == "open" and "Brockton" not in r.target["clarification"] for r in opened)


def test_topic_switch_needs_a_history_without_the_kind():
    names = {"clinic": ["Causeway VA Clinic", "Jamaica Plain VA Clinic"]}
    out = list(KindSwitch(histories=2, empty_share=0.0).generate(_ctx(ONE_CLINIC, 2, [DONOR], names)))
    pos = _records(out)
    assert len(pos) == 1 and pos[0].needs_clarification and pos[0].category == "underspecified_entity"
    assert pos[0].provenance["history_source"]["conversation_id"] == "tax"
    assert pos[0].pair_id == _records(KindReference().generate(_ctx(ONE_CLINIC, 2)))[0].pair_id
    # Without a second name of the kind there is nothing concrete to read the question with.
    alone = list(KindSwitch().generate(_ctx(ONE_CLINIC, 2, [DONOR], {"clinic": ["Causeway VA Clinic"]})))
    assert not _records(alone) and any("fewer than two names" in r.reason for r in alone if isinstance(r, Rejection))


PLANS = Conversation("plans", "ibmcloud", [
    Turn("user", "What is IBM Cloudant?", rewrite="What is IBM Cloudant?"),
    Turn("assistant", "IBM Cloudant is a managed database service."),
    Turn("user", "What is the difference between the Lite plan and the Standard plan?",
         rewrite="What is the difference between the Lite plan and the Standard plan?"),
    Turn("assistant", "The Lite plan is free; the Standard plan has provisioned throughput."),
    Turn("user", "Should I stick to the Lite plan for now?", rewrite="Should I stick to the Lite plan for now?"),
    Turn("assistant", "The Lite plan is fine for exploring."),
    Turn("user", "How much storage does the Lite plan give?", rewrite="How much storage does the Lite plan give?"),
])


def test_pronoun_after_a_turn_naming_two_plans_is_unresolved_and_after_one_is_resolved():
    out = list(PronounReference().generate(_ctx(PLANS, 3)))
    recs = _records(out)
    pos = next(r for r in recs if r.needs_clarification)
    assert pos.query == "Should I stick to it for now?" and pos.category == "unresolved_reference"
    assert sorted(pos.interpretations) == ["Should I stick to the Lite plan for now?", "Should I stick to the Standard plan for now?"]
    out = list(PronounReference().generate(_ctx(PLANS, 4)))
    neg = next(r for r in _records(out) if not r.needs_clarification)
    assert neg.query == "How much storage does it give?" and neg.history[-2]["content"].startswith("Should I stick")


# Two plans compared, then a turn about something else: nothing recent singles one plan out.
PLANS_THEN_TOPIC = Conversation("plans-topic", "ibmcloud", [
    Turn("user", "What is the difference between the Lite plan and the Standard plan?",
         rewrite="What is the difference between the Lite plan and the Standard plan?"),
    Turn("assistant", "The Lite plan is free; the Standard plan has provisioned throughput."),
    Turn("user", "What is provisioned throughput?", rewrite="What is provisioned throughput?"),
    Turn("assistant", "Throughput you reserve and pay for by the hour."),
    Turn("user", "How much storage does the Lite plan give?", rewrite="How much storage does the Lite plan give?"),
])
# The same, but the turn in between names one plan: recency singles it out.
PLANS_THEN_ONE = Conversation("plans-one", "ibmcloud", [
    *PLANS_THEN_TOPIC.turns[:2],
    Turn("user", "Is the Lite plan free forever?", rewrite="Is the Lite plan free forever?"),
    Turn("assistant", "Yes, but it is capped at 1 GB."),
    PLANS_THEN_TOPIC.turns[4],
])


def test_pronoun_after_two_plans_then_another_topic_is_unresolved_and_after_one_plan_is_not_made():
    pos = [r for r in _records(PronounReference().generate(_ctx(PLANS_THEN_TOPIC, 3))) if r.needs_clarification]
    assert [r.query for r in pos] == ["How much storage does it give?"]
    assert sorted(pos[0].interpretations) == ["How much storage does the Lite plan give?",
                                              "How much storage does the Standard plan give?"]
    assert pos[0].history[-1]["content"].startswith("Throughput you reserve")
    # After 'Is the Lite plan free forever?' only the shorter prefix (the comparison itself) leaves 'it' open.
    pos = [r for r in _records(PronounReference().generate(_ctx(PLANS_THEN_ONE, 3))) if r.needs_clarification]
    assert [len(r.history) for r in pos] == [2]


def test_no_pronoun_beside_the_kind_noun_it_stands_for():
    conv = Conversation("spacecraft", "clapnq", [
        Turn("user", "Were Juno and Galileo able to study Jupiter's cyclones?",
             rewrite="Were Juno and Galileo able to study Jupiter's cyclones?"),
        Turn("assistant", "Yes, both the Juno spacecraft and the Galileo spacecraft imaged storms."),
        Turn("user", "What were the discoveries of the spacecraft Juno?", rewrite="What were the discoveries of the spacecraft Juno?"),
    ])
    out = list(PronounReference().generate(_ctx(conv, 2)))
    assert [o.reason for o in out] == ["'Juno' ends a noun phrase; a pronoun there is ungrammatical"]
    lang = Conversation("lang", "ibmcloud", [
        Turn("user", "Which languages do dialog skills support?", rewrite="Which languages do dialog skills support?"),
        Turn("assistant", "English, French and German, among others."),
        Turn("user", "Can I build a skill in a language other than English?",
             rewrite="Can I build a skill in a language other than English?"),
    ])
    out = list(PronounReference().generate(_ctx(lang, 2)))
    assert [o.reason for o in out] == ["the question names the kind 'language' beside its pronoun"]


def test_no_it_for_a_person():
    # 'How was it introduced in Friends?' for Jennifer Aniston, with two other actresses named before it
    conv = Conversation("friends", "clapnq", [
        Turn("user", "Who starred in Friends?", rewrite="Who starred in Friends?"),
        Turn("assistant", "Jennifer Aniston, Courteney Cox and Lisa Kudrow starred in it."),
        Turn("user", "How was Jennifer Aniston introduced in Friends?", rewrite="How was Jennifer Aniston introduced in Friends?"),
    ])
    out = list(PronounReference().generate(_ctx(conv, 2)))
    assert not _records(out)
    assert "'Jennifer Aniston' is a person (actress); 'it' cannot stand for them" in [o.reason for o in out]


def test_a_name_heading_a_noun_phrase_is_no_place_for_a_pronoun():
    def ends(query, name):
        i = query.index(name)
        return tx.ends_noun_phrase(query, tx.Entity(name, None, i, i + len(name)))

    assert ends("What is the most popular Hamlet in China?", "Hamlet")
    assert ends("What did the spacecraft Juno discover?", "Juno")
    assert not ends("What is the difference between the Lite plan and Juno?", "Juno")
    assert not ends("Does the Causeway VA Clinic offer care?", "Causeway VA Clinic")
    assert not ends("Is NASA's Juno still active?", "Juno") and not ends("How old is Juno?", "Juno")
    assert ends("which FAANG pays the most?", "FAANG")  # 'which it pays the most?'


def test_no_pronoun_twin_when_the_answer_names_another_of_the_kind():
    conv = Conversation("plans-answer", "ibmcloud", [
        Turn("user", "Should I pick the Lite plan?", rewrite="Should I pick the Lite plan?"),
        Turn("assistant", "The Lite plan is free, but the Standard plan scales."),
        Turn("user", "How much storage does the Lite plan give?", rewrite="How much storage does the Lite plan give?"),
    ])
    out = _records(PronounReference().generate(_ctx(conv, 2)))
    assert not [r for r in out if not r.needs_clarification]  # 'it' after that answer is no settled twin
    assert [r for r in out if r.needs_clarification] == []  # and the user's turn singles out the Lite plan


def test_kind_lexicon_and_descriptions_give_kinds():
    assert tx.kind_of("Lake Tahoe") == "lake"
    assert tx.kind_of("NASA") == "agency"
    assert tx.kind_of("Scrubs", ["Scrubs is an American television sitcom."]) == "sitcom"
    assert tx.kind_of("Friends") == "series"  # the kind lexicon
    assert tx.kind_in_text("France", ["Paris is the capital of France."]) is None
    assert tx.kind_in_text("Maine", ["the state of Maine"]) == "state"


def test_aliases_are_one_reading_and_things_named_after_others_are_not():
    assert tx.same_thing("COVID-19", "Covid")
    assert tx.same_thing("USA", "United States") and tx.same_thing("flu", "influenza")
    assert not tx.same_thing("USA", "Canada")
    assert tx.same_thing("IRA", "IRA account")
    assert tx.same_thing("IBM Cloud Kubernetes Service", "Cloud Kubernetes Service")
    assert not tx.same_thing("Berlin", "Berlin Wall")
    assert not tx.same_thing("Mars", "Marshall")
    assert not tx.same_thing("Lite plan", "Standard plan")
    # An acronym of the other name's capitalised words, the rest agreeing.
    assert tx.same_thing("IBM Cloud VPC", "IBM Cloud Virtual Private Cloud") and tx.same_thing("VPC", "Virtual Private Cloud")
    assert tx.same_thing("Cloud Internet Services", "CIS")
    assert not tx.same_thing("IBM Cloud VPC", "Google Cloud VPC") and not tx.same_thing("NFL", "NBA")


def test_a_bare_kind_phrase_is_found_unless_named_or_restricted():
    assert tx.unresolved_kind_phrase("Does the program make any efforts to conserve the environment?") == "the program"
    assert tx.unresolved_kind_phrase("Is this planet far from the Sun?") == "this planet"
    assert tx.unresolved_kind_phrase("What is the capital of France?") is None
    assert tx.unresolved_kind_phrase("What are the benefits of the Lite plan?") is None
    assert tx.unresolved_kind_phrase("What is the difference between stocks and bonds?") is None
    # A demonstrative points at something before it, whatever the noun; 'which one' too.
    assert tx.unresolved_kind_phrase("What does 'use' refer to in this context?") == "this context"
    assert tx.unresolved_kind_phrase("Which one offers more protection against vulnerabilities?") == "Which one"
    assert tx.unresolved_kind_phrase("How do I do this in the console?") is None
    # 'Who was the last Emperor?' with nothing before it (read 21): a word like 'last' picks none out; a title stays
    assert tx.unresolved_kind_phrase("Who was the last Emperor?") == "the last Emperor"
    assert tx.unresolved_kind_phrase("What did the Senate decide?") is None


def test_standalone_clear_rejects_a_rewrite_that_leaves_a_kind_phrase_open():
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    conv = Conversation("prog", "govt", [Turn("user", "Does the program conserve the environment?",
                                              rewrite="Does the program conserve the environment?")])
    out = list(StandaloneClear().generate(_ctx(conv, 1)))
    assert not _records(out) and "leaves 'the program' open" in out[0].reason



def test_standalone_clear_rejects_a_rewrite_that_says_one_word_or_one_side_of_a_comparison():
    # read 34: 'What is the value?' (ce-58ba8890638894d9), 'What is the difference with the dialog node?' (ce-2d79b8439592023d)
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    for query, reason in (("What is the value?", "points at one common word"), ("Which type can I create?", "points at"),
                          ("What is the difference with the dialog node?", "one side only")):
        conv = Conversation("one", "ibmcloud", [Turn("user", query, rewrite=query)])
        out = list(StandaloneClear().generate(_ctx(conv, 1)))
        assert not _records(out) and reason in out[0].reason, out
    for query in ("What is the value of IBM?", "What is the difference between a dialog node and an action?",
                  "What is cryptoshredding?"):
        conv = Conversation("two", "ibmcloud", [Turn("user", query, rewrite=query)])
        assert _records(StandaloneClear().generate(_ctx(conv, 1))), query


def test_standalone_clear_rejects_a_keyword_fragment_that_names_nothing():
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    for query in ("process for contractor", "ok bye"):
        conv = Conversation("kw", "govt", [Turn("user", query, rewrite=query)])
        out = list(StandaloneClear().generate(_ctx(conv, 1)))
        assert not _records(out) and "keyword fragment that names nothing" in out[0].reason
    named = Conversation("kw", "ibmcloud", [Turn("user", "IBM Cloudant legacy", rewrite="IBM Cloudant legacy")])
    assert _records(StandaloneClear().generate(_ctx(named, 1)))  # a keyword query naming its topic stays clear


def test_standalone_clear_asks_only_a_question_that_names_its_topic_after_another_talk():
    # 'How can I get enforcement support?' after a compost talk (read 21, ce-3026d93633afda36)
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    for query, switched in (("How can I get enforcement support?", False), ("How do I get child support in Ohio?", True),
                            ("Retention time for conversations?", False)):  # read 26, ce-82e8844795f3c7f7
        conv = Conversation("cs", "govt", [Turn("user", query, rewrite=query)])
        records = _records(StandaloneClear(switch_share=1.0).generate(_ctx(conv, 1, [DONOR])))
        assert records and all(("history_source" in r.provenance) == switched for r in records)

def test_a_kind_with_a_default_referent_gives_no_open_positive():
    earth = Conversation("earth", "clapnq", [
        Turn("user", "How old do you have to be to drive?"), Turn("assistant", "16 in most states."),
        Turn("user", "What is the average temperature on Mars?", rewrite="What is the average temperature on Mars?"),
    ])
    names = {"planet": ["Mars", "Jupiter", "Earth"]}
    for generator in (KindReference(), KindSwitch(empty_share=1.0)):
        out = list(generator.generate(_ctx(earth, 2, [DONOR], names)))
        assert not [r for r in _records(out) if r.category == "underspecified_entity"]
        assert any("reads as Earth" in o.reason for o in out if isinstance(o, Rejection))


def test_a_history_saying_a_known_name_of_the_kind_leaves_no_open_positive():
    # 'new york' in lower case is no recognised name, but it says a state: 'this state' after it is no open question.
    ask = Turn("user", "What are the laws for pedestrians in Texas?", rewrite="What are the laws for pedestrians in Texas?")
    moved = Conversation("moved", "govt", [
        Turn("user", "i just moved to new york and need a license."),
        Turn("assistant", "Welcome! You can apply at the DMV."), ask])
    names = {"state": ["Texas", "Ohio", "Utah"]}
    for generator in (KindReference(), KindSwitch(empty_share=0.0)):
        out = list(generator.generate(_ctx(moved, 2, [moved], names)))
        assert not [r for r in _records(out) if r.category == "underspecified_entity"], generator.name
    # The same question after a talk that says no state is open.
    taxes = Conversation("taxes", "govt", [*DONOR.turns[:2], ask])
    out = list(KindReference().generate(_ctx(taxes, 2, block_names=names)))
    assert [r.category for r in _records(out) if r.needs_clarification] == ["underspecified_entity"]


def test_the_talks_topic_singles_out_one_of_the_named_things():
    from builder.synthesize import kinds as kd

    jupiter = [
        {"role": "user", "content": "Does Jupiter have cyclones?"},
        {"role": "assistant", "content": "Yes, far larger than any storm on Earth."},
        {"role": "user", "content": "How big is Jupiter's Great Red Spot?"},
        {"role": "assistant", "content": "About 1.3 times the width of Earth."},
    ]
    assert kd.topic_singles_out(jupiter, ["Jupiter", "Earth"])
    # The user asking about both leaves them rivals; so does a talk that asked about Jupiter only once.
    assert not kd.topic_singles_out(jupiter + [{"role": "user", "content": "And Earth's?"}], ["Jupiter", "Earth"])
    assert not kd.topic_singles_out(jupiter[:2], ["Jupiter", "Earth"])


def test_generic_and_determiner_words_name_nothing():
    text = "In the meaning of any Act of Congress, the Defense of Marriage Act applies. Another account option is the Lite account."
    assert tx.names_in(text) == ["Defense of Marriage Act", "Lite account"]


def test_a_name_before_type_or_kind_modifies_it():
    s = "Is the Lite plan available with the Lite account type in IBM Cloud?"
    assert [tx.modifies_noun(s, e) for e in tx.entities(s)] == [False, True, False]


def test_swaps_that_leave_no_english_are_found():
    def broken(text, name, replacement):
        i = text.index(name)
        e = tx.Entity(name, None, i, i + len(name))
        return tx.broken_replacement(text, e, tx.replace_entity(text, e, replacement))

    assert broken("Can you clarify the IBM Cloud® Container Registry?", "IBM Cloud", "the cloud") == \
        "'IBM Cloud' is part of a trademarked name"
    assert broken("What is the field of Acme, Inc.?", "Acme", "them") == "'Acme' is part of a company name"
    assert broken("What is the field of Acme Labs?", "Acme Labs", "them") is None
    # A demonstrative before the name keeps its place: 'this mission', not 'this the mission'.
    text = "Can you give a summary of this Deep Impact mission?"
    e = tx.Entity("Deep Impact mission", "mission", text.index("Deep"), text.index("?"))
    assert tx.replace_entity(text, e, "the mission") == "Can you give a summary of this mission?"
    text = "Could you tell me more about President Roosevelt's involvement?"
    e = tx.Entity("President Roosevelt's", "president", text.index("President"), text.index(" involvement"))
    assert tx.replace_entity(text, e, "the president") == "Could you tell me more about the president's involvement?"
    assert tx.pronoun_for("Is NASA's budget growing?", tx.Entity("NASA's", None, 3, 9)) == "its"
    s = "What are the steps to obtain Watson Assistant v4?"
    assert tx.modifies_noun(s, tx.Entity("Watson Assistant", None, s.index("Watson"), s.index(" v4")))


def test_existential_there_is_no_reference():
    assert tx.has_anaphor("Is there a minimum amount required?") is None
    assert tx.has_anaphor("There are fees, right?") is None
    assert tx.has_anaphor("Is tourism growing there?") == "there"
    assert tx.has_anaphor("How deep is it?") == "it"


def test_a_list_member_is_not_swapped_for_a_kind_phrase():
    conv = Conversation("m", "fiqa", [
        Turn("user", "Hi", rewrite="Hi"), Turn("assistant", "Hello."),
        Turn("user", "What are the differences between the Nasdaq and the NYSE?",
             rewrite="What are the differences between the Nasdaq and the NYSE?"),
    ])
    out = list(KindReference().generate(_ctx(conv, 2)))
    assert not _records(out)
    assert any("one of a list" in r.reason for r in out if isinstance(r, Rejection))


def test_a_verb_after_a_plural_name_is_no_kind_noun():
    # 'Where do that play, regardless of location, this week?' read with Hamlet (the comma is no list any more).
    conv = Conversation("nfl", "clapnq", [
        Turn("user", "Hi", rewrite="Hi"), Turn("assistant", "Hello."),
        Turn("user", "Where do they play this week?",
             rewrite="Where do the Arizona Cardinals play, regardless of location, this week?"),
    ])
    out = list(KindReference().generate(_ctx(conv, 2)))
    assert not _records(out)
    assert any("a verb, not a kind noun" in r.reason for r in out if isinstance(r, Rejection))


def test_a_name_left_in_the_question_that_its_passages_are_about_singles_out_the_referent():
    song = Conversation("song", "clapnq", [
        Turn("user", "Hi", rewrite="Hi"), Turn("assistant", "Hello."),
        Turn("user", "When was Grenade by Bruno Mars released?",
             [Passage("g1", "Grenade is a song by Bruno Mars, released in 2010.", "Grenade (song)", True)],
             rewrite="When was Grenade by Bruno Mars released?"),
    ])
    out = list(KindReference().generate(_ctx(song, 2, block_names={"singer": ["Adele", "Bruno Mars"]})))
    assert not _records(out)
    assert any("names 'Grenade', what its passages are about" in o.reason for o in out if isinstance(o, Rejection))


def test_a_name_left_in_the_question_that_the_domain_names_with_the_referent_singles_it_out():
    from builder.synthesize.corpus import Corpus

    ask = Turn("user", "Did Juno find cyclones on Jupiter?", rewrite="Did Juno find cyclones on Jupiter?")
    conv = Conversation("juno", "clapnq", [Turn("user", "Hi", rewrite="Hi"), Turn("assistant", "Hello."), ask])
    pool = Conversation("pool", "clapnq", [Turn("user", "Tell me about probes.", [
        Passage("j1", "Juno is a NASA probe orbiting Jupiter.", "Juno (spacecraft)"),
        Passage("j2", "Juno measured the gravity field of Jupiter.", "Juno gravity science"),
        Passage("s1", "Cassini orbited Saturn for thirteen years.", "Cassini"),
    ])])
    names = {"planet": ["Jupiter", "Saturn", "Mars"]}
    ctx = TurnContext(conv, 2, conv.user_turn_indices()[1], 13, "test", [], block_names=names,
                      corpus=Corpus.from_conversations([conv, pool]))
    out = list(KindReference(retrieved_share=1.0).generate(ctx))
    assert not _records(out)
    assert any("'Juno', which the domain's passages name with 'Jupiter'" in o.reason for o in out if isinstance(o, Rejection))
    # Without the pool nothing says so (the open question then fails for another reason: 'the planet' is Earth).
    alone = list(KindReference().generate(_ctx(conv, 2, block_names=names)))
    assert not any("domain's passages" in o.reason for o in alone if isinstance(o, Rejection))


def test_lexicon_names_read_an_open_kind_only_where_the_domain_names_them():
    from builder.synthesize.corpus import Corpus

    pool = Conversation("pool", "ibmcloud", [Turn("user", "Which plans are there?", [
        Passage("p1", "The Lite plan is free; the Standard plan is billed hourly.", "Pricing plans"),
    ])])
    ibm = Conversation("ibm", "ibmcloud", ONE_CLINIC.turns)
    ctx = TurnContext(ibm, 2, ibm.user_turn_indices()[1], 13, "test", [], corpus=Corpus.from_conversations([pool]))
    from builder.synthesize import kinds as kd
    # The lexicon's plans are fiqa's and govt's (401(k), Medi-Cal): no reading of 'the plan' in IBM Cloud's docs.
    assert kd.pool_of_kind(ctx, "plan") == []
    assert kd.pool_of_kind(_ctx(ibm, 2), "plan")[:2] == ["401(k)", "403(b)"]  # no pool to ask: kept
    assert ctx.corpus.names("ibmcloud", "Lite plan") and not ctx.corpus.names("ibmcloud", "401(k)")


def test_a_lowercase_modifier_keeps_its_name():
    s = "What are the advantages of Immutable data Immutable Object Storage?"
    e = tx.Entity("Immutable Object Storage", "storage", s.index("Immutable Object"), s.index("?"))
    assert tx.lowercase_modifier(s, e)
    s = "Does the Causeway VA Clinic offer care?"
    assert not tx.lowercase_modifier(s, tx.Entity("Causeway VA Clinic", "clinic", 9, 27))
    s = "How do I use Key Protect?"
    assert not tx.lowercase_modifier(s, tx.Entity("Key Protect", None, 13, 24))


def test_a_participle_after_a_verb_keeps_its_noun_and_a_headline_is_no_name():
    # 'What is the greatest risk associated with buying discounted the stock?' (ce-3c5b7ad0e3134ae2) was read as
    # 'company stock' or 'Cons of Buying Discounted Company Stock', the user's headline of the first turn.
    s = "What is the greatest risk associated with buying discounted company stock?"
    assert tx.lowercase_modifier(s, tx.Entity("company stock", "stock", s.index("company"), s.index("?")))
    s = "Have you contracted COVID-19?"  # a participle after an auxiliary is the verb
    assert not tx.lowercase_modifier(s, tx.Entity("COVID-19", "disease", s.index("COVID"), s.index("?")))
    assert not tx.is_name("Cons of Buying Discounted Company Stock", "stock")
    assert tx.is_name("Roth IRA", "account") and tx.is_name("Apple stock", "stock")


def test_similar_and_others_point_at_something_said_before():
    assert tx.unresolved_kind_phrase("Have there been others who used carbon dioxide for similar purposes?") == "Have there been others"
    assert tx.unresolved_kind_phrase("Are there similar programs in Texas?") == "similar programs"
    assert tx.unresolved_kind_phrase("Are there other options for students?") is None


def test_retrieved_share_asks_the_same_question_with_passages_bm25_finds_for_its_words():
    from builder.synthesize.corpus import Corpus
    from builder.validate import validate

    pool = Conversation("pool", "govt", [Turn("user", "Which clinics help veterans?", [
        Passage("c1", "The Brockton VA Clinic offers mental health services to veterans.", "Brockton VA Clinic"),
        Passage("c2", "The Lowell VA Clinic offers primary care.", "Lowell VA Clinic"),
    ])])
    corpus = Corpus.from_conversations([CLINICS, ONE_CLINIC, pool])
    ctx = TurnContext(CLINICS, 3, CLINICS.user_turn_indices()[2], 13, "test", [], corpus=corpus)
    plain = _records(KindReference().generate(ctx))
    both = _records(KindReference(retrieved_share=1.0).generate(ctx))
    pre = [r for r in both if r.setting == "pre_retrieval"]
    post = [r for r in both if r.setting == "post_retrieval"]
    assert [r.to_dict() for r in pre] == [r.to_dict() for r in plain]  # the share only adds records
    assert post and len(post) == len(pre)
    for copy, original in zip(post, pre):
        # Same words, same chat, same label; passages found for the question's own words, never the turn's own.
        assert (copy.query, copy.history, copy.label, copy.category) == (original.query, original.history, original.label, original.category)
        ids = [d["id"] for d in copy.documents]
        assert ids and "p1" not in ids and set(ids) <= {"c1", "c2"}
        assert copy.provenance["retrieval"]["query"] == copy.query and len(ids) <= copy.provenance["retrieval"]["k"]
        assert copy.id != original.id and copy.pair_id != original.pair_id
    # A pair stays a pair in the new setting.
    assert len({r.pair_id for r in post}) == len({r.pair_id for r in pre})
    valid, quarantined = validate([r.to_dict() for r in both])
    assert quarantined == [] and len(valid) == len(both)
    assert KindReference(retrieved_share=1.0).needs_corpus and not KindReference().needs_corpus


def test_kind_switch_asks_its_fresh_chat_question_over_retrieved_passages_too():
    from builder.synthesize.corpus import Corpus

    pool = Conversation("pool", "govt", [Turn("user", "Which clinics help veterans?", [
        Passage("c1", "The Brockton VA Clinic offers mental health services to veterans.", "Brockton VA Clinic"),
        Passage("c2", "The Lowell VA Clinic offers primary care.", "Lowell VA Clinic"),
    ])])
    names = {"clinic": ["Causeway VA Clinic", "Jamaica Plain VA Clinic"]}
    ctx = TurnContext(ONE_CLINIC, 2, ONE_CLINIC.user_turn_indices()[1], 13, "test", [DONOR], block_names=names,
                      corpus=Corpus.from_conversations([ONE_CLINIC, pool]))
    plain = _records(KindSwitch(histories=1, empty_share=1.0).generate(ctx))
    both = _records(KindSwitch(histories=1, empty_share=1.0, fresh_retrieved_share=1.0).generate(ctx))
    assert [r.to_dict() for r in both if r.setting == "pre_retrieval"] == [r.to_dict() for r in plain]
    post = [r for r in both if r.setting == "post_retrieval"]
    fresh = [r for r in plain if not r.history]
    assert len(fresh) == 1 and len(post) == 1  # only the fresh chat: the stitched switches stay sized apart
    assert (post[0].query, post[0].history, post[0].label) == (fresh[0].query, [], fresh[0].label)
    assert {d["id"] for d in post[0].documents} <= {"c1", "c2"}
    assert KindSwitch(fresh_retrieved_share=0.5).needs_corpus and not KindSwitch().needs_corpus
    # switch_retrieved_share: the switch after a block-mate's history is also asked over retrieved passages
    switched = _records(KindSwitch(histories=1, empty_share=0.0, switch_retrieved_share=1.0).generate(ctx))
    [stitched] = [r for r in plain if r.history]
    [copy] = [r for r in switched if r.setting == "post_retrieval"]
    assert (copy.query, copy.history, copy.label) == (stitched.query, stitched.history, stitched.label)
    assert copy.documents and {d["id"] for d in copy.documents} <= {"c1", "c2"}
    assert KindSwitch(switch_retrieved_share=0.5).needs_corpus


def test_layer_kinds_make_no_kind_phrase_and_short_forms_merge_past_the_kind_noun():
    from builder.synthesize import kinds as kd

    cloud = Conversation("cloud", "ibmcloud", [
        Turn("user", "What is IBM Cloud VPC?"), Turn("assistant", "IBM Cloud VPC is a virtual network in IBM Cloud."),
        Turn("user", "What does IBM Cloud offer?", rewrite="What does IBM Cloud offer?"),
    ])
    out = list(KindReference().generate(_ctx(cloud, 2)))
    assert not _records(out) and any("layer of one product family" in o.reason for o in out if isinstance(o, Rejection))
    assert kd.short_forms_merged(["Clipper mission", "Europa Clipper"], "mission") == ["Europa Clipper"]
    assert kd.short_forms_merged(["Lite plan", "Standard plan"], "plan") == ["Lite plan", "Standard plan"]
    # A feature named after its product is that product, less its maker's name; other products stay rivals.
    assert kd.short_forms_merged(["IBM Cloud Object Storage", "Immutable Object Storage"], "storage") == ["Immutable Object Storage"]
    assert kd.short_forms_merged(["IBM Cloud", "IBM Cloud VPC"], "cloud") == ["IBM Cloud VPC"]
    assert len(kd.short_forms_merged(["IBM Cloud Kubernetes Service", "Red Hat OpenShift on IBM Cloud"], "service")) == 2
    assert tx.without_brand("IBM Cloud Object Storage") == "Object Storage" and tx.without_brand("IBM") == "IBM"



def test_a_name_read_as_its_kind_says_the_kind():
    # 'When was Rome founded?' asks about the city; read as an empire it is the Roman Empire.
    assert tx.kind_named("Rome", "empire") == "Roman Empire"
    assert tx.kind_named("Rome", "city") == "Rome"
    assert tx.kind_named("Byzantine Empire", "empire") == "Byzantine Empire"


def test_a_kind_is_read_from_a_common_noun_not_from_the_next_name():
    assert tx.kind_of("Ming", ["Towards the end of the Ming, the Great Wall helped defend the empire."]) is None
    assert tx.kind_of("Juno", ["Juno, the NASA mission to Jupiter, launched in 2011."]) == "mission"
    assert tx.kind_named("Ming", "wall", "The Ming wall was rebuilt in brick.") == "Ming wall"


def test_a_product_less_its_makers_name_is_spelled_by_its_acronym():
    assert tx.same_thing("IBM Cloud VPC", "Virtual Private Cloud")
    assert not tx.same_thing("IBM Cloud", "Google Cloud")
    assert not tx.same_thing("IBM Cloud VPC", "Virtual Private Network")


def test_topic_switch_history_never_says_the_kind_word():
    # The donor names no clinic, but says 'clinic': 'this clinic' may point back there, so it is no topic switch.
    said = Conversation("said", "govt", [
        Turn("user", "When are federal taxes due?"), Turn("assistant", "Usually on April 15; a free tax clinic can help."),
        Turn("user", "Can I get an extension?"), Turn("assistant", "Yes, by filing Form 4868."),
        Turn("user", "thanks"),
    ])
    names = {"clinic": ["Causeway VA Clinic", "Jamaica Plain VA Clinic"]}
    out = list(KindSwitch(histories=2, empty_share=0.0).generate(_ctx(ONE_CLINIC, 2, [said], names)))
    assert not _records(out)
    assert any("no block-mate history" in r.reason for r in out if isinstance(r, Rejection))


def test_a_card_is_no_reading_of_an_account():
    from builder.synthesize import text as tx

    # 'How do I choose a credit card?' read as 'How do I choose an IRA?' changes the question (read 15, 16)
    assert "card" not in tx.kin_of("account") and "account" not in tx.kin_of("card")
    assert "plan" in tx.kin_of("account")


def test_no_kind_phrase_before_the_plural_noun_a_name_modifies():
    # 'Can I use that service clusters only in the USA?' (read 17) breaks the question
    conv = Conversation("k", "ibmcloud", [
        Turn("user", "Hi", rewrite="Hi"), Turn("assistant", "Hello."),
        Turn("user", "Can I use IBM Cloud Kubernetes Service clusters only in the USA?",
             rewrite="Can I use IBM Cloud Kubernetes Service clusters only in the USA?"),
    ])
    out = list(KindReference().generate(_ctx(conv, 2)))
    assert not [r for r in _records(out) if "service clusters" in r.query]
    assert any("modifies the plural noun 'clusters'" in r.reason for r in out if isinstance(r, Rejection))
    assert any(r.query.endswith("clusters only in that country?") for r in _records(out))  # the other name still works


def test_a_talk_that_names_what_ties_to_the_referent_resolves_the_kind_phrase():
    # 'What is the number of teams in the league?' after 'Do the Arizona Cardinals play outside the US?' is the NFL
    # (read 21, ce-c120b12b83767558): no open positive; the hard-negative twin, resolved by that turn
    conv = Conversation("cards", "clapnq", [
        Turn("user", "Do the Arizona Cardinals play outside the US?", rewrite="Do the Arizona Cardinals play outside the US?"),
        Turn("assistant", "Yes, they played in London in 2017."),
        Turn("user", "How many teams are in the NFL?", rewrite="How many teams are in the NFL?"),
    ])
    pool = Conversation("pool", "clapnq", [Turn("user", "Tell me about football.", [
        Passage("n1", "The Arizona Cardinals are a team of the NFL.", "Arizona Cardinals"),
        Passage("n2", "The NFL's Arizona Cardinals play in Glendale.", "NFL"),
        Passage("n3", "The NBA has 30 teams.", "NBA"),
    ])])
    names = {"league": ["NFL", "NBA", "MLB"]}
    plain = _records(KindReference().generate(_ctx(conv, 2, block_names=names)))
    assert [r.needs_clarification for r in plain] == [True]  # without the domain's passages: open
    out = _records(KindReference().generate(_pooled_ctx(conv, 2, pool, names)))
    assert [r.needs_clarification for r in out] == [False]
    assert out[0].resolution["turn_index"] == 0 and out[0].resolution["referent"] == "NFL"


def test_a_name_that_is_the_subject_of_a_what_clause_keeps_the_kind_phrases_article():
    # 'Could you explain what Spark is?' became 'Could you explain what engine is?' once Spark had a kind
    from builder.synthesize import kinds as kd

    conv = Conversation("spark", "ibmcloud", [
        Turn("user", "What runs my analytics jobs?", rewrite="What runs my analytics jobs?"),
        Turn("assistant", "Analytics Engine runs them."),
        Turn("user", "Could you explain what Spark is?", rewrite="Could you explain what Spark is?"),
    ])
    ctx = _ctx(conv, 2)
    ref = kd.referent_of(ctx, "test")
    kq = kd.make_kind_query(ctx, ref, "test")
    assert kq.query in ("Could you explain what the engine is?", "Could you explain what this engine is?",
                        "Could you explain what that engine is?")
    assert kq.reading("Apache Spark") == "Could you explain what Apache Spark is?"


def test_a_yes_that_opens_an_answer_is_no_candidate():
    # 'What is the speed of it?' was read 'What is the speed of Yes?' after 'Yes, the Europa Clipper spacecraft ...'
    found = [e.text for e in tx.entities("Yes, the Europa Clipper spacecraft is fast. No, Juno is slower.")]
    assert found == ["Europa Clipper spacecraft", "Juno"]


# Jupiter and Earth both in the last exchange; Juno and Galileo, which the question keeps, go with Jupiter only.
PROBES = Conversation("probes", "clapnq", [
    Turn("user", "Which spacecraft explored Jupiter?", rewrite="Which spacecraft explored Jupiter?"),
    Turn("assistant", "Juno and Galileo both studied Jupiter. Juno reached Jupiter in 2016. Galileo orbited Jupiter until 2003."),
    Turn("user", "Are the cyclones on Jupiter like the ones on Earth?",
         rewrite="Are the cyclones on Jupiter like the ones on Earth?"),
    Turn("assistant", "The cyclones on Jupiter are far larger than the ones on Earth."),
    Turn("user", "Did Juno and Galileo find cyclones on Jupiter?", rewrite="Did Juno and Galileo find cyclones on Jupiter?"),
    Turn("assistant", "Yes."),
    Turn("user", "Are there cyclones on Jupiter all year?", rewrite="Are there cyclones on Jupiter all year?"),
])


def test_no_pronoun_positive_when_the_names_the_question_keeps_go_with_one_candidate():
    # 'Did Juno and Galileo find cyclones on it?' after Jupiter and Earth: the probes say Jupiter (read 23).
    out = list(PronounReference().generate(_ctx(PROBES, 3)))
    assert not [r for r in _records(out) if r.needs_clarification]
    assert "the question's own names go with 'Jupiter' in the history" in [o.reason for o in out if isinstance(o, Rejection)]
    # Without such names the same history leaves 'it' open between the two planets.
    pos = [r for r in _records(PronounReference(later=True).generate(_ctx(PROBES, 4))) if r.needs_clarification]
    assert pos and sorted(pos[0].interpretations) == ["Are there cyclones on Earth all year?",
                                                      "Are there cyclones on Jupiter all year?"]


def test_a_possessive_name_keeps_the_noun_it_owns_out_of_the_name():
    # "Jupiter's rings" was taken for one name of no kind, so no kind phrase was made of Jupiter.
    assert [e.text for e in tx.entities("Can I see Jupiter's rings from the city?")] == ["Jupiter's"]
    assert [e.text for e in tx.entities("How do I check my FICO score?")] == ["FICO score"]


def test_a_candidate_the_user_names_once_and_the_answers_keep_to_is_the_talks_topic():
    from builder.synthesize import kinds as kd
    # Read 24, ce-c7792ee90b487118: a talk about Jupiter whose answer compares a moon with Mars in passing.
    history = [
        {"role": "user", "content": "What did Juno discover on its way to Jupiter?"},
        {"role": "assistant", "content": "Juno found that Jupiter has a dilute core. Jupiter's storms reach deep. "
                                         "One of Jupiter's moons is larger than Mars."},
    ]
    assert kd.topic_singles_out(history, ["Jupiter", "Mars"])
    balanced = [history[0], {"role": "assistant", "content": "Jupiter and Mars both have storms. Mars has dust "
                                                             "storms. Mars is small."}]
    assert not kd.topic_singles_out(balanced, ["Jupiter", "Mars"])


def test_the_questions_own_words_tie_it_to_the_candidate_the_history_says_them_with():
    from builder.synthesize import kinds as kd
    query = "What kind of support is available for this account type?"
    history = [
        {"role": "user", "content": "What account types are there?"},
        {"role": "assistant", "content": "Community support is available for the Lite account. Forum support is "
                                         "available to Lite account users. The Lite account's support is available "
                                         "all day. The Enterprise account has higher limits."},
    ]
    assert kd.tied_by_query_names(query, history, ["Lite account", "Enterprise account"]) == "Lite account"
    both = [history[0], {"role": "assistant", "content": "Community support is available for the Lite account. "
                                                         "Phone support is available for the Enterprise account."}]
    assert kd.tied_by_query_names(query, both, ["Lite account", "Enterprise account"]) is None
    # One sentence says three of the question's words, of one candidate only: the claim was made about France
    # (read 30, ce-6ebeedc8fd6ee223), whatever else the talk names.
    claim = "Is there any evidence for your claim about its unsustainable budget deficit and public debt?"
    euro = [{"role": "assistant", "content": "Spain, Italy and Greece will have to default on their debt. Next comes "
                                             "France, which has a large budget deficit and a large public debt."}]
    assert kd.tied_by_query_names(claim, euro, ["Spain", "Italy", "Greece", "France"]) == "France"
    spread = [{"role": "assistant", "content": "Spain has a large budget deficit and public debt. France has a "
                                               "large budget deficit and public debt."}]
    assert kd.tied_by_query_names(claim, spread, ["Spain", "France"]) is None
    # The sentence may name a country that is no candidate of the last exchange: it still ties (read 31).
    assert kd.tied_by_query_names(claim, euro, ["Spain", "Italy", "Greece"]) == "France"


def test_a_thing_of_a_close_kind_in_the_last_exchange_leaves_the_one_named_thing_unsettled():
    # 'this plan' right after "don't know if I go with IRA or 401K...": the 401K is a plan, the IRA an account a user
    # may call one (read 26, ce-be5a54fa9936f95b). No twin resolved to the 401K.
    both = Conversation("ira", "fiqa", [
        Turn("user", "Is there a minimum amount required?", rewrite="Is there a minimum amount required to invest?"),
        Turn("assistant", "Often $3000 for a taxable account, and lower for retirement accounts."),
        Turn("user", "don't know if I go with IRA or 401K...", rewrite="Should I go with an IRA or a 401K?"),
        Turn("assistant", "A 401K or an IRA are both retirement savings; the 401K comes with your job."),
        Turn("user", "What happens to my 401K in case of a divorce?", rewrite="What happens to my 401K in case of a divorce?"),
    ])
    out = list(KindReference(prefixes=5, twins=4).generate(_ctx(both, 3)))
    assert not [r for r in _records(out) if not r.needs_clarification and len(r.history) == 4]
    alone = Conversation("k", "fiqa", both.turns[:2] + [
        Turn("user", "Should I pick a 401K?", rewrite="Should I pick a 401K?"),
        Turn("assistant", "A 401K comes with your job and often with an employer match."),
    ] + both.turns[4:])
    assert [r for r in _records(KindReference(prefixes=5, twins=4).generate(_ctx(alone, 3)))
            if not r.needs_clarification and len(r.history) == 4]


def test_a_place_the_talk_names_says_which_country_it_is_in():
    # 'Which is the largest river in this country?' after a talk about a river in Maine is the United States (read 26).
    maine = Conversation("maine", "clapnq", [
        Turn("user", "where does the penobscot river start", rewrite="Where does the Penobscot River start?"),
        Turn("assistant", "The Penobscot River begins in north-central Maine and flows into Penobscot Bay."),
        Turn("user", "Which is the largest river in America?", rewrite="Which is the largest river in America?"),
    ])
    out = list(KindReference(prefixes=5, twins=4).generate(_ctx(maine, 2, block_names={"country": ["India", "Italy"]})))
    records = _records(out)
    assert not [r for r in records if r.needs_clarification and r.history]
    [twin] = [r for r in records if not r.needs_clarification]
    assert twin.query == "Which is the largest river in this country?" and twin.resolution["turn_index"] == 1


def test_a_part_after_a_talk_naming_one_product_is_that_products():
    ask = Turn("user", "Does the Python SDK support retries?", rewrite="Does the Python SDK support retries?")
    conv = Conversation("sdk", "ibmcloud", [
        Turn("user", "What is Cloudant?", rewrite="What is IBM Cloudant?"),
        Turn("assistant", "IBM Cloudant is a distributed database service."), ask])
    names = {"sdk": ["Python SDK", "Java SDK", "Go SDK"]}
    out = list(KindReference().generate(_ctx(conv, 2, block_names=names)))
    assert not [r for r in _records(out) if r.label == "needs_clarification"]
    assert any("leaves 'the SDK' open" in o.reason for o in out if isinstance(o, Rejection))
    # A talk naming no product leaves the part open.
    other = Conversation("sdk2", "ibmcloud", [
        Turn("user", "How do retries work?", rewrite="How do retries work?"),
        Turn("assistant", "A client waits and sends the request again."), ask])
    assert [r for r in _records(KindReference().generate(_ctx(other, 2, block_names=names))) if r.label == "needs_clarification"]


def test_a_reading_says_a_place_bare_and_a_bank_once():
    # read 29: 'outside of the Great Britain' (ce-52444a78185e446c); JPMorgan and Chase as two banks (ce-bde57d2c1e34b732)
    from builder.synthesize import kinds as kd

    conv = Conversation("mls", "clapnq", [
        Turn("user", "What is the MLS All-Star Game called outside of the USA?",
             rewrite="What is the MLS All-Star Game called outside of the USA?"),
    ])
    ctx = _ctx(conv, 1)
    [ref] = [r for r in kd.referents_of(ctx, "test") if r.kind == "country"]
    assert ref.name == "USA"
    kq = kd.make_kind_query(ctx, ref, "test")
    assert kq.reading("Great Britain") == "What is the MLS All-Star Game called outside of Great Britain?"
    assert kq.reading("United States") == "What is the MLS All-Star Game called outside of the United States?"
    assert tx.same_thing("JPMorgan", "Chase") and not tx.same_thing("Chase", "Wells Fargo")


def test_an_umbrella_kind_is_no_topic_switch_after_a_talk_that_names_a_product():
    # 'How does the service work?' after a talk about Key Protect is about Key Protect (read 30, ce-cab714b547c7bc16)
    asked = Conversation("svc", "ibmcloud", [
        Turn("user", "How do I get started with IBM Cloudant?", rewrite="How do I get started with IBM Cloudant?"),
    ])
    product = Conversation("kp", "ibmcloud", [
        Turn("user", "How can I delete a key?"), Turn("assistant", "In Key Protect, open the keys table and delete it."),
        Turn("user", "Can I restore it?"), Turn("assistant", "Yes, within 30 days."),
    ])
    plain = Conversation("tides", "ibmcloud", [
        Turn("user", "How can I delete a key?"), Turn("assistant", "Open the keys table and delete it."),
        Turn("user", "Can I restore it?"), Turn("assistant", "Yes, within 30 days."),
    ])
    names = {"service": ["IBM Cloudant", "Watson Assistant"]}
    after_product = _records(KindSwitch(histories=1, empty_share=0.0).generate(_ctx(asked, 1, [product], names)))
    after_plain = _records(KindSwitch(histories=1, empty_share=0.0).generate(_ctx(asked, 1, [plain], names)))
    assert not [r for r in after_product if r.history]
    assert [r for r in after_plain if r.history], "a talk that names no product leaves 'the service' open"


def test_a_pronoun_question_in_a_fresh_chat_is_read_with_names_of_its_kind():
    names = {"plan": ["Lite plan", "Standard plan", "Enterprise plan"]}
    plain = _records(PronounReference().generate(_ctx(PLANS, 3, block_names=names)))
    both = _records(PronounReference(fresh_share=1.0).generate(_ctx(PLANS, 3, block_names=names)))
    assert [r.to_dict() for r in both if r.history] == [r.to_dict() for r in plain]
    fresh = [r for r in both if not r.history]
    assert len(fresh) == 1 and fresh[0].needs_clarification and fresh[0].category == "unresolved_reference"
    assert fresh[0].query == "Should I stick to it for now?" and fresh[0].clarification_pattern == "open"
    assert fresh[0].interpretations[0] == "Should I stick to the Lite plan for now?"
    assert "Should I stick to the Enterprise plan for now?" in fresh[0].interpretations
    assert fresh[0].pair_id == plain[0].pair_id


def test_a_fresh_pronoun_question_is_not_read_with_a_variant_of_a_name_already_read():
    # Read 38, ce-e3710f60c598c8de: 'Can you tell me about other industries in it?' read with India, Germany, West
    # Germany and East Germany: the last three are one country said three ways.
    names = {"plan": ["Lite plan", "Standard plan", "Standard plan Plus", "Enterprise plan"]}
    both = _records(PronounReference(fresh_share=1.0).generate(_ctx(PLANS, 3, block_names=names)))
    (fresh,) = [r for r in both if not r.history]
    assert fresh.interpretations == ["Should I stick to the Lite plan for now?", "Should I stick to the Standard plan for now?",
                                     "Should I stick to the Enterprise plan for now?"]


def test_a_fresh_pronoun_question_is_read_with_the_domains_names_when_the_block_asks_about_no_other():
    # Before, such a question made no record: the block asked only about the referent. Names other users of the
    # domain asked about are readings too; the lexicon's are not (another sense of the kind may be meant).
    def fresh(block, domain):
        ctx = TurnContext(PLANS, 3, PLANS.user_turn_indices()[2], 13, "test", [], block_names=block, domain_names=domain)
        return [r for r in _records(PronounReference(fresh_share=1.0).generate(ctx)) if not r.history]

    assert fresh({"plan": ["Lite plan"]}, {}) == []
    (record,) = fresh({"plan": ["Lite plan"]}, {"plan": ["Lite plan", "Enterprise plan", "Standard plan"]})
    assert record.interpretations == ["Should I stick to the Lite plan for now?",
                                      "Should I stick to the Enterprise plan for now?",
                                      "Should I stick to the Standard plan for now?"]
    # The block's names come first; the domain's are not added to them.
    (record,) = fresh({"plan": ["Lite plan", "Standard plan"]}, {"plan": ["Enterprise plan"]})
    assert record.interpretations == ["Should I stick to the Lite plan for now?", "Should I stick to the Standard plan for now?"]


def test_a_fresh_pronoun_question_that_keeps_words_of_its_referent_is_no_positive():
    # Read 39, ce-55260dbced112293: 'Can I configure it for mobile to work with different installations of Cloud
    # Functions?' (from 'the IBM Cloud Functions SDK for mobile') says which SDK; it was read with a Python SDK too.
    conv = Conversation("sdk", "ibmcloud", [
        Turn("user", "What SDKs are there?"), Turn("assistant", "The IBM Cloud Functions SDK and the Python SDK."),
        Turn("user", "Can I configure the mobile one?",
             rewrite="Can I configure the IBM Cloud Functions SDK for mobile to work with different installations of Cloud Functions?"),
    ])
    names = {"sdk": ["IBM Cloud Functions SDK", "Python SDK"]}
    out = list(PronounReference(fresh_share=1.0).generate(_ctx(conv, 2, block_names=names)))
    assert not [r for r in _records(out) if not r.history]
    assert any("still says 'function'" in o.reason for o in out if isinstance(o, Rejection))
    # The maker's name alone ('IBM Cloud') says nothing of which of its products.
    conv = Conversation("sdk2", "ibmcloud", [
        Turn("user", "What SDKs are there?"), Turn("assistant", "The IBM Cloud Functions SDK and the Python SDK."),
        Turn("user", "Is the mobile one extra?",
             rewrite="Is there an additional charge for using the IBM Cloud Functions SDK for mobile in IBM Cloud?"),
    ])
    fresh = [r for r in _records(PronounReference(fresh_share=1.0).generate(_ctx(conv, 2, block_names=names))) if not r.history]
    assert [r.query for r in fresh] == ["Is there an additional charge for using it for mobile in IBM Cloud?"]


def test_a_name_whose_words_the_query_already_says_is_no_reading_of_its_kind_phrase():
    # 'Is this plan available with the Enterprise account type?': the Enterprise account is the query's own
    # words, no plan it could mean (read 35's flag; readings 'Is the Enterprise account available with the
    # Enterprise account type?').
    conv = Conversation("acct", "ibmcloud", [
        Turn("user", "What plans does IBM Cloudant have?"), Turn("assistant", "A Lite plan and a Standard plan."),
        Turn("user", "Is the Lite plan available with an Enterprise account?",
             rewrite="Is the Lite plan available with the Enterprise account type in IBM Cloud?"),
    ])
    names = {"plan": ["Lite plan", "Enterprise account", "Standard plan"]}
    out = list(KindSwitch(histories=1, empty_share=1.0).generate(_ctx(conv, 2, [DONOR], names)))
    pos = [r for r in _records(out) if "plan available" in r.query and "Lite" not in r.query]
    assert pos, [getattr(o, "reason", o) for o in out]
    for r in pos:
        assert r.interpretations == ["Is the Lite plan available with the Enterprise account type in IBM Cloud?",
                                     "Is the Standard plan available with the Enterprise account type in IBM Cloud?"]
    # With only one other plan left, there is nothing to read the question with.
    alone = list(KindSwitch(histories=1, empty_share=1.0).generate(
        _ctx(conv, 2, [DONOR], {"plan": ["Lite plan", "Enterprise account"]})))
    assert not [r for r in _records(alone) if "plan available" in r.query and "Lite" not in r.query]


def test_a_variant_of_a_name_already_read_is_no_other_reading_of_an_open_kind():
    # 'Is tourism growing in this country?' read with Germany, West Germany and East Germany is one country three
    # times (read 34's flag): a name whose words hold another's, or are held by it, is the same reading.
    from builder.synthesize import kinds as kd

    names = {"country": ["Germany", "West Germany", "India", "East Germany", "Italy"]}
    ctx = _ctx(ONE_CLINIC, 2, block_names=names)
    assert kd.pool_of_kind(ctx, "country") == ["Germany", "India", "Italy"]
    # Names that only share the kind noun or a word with others are still rivals.
    clinics = {"clinic": ["Causeway VA Clinic", "Jamaica Plain VA Clinic", "Brockton VA Clinic"]}
    assert kd.pool_of_kind(_ctx(ONE_CLINIC, 2, block_names=clinics), "clinic") == clinics["clinic"]


def test_standalone_clear_keeps_an_acronym_question_clear_only_where_a_talk_or_passages_say_which():
    # read 35: 'What does OTS stand for?' kept clear in a fresh chat (ce-406b6cd140fef981); an acronym has many
    # expansions, and with nothing before it nothing says which.
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    passage = Passage("p1", "OTS (Office of Thrift Supervision) regulated savings associations.", "OTS", True)
    conv = Conversation("ots", "fiqa", [
        Turn("user", "Who regulated savings and loans?"), Turn("assistant", "The OTS did, until 2011."),
        Turn("user", "What does it stand for?", [passage], rewrite="What does OTS stand for?"),
    ])
    first = Conversation("ots1", "fiqa", [Turn("user", "What does OTS stand for?", [passage], rewrite="What does OTS stand for?")])
    kept = []
    for seed in range(12):
        for c, turn in ((conv, 2), (first, 1)):
            ctx = TurnContext(c, turn, c.user_turn_indices()[turn - 1], seed, "test", [DONOR])
            kept += _records(StandaloneClear(post_share=1.0, switch_share=1.0).generate(ctx))
    own = [{"role": t.role, "content": t.text} for t in conv.turns[:2]]
    assert kept and all(r.setting == "post_retrieval" or r.history == own for r in kept)
    assert {r.setting for r in kept} == {"pre_retrieval", "post_retrieval"}
    assert not any(r.provenance.get("history_source") for r in kept), "no topic switch for an acronym question"
    # A question that names its topic is unaffected.
    named = Conversation("n", "fiqa", [Turn("user", "What does the OTS regulate?", [passage], rewrite="What does the OTS regulate?")])
    ctx = TurnContext(named, 1, 0, 13, "test", [])
    assert [r.setting for r in _records(StandaloneClear(post_share=1.0).generate(ctx))] == ["pre_retrieval", "post_retrieval"]


def test_a_clarification_offers_only_names_its_readings_read():
    # read 41, ce-ad9549c6ce6ffe6a: eight countries were offered, six read, and the question named Ireland, unread
    from builder.synthesize import kinds as kd

    conv = Conversation("eu", "clapnq", [
        Turn("user", "Which countries needed bailouts?", rewrite="Which countries needed bailouts?"),
        Turn("assistant", "Greece, Ireland and Portugal did."),
        Turn("user", "Does Italy have a strong economy?", rewrite="Does Italy have a strong economy?"),
    ])
    ctx = _ctx(conv, 2)
    ref = kd.referent_of(ctx, "test")
    kq = kd.make_kind_query(ctx, ref, "test")
    names = ["Spain", "Italy", "Portugal", "Greece", "France", "Germany", "Ireland", "Austria"]
    for turns in range(2, 40):  # many seeded shuffles of the shown names
        record = kd.kind_positive(ctx, kq, ctx.history, {"conversation_id": "eu", "turns": turns}, names,
                                  "multiple_interpretations", "test", "1")
        offered = [n for n in names if n in record.target["clarification"]]
        assert offered and all(any(n in i for i in record.interpretations) for n in offered), record.target


def test_a_name_listed_with_names_of_no_known_kind_is_no_single_candidate():
    # read 43, ce-7f9f4012ade73a77: 'the tool' after 'using CocoaPods, Carthage, or from the source directory' was
    # read as CocoaPods alone, so a question with two candidates was labelled clear
    said = "You can install the mobile SDK by using CocoaPods, Carthage, or from the source directory."
    assert tx.named_of_kind(said, "tool") == ["CocoaPods"]
    assert tx.listed_with_unknown(said, "CocoaPods") == ["Carthage"]
    assert tx.listed_with_unknown("Install it with CocoaPods. Carthage was a city.", "CocoaPods") == []
    assert tx.listed_with_unknown("The fines of Madison County, NY are listed.", "Madison County") == []  # no list
    sdk = Conversation("sdk", "ibmcloud", [
        Turn("user", "How do I install the mobile SDK?", rewrite="How do I install the mobile SDK?"),
        Turn("assistant", said),
        Turn("user", "What issues arise with CocoaPods?", rewrite="What issues arise when installing the SDK with CocoaPods?"),
    ])
    records = _records(KindReference(prefixes=5, twins=4).generate(_ctx(sdk, 2, block_names={"tool": ["CocoaPods", "Xcode"]})))
    assert not [r for r in records if not r.needs_clarification and r.history], "no twin resolved as CocoaPods"


def test_a_date_beside_the_name_keeps_it_out_of_a_kind_phrase():
    # read 43, ce-674fbd5a13f87f0a: 'the greatest pandemics before the disease in 2020' still says COVID-19
    conv = Conversation("flu", "clapnq", [
        Turn("user", "What is a pandemic?", rewrite="What is a pandemic?"),
        Turn("assistant", "An epidemic that spreads worldwide."),
        Turn("user", "Which were worse than COVID in 2020?", rewrite="Which pandemics were worse than COVID in 2020?"),
    ])
    ref, got = _kind_query(conv, 2)
    assert ref is not None and tx.clean_name(ref.name) == "COVID"
    assert isinstance(got, Rejection) and "date" in got.reason
    undated = Conversation("flu2", "clapnq", [*conv.turns[:2], Turn("user", "Which were worse than COVID?",
                                                                    rewrite="Which pandemics were worse than COVID?")])
    assert not isinstance(_kind_query(undated, 2)[1], Rejection)


def test_a_city_the_talk_names_settles_which_county_without_naming_it():
    # read 43, ce-b252b925580a6569: 'this county' after a talk about the City of Piedmont was an open question read
    # as Alameda County or Madison County
    piedmont = Conversation("pied", "govt", [
        Turn("user", "What if my recycling collection is missed?", rewrite="What if my recycling collection is missed?"),
        Turn("assistant", "If you are in the City of Piedmont, call Republic Services before noon."),
        Turn("user", "What are Alameda County's recycling ordinances?",
             rewrite="What are Alameda County's recycling ordinances?"),
    ])
    names = {"county": ["Alameda County", "Madison County", "Tuolumne County"]}
    records = _records(KindReference(prefixes=5, twins=4).generate(_ctx(piedmont, 2, block_names=names)))
    assert not [r for r in records if r.needs_clarification and r.history], "the city's county is no open question"
    # with no place in the talk the same question stays open
    plain = Conversation("plain", "govt", [
        Turn("user", "What if my recycling collection is missed?", rewrite="What if my recycling collection is missed?"),
        Turn("assistant", "Call your hauler before noon."), piedmont.turns[2]])
    records = _records(KindReference(prefixes=5, twins=4).generate(_ctx(plain, 2, block_names=names)))
    assert [r for r in records if r.needs_clarification and r.history]


def test_a_name_inside_a_longer_name_the_question_says_gives_no_kind_phrase():
    # read 44, ce-7979c32dec5f9338: 'the great wall of China' -> 'the great wall of the country' still says China
    wall = Passage("p1", "The Great Wall of China was built of stone, brick and rammed earth.", "Great Wall of China", True)
    conv = Conversation("wall", "clapnq", [
        Turn("user", "what is the great wall of China built out of", [wall],
             rewrite="what is the great wall of China built out of"),
    ])
    ref, got = _kind_query(conv, 1)
    assert ref is not None and tx.clean_name(ref.name) == "China"
    assert isinstance(got, Rejection) and "Great Wall of China" in got.reason
    # the same question over a passage about something else keeps its kind phrase
    other = Conversation("wall2", "clapnq", [Turn("user", "what is the great wall of China built out of",
                                                   [Passage("p2", "China is a country in East Asia.", "China", True)],
                                                   rewrite="what is the great wall of China built out of")])
    assert not isinstance(_kind_query(other, 1)[1], Rejection)


def test_standalone_clear_rejects_a_bare_this_that_points_back():
    # read 44, ce-886805cf61ea40e6: 'Isn't this where NASA technology comes in?' as a clear fresh-chat question
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    for text, kept in (("Isn't this where NASA technology comes in?", False), ("Is this a fast way to make money?", False),
                       ("How big is this company's market share?", None), ("Can I extend the web chat? if so, how can I do that?", True),
                       # read 63, ce-a772062d1829452d: a closing 'that' in a one-clause question points back too
                       ("why don't you provide that?", False),
                       ("Can I create a machine learning model and how should I do that?", True)):
        conv = Conversation("t", "fiqa", [Turn("user", text, rewrite=text)])
        out = list(StandaloneClear().generate(TurnContext(conv, 1, 0, 13, "test", [])))
        bare = any("bare 'this'" in o.reason for o in out if isinstance(o, Rejection))
        assert bare == (kept is False), (text, out)
        if kept:
            assert _records(out), (text, out)


def test_standalone_clear_rejects_a_time_counted_from_something_unsaid():
    # read 66, ce-ca2f8dd358406f32: 'Did the Soviet orbit made three years earlier map a different region?' as clear
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    for text, kept in (("Did the Soviet orbit made three years earlier map a different region?", False),
                       ("What happened to the colony ten years later?", False),
                       ("Was the first orbit made two years earlier than Sputnik?", True)):
        conv = Conversation("t", "clapnq", [Turn("user", text, rewrite=text)])
        out = list(StandaloneClear().generate(TurnContext(conv, 1, 0, 13, "test", [])))
        counted = any("nothing to count from" in o.reason for o in out if isinstance(o, Rejection))
        assert counted == (not kept), (text, out)
        if kept:
            assert _records(out), (text, out)


def test_pool_names_the_question_fits_come_first():
    # 'are they billed per conversation?' had been read with a Hive metastore, 'this state's involvement in the US
    # Civil War' with Alaska (read 47): the names the domain's passages retrieved for the question say come first,
    # others only as far as two readings need; the true referent stays whatever its fit.
    from builder.synthesize import kinds as kd
    from builder.synthesize.corpus import Corpus

    pool = Conversation("pool", "ibm", [Turn("user", "Billing?", [
        Passage("wa", "Watson Assistant bills each conversation a user starts.", "Watson Assistant"),
        Passage("sp", "Speech to Text bills each conversation minute.", "Speech to Text"),
        Passage("hv", "A Hive metastore stores table schemas.", "Hive metastore"),
        Passage("ks", "Kubernetes Service runs containers on worker nodes.", "Kubernetes Service")])])
    asks = Conversation("asks", "ibm", [Turn("user", "How are conversations billed?", rewrite="How are conversations billed?")])
    ctx = TurnContext(asks, 1, 0, 13, "test", [], corpus=Corpus.from_conversations([pool, asks]),
                      block_names={"service": ["Hive metastore", "Kubernetes Service", "Watson Assistant", "Speech to Text"]})
    names = ["Hive metastore", "Kubernetes Service", "Watson Assistant", "Speech to Text"]
    assert kd.fitting(ctx, names, "How are conversations billed?") == ["Watson Assistant", "Speech to Text"]
    assert kd.fitting(ctx, names, "How are conversations billed?", least=3) == ["Watson Assistant", "Speech to Text", "Hive metastore"]
    assert kd.fitting(ctx, names, "How are conversations billed?", keep="Kubernetes Service") == [
        "Watson Assistant", "Speech to Text", "Kubernetes Service"]
    assert kd.pool_of_kind(ctx, "service", query="How are conversations billed?") == ["Watson Assistant", "Speech to Text"]
    assert kd.pool_of_kind(ctx, "service")[:2] == ["Hive metastore", "Kubernetes Service"]  # no question: pool order
    # no passage pool: the names as they are
    bare = TurnContext(asks, 1, 0, 13, "test", [])
    assert kd.fitting(bare, names, "How are conversations billed?") == names


def test_a_kin_kind_only_fills_up_the_readings_of_a_kind():
    # 'the city' had been read as California and Alameda County, which the question's passages say more than any
    # city (read 48, ce-e017fafbc0c6831e): names of the kind itself are weighed; a kin kind's only fill up to two.
    from builder.synthesize import kinds as kd
    from builder.synthesize.corpus import Corpus

    pool = Conversation("pool", "gov", [Turn("user", "Permits?", [
        Passage("ca", "California issues permits; Alameda County issues permits too.", "California"),
        Passage("sac", "Sacramento issues permits at city hall.", "Sacramento"),
        Passage("bos", "Boston is a city.", "Boston")])])
    asks = Conversation("asks", "gov", [Turn("user", "Where do I get a permit?", rewrite="Where do I get a permit?")])
    ctx = TurnContext(asks, 1, 0, 13, "test", [], corpus=Corpus.from_conversations([pool, asks]),
                      block_names={"city": ["Sacramento"], "state": ["California"], "county": ["Alameda County"]})
    names = kd.pool_of_kind(ctx, "city", query="Where do I get a permit in the city?")
    assert names[0] == "Sacramento" and "California" not in names and "Alameda County" not in names
    assert len(names) >= 2  # a second city the domain's passages say (the lexicon's Boston)


def test_a_kind_query_that_keeps_words_of_its_referent_is_no_kind_query():
    # 'Can I configure that SDK for mobile to work with different installations of Cloud Functions?' was a topic
    # switch read with a Python SDK too (read 49, ce-cfbc3ee7cdeb377d): the question still says which SDK.
    from builder.synthesize import kinds as kd

    conv = Conversation("sdk", "ibmcloud", [Turn(
        "user", "Can I configure the mobile one?",
        rewrite="Can I configure the IBM Cloud Functions SDK for mobile to work with different installations of Cloud Functions?")])
    ctx = _ctx(conv, 1)
    got = kd.make_kind_query(ctx, kd.referent_of(ctx, "test"), "test")
    assert isinstance(got, Rejection) and "still says 'function'" in got.reason
    # the kind noun itself is no word kept: 'the virus' for the West Nile virus
    conv = Conversation("virus", "govt", [Turn("user", "When was West Nile virus first found?",
                                               rewrite="When was West Nile virus first found in animals?")])
    ctx = _ctx(conv, 1)
    ref = kd.referent_of(ctx, "test")
    got = kd.make_kind_query(ctx, ref, "test")
    assert isinstance(got, kd.KindQuery) and "West" not in got.query, (ref, got)


def test_the_user_turns_as_their_rewrites_read_them_say_what_the_talk_is_about():
    # Reads 42-44, 49, 54, 55 (ce-5c2a5d0707036836): 'the empire' after a Byzantine talk whose answers also say
    # the Roman Empire. 'What was its religion?' asks about the Byzantine Empire, by its human rewrite; the
    # user's 'eastern roman empire' is the Byzantine Empire's alias, no second empire.
    def talk(religion_rewrite):
        return Conversation("byz", "clapnq", [
            Turn("user", "why was the eastern roman empire called the byzantine empire",
                 rewrite="why was the eastern roman empire called the byzantine empire"),
            Turn("assistant", "Historians call it the Byzantine Empire to set it apart from the Roman Empire."),
            Turn("user", "What was its religion?", rewrite=religion_rewrite),
            Turn("assistant", "The Byzantine Empire was Christian, as the Roman Empire had become."),
            Turn("user", "When was it founded?", rewrite="When was the Byzantine Empire founded?"),
        ])

    def open_after_both_exchanges(conv):
        out = _records(KindReference(prefixes=5).generate(_ctx(conv, 3)))
        return [r for r in out if r.needs_clarification and len(r.history) == 4]

    assert not open_after_both_exchanges(talk("What was the religion of the Byzantine Empire?"))
    # Right after the first exchange too: the user's one question names one empire by two names (read 55).
    religion = list(KindReference(prefixes=5).generate(_ctx(talk("What was the religion of the Byzantine Empire?"), 2)))
    assert not [r for r in _records(religion) if r.needs_clarification]
    assert any("leaves 'the empire' open" in o.reason for o in religion if isinstance(o, Rejection))
    # Without the rewrite nothing says what 'its' was, and the answers name both empires: still open.
    many = open_after_both_exchanges(talk(None))
    assert many and {"When was the Byzantine Empire founded?", "When was the Roman Empire founded?"} <= set(many[0].interpretations)
    from builder.synthesize import kinds as kd
    history = [{"role": t.role, "content": t.text} for t in talk(None).turns[:4]]
    asked = ["why was the eastern roman empire called the byzantine empire", "What was the religion of the Byzantine Empire?"]
    assert kd.topic_singles_out(history, ["Byzantine Empire", "Roman Empire"], asked)
    assert not kd.topic_singles_out(history, ["Byzantine Empire", "Roman Empire"], [*asked, "And the Roman Empire?"])


def test_a_thing_the_question_names_beside_its_kind_phrase_is_no_reading_of_it():
    # 'Can the planet's cyclones affect Earth ...?' was read 'Can Earth's cyclones affect Earth ...?' (read 56,
    # ce-7fcbc39650c3958b): Earth is no candidate for 'the planet' there, Jupiter and Mars are.
    conv = Conversation("storms", "clapnq", [
        Turn("user", "Does Jupiter have cyclones?", rewrite="Does Jupiter have cyclones?"),
        Turn("assistant", "Yes, Jupiter has huge cyclones, and Mars has dust storms; Earth has hurricanes."),
        Turn("user", "How are cyclones on Earth formed?", rewrite="How are cyclones on Earth formed?"),
        Turn("assistant", "Over warm oceans on Earth; on Mars dust storms form over plains."),
        Turn("user", "Can its cyclones affect Earth?", rewrite="Can Jupiter's cyclones affect Earth?"),
    ])
    out = _records(KindReference(prefixes=5).generate(_ctx(conv, 3)))
    readings = [i for r in out if r.needs_clarification for i in r.interpretations]
    assert readings and "Can Jupiter's cyclones affect Earth?" in readings
    assert not [i for i in readings if i.startswith("Can Earth's")]


def test_a_talk_that_names_a_thing_does_not_single_out_one_of_its_people():
    # 'Who is that emperor known for?' after a Great Wall talk: the domain's passages tie the wall to Qin Shi Huang,
    # but it had many emperors; a reader asks which (read 62, ce-020f645f7c636517)
    conv = Conversation("wall", "clapnq", [
        Turn("user", "How long is the Great Wall?", rewrite="How long is the Great Wall?"),
        Turn("assistant", "The walls of all dynasties run for thousands of kilometres; the Ming walls alone for 8,850 km."),
        Turn("user", "Who is Qin Shi Huang known for?", rewrite="Who is Qin Shi Huang known for?"),
    ])
    pool = Conversation("pool", "clapnq", [Turn("user", "Tell me about China.", [
        Passage("w1", "Emperor Qin Shi Huang linked the walls into the Great Wall.", "Great Wall"),
        Passage("w2", "The Great Wall was begun under Emperor Qin Shi Huang.", "Qin Shi Huang"),
        Passage("w3", "Emperor Wu of Han ruled for 54 years.", "Emperor Wu of Han"),
    ])])
    names = {"emperor": ["Qin Shi Huang", "Emperor Wu of Han", "Kangxi Emperor"]}
    out = _records(KindReference().generate(_pooled_ctx(conv, 2, pool, names)))
    assert out and all(r.needs_clarification for r in out), [(r.query, r.resolution) for r in out]


def test_a_thing_under_its_old_and_new_names_is_one_candidate():
    # 'Who is the coach of the team?' after an answer saying the Chicago Cardinals became the Arizona Cardinals:
    # one franchise, no choice between two teams.
    from builder.synthesize import kinds as kd

    said = ("The Chicago Cardinals became the St. Louis Cardinals in 1960 and eventually moved and became the Arizona "
            "Cardinals. The Chicago Cardinals ( now the Arizona Cardinals ) were a founding member of the NFL.")
    exchange = [{"role": "user", "content": "Are the Arizona Cardinals and the Chicago Cardinals the same team?"},
                {"role": "assistant", "content": said}]
    assert tx.renamed_merged(["Arizona Cardinals", "Chicago Cardinals"], said) == ["Arizona Cardinals"]
    assert kd.rivals(exchange, "team") == []
    # Becoming something else is no renaming: 'became Microsoft's rival' keeps both.
    assert tx.renamed_merged(["Apple", "Microsoft"], "Apple became Microsoft's rival.") == ["Apple", "Microsoft"]


def test_the_names_a_block_asks_about_hold_a_renamed_thing_once():
    # 'Who is the coach of the team?' stitched after another talk was read as the Arizona Cardinals, the Chicago
    # Cardinals or the New England Patriots (ce-3fbe1413b19471c6): the block's own answer says the Chicago Cardinals
    # are now the Arizona Cardinals, so the readings of 'the team' hold that franchise once.
    from builder.conversation import Conversation, Passage, Turn
    from builder.synthesize.context import names_by_kind

    ask = "Are the Arizona Cardinals and the Chicago Cardinals the same team?"
    said = "Yes. The Chicago Cardinals (now the Arizona Cardinals) were a founding team of the NFL."
    nfl = Conversation("nfl", "clapnq", [
        Turn("user", ask, [Passage("p", "The Arizona Cardinals are a professional football team.", "Arizona Cardinals",
                                   True)], rewrite=ask),
        Turn("assistant", said),
        Turn("user", "Who coaches the New England Patriots?",
             [Passage("q", "The New England Patriots are a professional football team.", "New England Patriots", True)],
             rewrite="Who coaches the New England Patriots?"),
        Turn("assistant", "Bill Belichick coached the New England Patriots for years."),
    ])
    assert names_by_kind([nfl]).get("team") == ["Arizona Cardinals", "New England Patriots"]
    # Without the answer that says so, they stay two teams.
    quiet = Conversation("nfl2", "clapnq", [t for t in nfl.turns if t.text != said])
    assert names_by_kind([quiet]).get("team") == ["Arizona Cardinals", "Chicago Cardinals", "New England Patriots"]


def test_a_retrieved_copy_is_read_with_the_things_its_passages_name():
    # Read 70 held readings that the record never shows: 'the mission' over passages about Juno and Perseverance was
    # read as the Europa Clipper and Galileo, names asked about elsewhere in the block.
    from builder.synthesize import kinds as kd

    ref, kq = _kind_query(CLINICS, 3)
    assert not isinstance(kq, Rejection) and ref.kind == "clinic"
    reread = kd.passage_reader(_ctx(CLINICS, 3), kq, "test")
    fresh = kd.kind_positive(_ctx(CLINICS, 3), kq, [], {"conversation_id": "", "turns": 0},
                             ["Maplewood VA Clinic", "Lakeside VA Clinic"], "underspecified_entity", "test", "1",
                             named_here=False)
    both = [Passage("a", "The Brockton VA Clinic offers mental health services.", "Brockton VA Clinic", None),
            Passage("b", "The Lowell VA Clinic offers primary care.", "Lowell VA Clinic", None)]
    copy = reread(fresh, both)
    assert copy.category == "multiple_interpretations"
    assert {r for r in copy.interpretations} == {kq.reading("Brockton VA Clinic"), kq.reading("Lowell VA Clinic")}
    assert "Brockton VA Clinic" in copy.target["clarification"] and "Maplewood" not in copy.target["clarification"]
    # A sentence's first words are capitalised whatever they are: 'Weight Loss clinics such as these' names no clinic
    # (read 70's 'Weight dependent' sport, ce-64278651d530cdbc).
    opener = [Passage("w", "Weight Loss clinics such as these serve veterans. The Lowell VA Clinic offers primary care.", "",
                      None), both[0]]
    assert sorted(reread(fresh, opener).interpretations) == sorted(copy.interpretations)
    # A name whose kind noun modifies another noun is of another kind: 'the Boston VA Clinic Directorate' is no clinic.
    office = [Passage("d", "Veterans can write to the Boston VA Clinic Directorate about care.", "", None), *both]
    assert sorted(reread(fresh, office).interpretations) == sorted(copy.interpretations)
    # Two names joined, or a region's adjective, are no one clinic either.
    assert kd._kind_inside("Lowell and Brockton VA Clinics", "clinic") and kd._kind_inside("North American", "clinic")
    assert not kd._kind_inside("Lowell VA Clinic", "clinic")
    # Passages naming one clinic leave the block's readings; readings the history gave stay whatever the passages say.
    assert reread(fresh, both[:1]) == fresh
    history = CLINICS.turns[:4]
    after = kd.kind_positive(_ctx(CLINICS, 3), kq, [{"role": t.role, "content": t.text} for t in history],
                             {"conversation_id": "va", "turns": 4}, ["Causeway VA Clinic", "Jamaica Plain VA Clinic"],
                             "multiple_interpretations", "test", "1")
    assert reread(after, both) == after
