"""Same-topic stitch points of the kind-reference generators: several own prefixes, the question asked again
later in the conversation, the human follow-up after an exchange naming rivals, and the grammar fixes."""

from builder.conversation import Conversation, Passage, Turn
from builder.record import Record
from builder.synthesize import kinds as kd
from builder.synthesize import text as tx
from builder.synthesize.context import TurnContext
from builder.synthesize.rules.followup_twins import FollowupTwins
from builder.synthesize.rules.kind_reference import KindReference, _spread


def _ctx(conv, turn, block_names=None):
    index = conv.user_turn_indices()[turn - 1]
    return TurnContext(conv, turn, index, 13, "test", [], block_names=block_names or {})


def _records(outputs):
    return [o for o in outputs if isinstance(o, Record)]


# The first turn names one clinic; later turns name two more, none singled out by the last user turn.
LATER = Conversation("later", "govt", [
    Turn("user", "Does the Causeway VA Clinic offer mental health services?",
         [Passage("p1", "The Causeway VA Clinic offers mental health services.", "Causeway VA Clinic", True)],
         rewrite="Does the Causeway VA Clinic offer mental health services?"),
    Turn("assistant", "Yes, the Causeway VA Clinic offers mental health care."),
    Turn("user", "Are there other clinics nearby?", rewrite="Are there other VA clinics near the Causeway VA Clinic?"),
    Turn("assistant", "The Jamaica Plain VA Clinic and the Lowell VA Clinic are close."),
    Turn("user", "What are their opening hours?", rewrite="What are the opening hours of the VA clinics?"),
    Turn("assistant", "Both open at 8 am on weekdays."),
])


def test_a_first_turn_is_asked_again_later_only_after_several_of_its_kind():
    assert not _records(KindReference().generate(_ctx(LATER, 1)))  # no later prefixes unless asked for
    out = _records(KindReference(later=True, prefixes=4).generate(_ctx(LATER, 1)))
    assert out and all(r.needs_clarification and r.category == "multiple_interpretations" for r in out)
    cuts = sorted(r.provenance["history_source"]["turns"] for r in out)
    assert cuts == [4, 6]  # the history past the first turn that names two or more clinics
    for r in out:
        assert "Causeway" not in r.query and r.query.endswith("clinic offer mental health services?")
        assert any("Jamaica Plain VA Clinic" in i for i in r.interpretations)
        # the turn's own exchange, where the user asked it with the name, is not in the history
        assert [h["content"] for h in r.history][:1] == ["Are there other clinics nearby?"]


def test_spread_keeps_the_ends_and_spaces_the_rest():
    items = list(range(10))
    assert _spread(items, 2) == [0, 9]
    assert _spread(items, 4) == [0, 3, 6, 9]
    assert _spread(items, 1) == [0]
    assert _spread(items[:3], 8) == [0, 1, 2]


# The follow-up 'When was it founded?' resolved by its own history (Rome), asked after an earlier exchange
# that named two empires.
EMPIRES = Conversation("emp", "clapnq", [
    Turn("user", "Which empires ruled the Mediterranean?"),
    Turn("assistant", "The Roman Empire and the Ottoman Empire both ruled it at different times."),
    Turn("user", "Tell me about the Roman Empire.", rewrite="Tell me about the Roman Empire."),
    Turn("assistant", "The Roman Empire grew from the city of Rome."),
    Turn("user", "When was it founded?",
         [Passage("p2", "The Roman Empire is an empire founded in 27 BC.", "Roman Empire", True)],
         rewrite="When was the Roman Empire founded?"),
])


def test_a_human_follow_up_after_an_exchange_naming_two_of_its_kind_is_unresolved():
    ctx = _ctx(EMPIRES, 3, block_names={"empire": ["Roman Empire", "Ottoman Empire"]})
    plain = _records(FollowupTwins().generate(ctx))
    assert not [r for r in plain if r.needs_clarification and r.provenance["history_source"]["conversation_id"] == "emp"]
    out = _records(FollowupTwins(rival_prefixes=2).generate(ctx))
    same = [r for r in out if r.needs_clarification and r.provenance["history_source"]["conversation_id"] == "emp"]
    assert len(same) == 1
    r = same[0]
    assert r.query == "When was it founded?" and r.provenance["history_source"]["turns"] == 2
    assert sorted(r.interpretations) == ["When was the Ottoman Empire founded?", "When was the Roman Empire founded?"]
    assert any(not x.needs_clarification for x in out)  # the turn in its own full history stays the hard negative


def test_a_human_follow_up_in_its_own_or_a_fresh_chat_is_also_asked_over_retrieved_passages():
    from builder.synthesize.corpus import Corpus

    pool = Conversation("pool", "clapnq", [Turn("user", "Which empires were founded long ago?", [
        Passage("e1", "The Ottoman Empire was founded around 1299: that is its founding date.", "Ottoman Empire"),
        Passage("e2", "The Mongol Empire was founded in 1206, the founding date of the empire.", "Mongol Empire"),
    ])])
    donor = Conversation("donor", "clapnq", [Turn("user", "How do tides work?"), Turn("assistant", "The Moon pulls the sea."),
                                             Turn("user", "Why twice a day?"), Turn("assistant", "There are two bulges.")])
    names = {"empire": ["Roman Empire", "Ottoman Empire"]}
    # an ellipsis, not a bare pronoun: after the donor's talk of tides it stays open (a topic switch)
    asked = Conversation("emp", "clapnq", EMPIRES.turns[:4] + [
        Turn("user", "What about the founding date?",
             [Passage("p2", "The Roman Empire is an empire founded in 27 BC.", "Roman Empire", True)],
             rewrite="What about the founding date of the Roman Empire?")])
    ctx = TurnContext(asked, 3, asked.user_turn_indices()[2], 13, "test", [donor], block_names=names,
                      corpus=Corpus.from_conversations([asked, pool]))
    plain = _records(FollowupTwins(rival_prefixes=2).generate(ctx))
    both = _records(FollowupTwins(rival_prefixes=2, retrieved_share=1.0).generate(ctx))
    assert [r.to_dict() for r in both if r.setting == "pre_retrieval"] == [r.to_dict() for r in plain]
    post = [r for r in both if r.setting == "post_retrieval"]
    source = lambda r: (r.provenance.get("history_source") or {}).get("conversation_id")  # noqa: E731
    switches = [r for r in plain if r.history and source(r) not in (None, "emp")]
    assert switches and len(post) == len(plain) - len(switches)  # topic switches stay pre-retrieval
    assert all(source(r) in (None, "emp") or not r.history for r in post)
    assert any(not r.needs_clarification for r in post)  # the hard negative too, label unchanged
    assert all({d["id"] for d in r.documents} <= {"e1", "e2"} for r in post)  # never the turn's own passage p2
    assert FollowupTwins(retrieved_share=1.0).needs_corpus and not FollowupTwins().needs_corpus


def test_a_name_inside_another_names_alias_is_no_rival():
    exchange = [{"role": "user", "content": "Why was the eastern Roman Empire called the Byzantine Empire?"},
                {"role": "assistant", "content": "Historians call the eastern Roman Empire the Byzantine Empire."}]
    assert kd.rivals(exchange, "empire") == []
    two = [{"role": "user", "content": "Compare the Roman Empire and the Ottoman Empire."},
           {"role": "assistant", "content": "The Roman Empire and the Ottoman Empire lasted centuries."}]
    assert sorted(kd.rivals(two, "empire")) == ["Ottoman Empire", "Roman Empire"]


def test_readings_and_kind_phrases_stay_grammatical():
    assert tx.substitute("When was the Byzantine Empire reorganized?", "Byzantine Empire", "Rome") == \
        "When was Rome reorganized?"
    assert tx.substitute("When was the Byzantine Empire reorganized?", "Byzantine Empire", "Ottoman Empire") == \
        "When was the Ottoman Empire reorganized?"
    assert tx.kind_of("USA") == "country" and tx.kind_of("Covid") == "disease"  # an alias takes its group's kind


def test_a_human_follow_up_whose_own_history_leaves_the_pronoun_open_is_no_hard_negative():
    # The last exchange names two empires and the user's turn singles out neither: recency is not resolution.
    both = Conversation("emp2", "clapnq", [
        Turn("user", "Tell me about the empires of the Mediterranean.", rewrite="Tell me about the empires of the Mediterranean."),
        Turn("assistant", "The Roman Empire and the Ottoman Empire both ruled it at different times."),
        Turn("user", "When was it founded?",
             [Passage("p2", "The Roman Empire is an empire founded in 27 BC.", "Roman Empire", True)],
             rewrite="When was the Roman Empire founded?"),
    ])
    ctx = _ctx(both, 2, block_names={"empire": ["Roman Empire", "Ottoman Empire"]})
    outputs = list(FollowupTwins(rival_prefixes=2).generate(ctx))
    records = _records(outputs)
    assert not [r for r in records if not r.needs_clarification]
    assert any("leaves 'it' open between" in o.reason for o in outputs if not isinstance(o, Record))
    own = [r for r in records if r.provenance["history_source"] and r.provenance["history_source"]["conversation_id"] == "emp2"]
    assert len(own) == 1 and own[0].history == ctx.history  # the turn itself, in its own full history
    assert own[0].category == "unresolved_reference"
    assert sorted(own[0].interpretations) == ["When was the Ottoman Empire founded?", "When was the Roman Empire founded?"]
    # the other follow-up, whose last exchange names only the Roman Empire, stays the hard negative
    assert any(not r.needs_clarification for r in _records(FollowupTwins().generate(_ctx(EMPIRES, 3))))


def test_a_same_topic_follow_up_needs_its_referent_among_the_rivals():
    # 'When was it founded?' about the Roman Empire, after an exchange naming two other empires: people read it as
    # the talk's own topic, not as either of them (read 30, ce-3155d73b06640510)
    others = Conversation("emp3", "clapnq", [
        Turn("user", "Which empires came after Rome?"),
        Turn("assistant", "The Byzantine Empire and the Ottoman Empire both followed."),
        *EMPIRES.turns[2:],
    ])
    ctx = _ctx(others, 3, block_names={"empire": ["Roman Empire", "Ottoman Empire", "Byzantine Empire"]})
    out = _records(FollowupTwins(rival_prefixes=2).generate(ctx))
    assert not [r for r in out if r.needs_clarification and r.provenance["history_source"]["conversation_id"] == "emp3"]
    ctx = _ctx(EMPIRES, 3, block_names={"empire": ["Roman Empire", "Ottoman Empire"]})
    assert [r for r in _records(FollowupTwins(rival_prefixes=2).generate(ctx))
            if r.needs_clarification and r.provenance["history_source"]["conversation_id"] == "emp"]


def test_a_name_with_its_own_article_replaces_a_kind_phrase_without_doubling_it():
    # 'Did the The Office win any awards?', 'Who was the arch rival to The Saturday Night Live?' (read 31)
    assert tx.substitute("Did the series win any awards?", "series", "The Office") == "Did The Office win any awards?"
    assert tx.substitute("Who was the arch rival to The Office series?", "Office series", "Saturday Night Live") \
        == "Who was the arch rival to Saturday Night Live?"
    assert tx.substitute("What is the size of the Sun?", "Sun", "Moon") == "What is the size of the Moon?"
    assert tx.without_name_article("The ", "Friends") == "The "  # a sentence's own 'The' stays


def test_a_kind_word_read_as_a_name_takes_its_appositive_and_owner_with_it_and_the_verb_agrees():
    # "What is the surface of Jupiter's Io, Europa, like?", 'Do IBM have to use ...' (read 33)
    assert tx.substitute("What is the surface of Jupiter's moon, Europa, like?", "moon", "Io") == \
        "What is the surface of Io like?"
    assert tx.substitute("Do US-based companies have to use a specific system?", "US-based companies", "IBM") == \
        "Does IBM have to use a specific system?"
    assert tx.substitute("Are the clinics open on Sundays?", "the clinics", "the Causeway VA Clinic") == \
        "Is the Causeway VA Clinic open on Sundays?"
    # a name that may be plural keeps the verb; a name's own appositive stays
    assert tx.substitute("Do the teams play today?", "the teams", "Arizona Cardinals") == "Do Arizona Cardinals play today?"
    assert tx.substitute("How big is the moon, Europa, now?", "Europa", "Io") == "How big is the moon, Io, now?"


# 'What about Romeo and Juliet?' resolved to 'the film adaptations of Romeo and Juliet': 'film' only modifies the
# referent, so no film's (or series') name reads it ('Can you tell me about Friends of Romeo and Juliet?').
PLAYS = Conversation("plays", "clapnq", [
    Turn("user", "Can you tell me about the film adaptations of Hamlet?"),
    Turn("assistant", "Hamlet has had many film adaptations, such as the 1948 film by Laurence Olivier."),
    Turn("user", "What about Romeo and Juliet?",
         rewrite="Can you tell me about the film adaptations of Romeo and Juliet?"),
    Turn("assistant", "Romeo and Juliet was filmed by Franco Zeffirelli in 1968."),
])


def test_a_referent_whose_kind_word_only_modifies_it_gets_no_named_readings():
    ctx = _ctx(PLAYS, 2, block_names={"film": ["The Godfather", "Casablanca", "Vertigo"]})
    out = list(FollowupTwins(rival_prefixes=2).generate(ctx))
    assert not [r for r in _records(out) if r.needs_clarification]
    assert any("only modifies" in o.reason for o in out if not isinstance(o, Record))
    assert not [r for r in _records(out) if not r.needs_clarification and "Godfather" in " ".join(r.interpretations)]


def test_a_ranked_kind_phrase_gets_no_named_readings():
    # 'Which is the most popular?' -> 'the most popular women's football league': read with league names it
    # became 'Which is the most popular NFL?' (read 32, ce-03d0077fd1ed5881)
    from builder.synthesize.rules.followup_twins import _ranked

    assert _ranked("Which is the most popular women's football league?", "women's football league")
    assert _ranked("What is the largest river?", "river")
    assert not _ranked("Did the series win any awards?", "series")
    assert not _ranked("What is the most popular Premier League club?", "Premier League")


def test_a_kind_phrase_right_after_an_unnamed_thing_of_its_kind_points_back_there():
    # read 41, ce-06b319e6923d1104: 'How much can I accumulate in that account?' right after 'you might consider
    # opening a paper trading account' was offered as an open question (IRA or 401K)
    from builder.synthesize.rules.kind_reference import classify

    standalone = "How much can I accumulate in a Roth IRA account?"
    (entity,) = [e for e in tx.entities(standalone) if "IRA" in e.text]
    ref = kd.Referent(entity.text, "account", False, entity, standalone)
    opened = [{"role": "user", "content": "How can I practise trading?"},
              {"role": "assistant", "content": "You might consider opening a paper trading account with a broker."}]
    elsewhere = [{"role": "user", "content": "How can I practise trading?"},
                 {"role": "assistant", "content": "Workshops on Udemy and Khan Academy are cheap."}]
    assert classify(opened, ref, [])[0] == "unclear"
    assert classify(elsewhere, ref, [])[0] == "none"
    # a way to reach an account is no account brought in; plural talk of accounts singles none out
    assert not kd.instance_said_last([{"role": "user", "content": "Is there a way to the account page?"}], "account")
    assert not kd.instance_said_last([{"role": "user", "content": "Brokers offer accounts of many kinds."}], "account")


# 'they' in the rewrite points at the list of missions in the exchange right before the turn.
MISSIONS = Conversation("missions", "govt", [
    Turn("user", "Which agency explores space?", rewrite="Which agency explores space?"),
    Turn("assistant", "NASA explores space."),
    Turn("user", "Which missions did it fly?", rewrite="Which missions did NASA fly?"),
    Turn("assistant", "Juno, Galileo, Cassini and Voyager are a few of them."),
    Turn("user", "I did not recognize so many of those probes. Were they all launched by NASA?",
         rewrite="I did not recognize so many of those probes. Were they all launched by NASA?"),
])


def test_a_kind_question_with_a_pronoun_of_its_own_keeps_the_talk_before_it():
    # read 42, ce-400250b054f80254: 'Are they all by that agency?' was a hard negative after a prefix that cut the
    # missions 'they' points at
    out = _records(KindReference(prefixes=4, twins=4).generate(_ctx(MISSIONS, 3)))
    assert out, "the whole own history still gives the twin"
    assert all(r.provenance["history_source"]["turns"] == 4 for r in out), [r.provenance["history_source"] for r in out]


def test_a_place_in_another_thing_of_the_kind_leaves_the_one_name_unsettled():
    # read 42, ce-fae93231cce828b4: 'that country' after a talk naming England, then New York, was resolved as England
    from builder.synthesize.rules.kind_reference import classify

    standalone = "What is the most popular play in England?"
    (entity,) = [e for e in tx.entities(standalone) if e.text == "England"]
    ref = kd.Referent("England", "country", False, entity, standalone)
    england = [{"role": "user", "content": "Were his plays popular in England?"},
               {"role": "assistant", "content": "Yes, England loved them."}]
    assert classify(england, ref, [])[0] == "one"
    also = england + [{"role": "user", "content": "Where are they staged now?"},
                      {"role": "assistant", "content": "Often in New York, on Broadway."}]
    assert classify(also, ref, [])[0] == "unclear"


# The user keeps to the Roman Empire, by pronouns their rewrites resolve; an answer compares it with another.
KEPT_TO = Conversation("kept", "clapnq", [
    Turn("user", "Tell me about the Roman Empire.", rewrite="Tell me about the Roman Empire."),
    Turn("assistant", "The Roman Empire grew from the city of Rome."),
    Turn("user", "How big was it?", rewrite="How big was the Roman Empire?"),
    Turn("assistant", "At its height the Roman Empire was smaller than the Ottoman Empire. The Ottoman Empire also "
                      "lasted longer."),
    Turn("user", "Did it have colonies?", rewrite="Did the Roman Empire have colonies?"),
    Turn("assistant", "It had provinces rather than colonies."),
    Turn("user", "When was it founded?",
         [Passage("p3", "The Roman Empire is an empire founded in 27 BC.", "Roman Empire", True)],
         rewrite="When was the Roman Empire founded?"),
])


def test_the_thing_the_users_rewrites_keep_to_is_no_open_pronoun_after_an_answer_naming_another():
    # 'Where does it originate from?' after 'What is it called outside of the USA?' and 'Can women play it?', both
    # rewritten with soccer, whose answers list other sports called football (read 63, ce-76b8e09ec237e017)
    ctx = _ctx(KEPT_TO, 4, block_names={"empire": ["Roman Empire", "Ottoman Empire"]})
    out = _records(FollowupTwins(rival_prefixes=3).generate(ctx))
    assert not [r for r in out if r.needs_clarification and r.provenance["history_source"]["conversation_id"] == "kept"
                and r.provenance["history_source"]["turns"] == 4], [(r.query, r.provenance) for r in out]
    from builder.synthesize.rules.pronoun_reference import PronounReference

    out = _records(PronounReference(prefixes=3).generate(ctx))
    assert not [r for r in out if r.needs_clarification and len(r.history) == 4]


def test_a_human_follow_up_on_the_thing_the_users_rewrites_keep_to_stays_a_hard_negative():
    # 'Why it fall?' in a Byzantine Empire talk whose answers also name Rome: the user's rewrites keep to one empire,
    # so its own history resolves it, as it does for the same-topic positives above.
    ctx = _ctx(KEPT_TO, 4, block_names={"empire": ["Roman Empire", "Ottoman Empire"]})
    outputs = list(FollowupTwins().generate(ctx))
    negatives = [r for r in _records(outputs) if not r.needs_clarification]
    assert len(negatives) == 1 and negatives[0].history == ctx.history, [str(o)[:200] for o in outputs]
    assert not any("leaves 'it' open" in o.reason for o in outputs if not isinstance(o, Record))
