import random
from collections import Counter

from builder.config import SynthesizeConfig
from builder.conversation import Conversation, Passage, Turn
from builder.ingest import ingest
from builder.synthesize import assign_blocks, synthesize
from builder.synthesize import text as tx
import pytest

from builder.config import BuildConfig
from builder.synthesize.base import REGISTRY, Rejection, load_rules, register
from builder.synthesize.context import TurnContext
from builder.synthesize.rules.entity_twins import EntityTwins
from builder.synthesize.rules.followup_twins import FollowupTwins

followup_twins = FollowupTwins().generate
entity_twins = EntityTwins().generate
from builder.record import Record
from builder.validate import validate


def _conv(cid, turns):
    return Conversation(cid, "travel", turns)


def _ctx(conv, turn, donors=(), names=None):
    index = conv.user_turn_indices()[turn - 1]
    return TurnContext(conv, turn, index, 7, "test", list(donors), block_names=names or {})


LAKE = _conv("lake", [
    Turn("user", "Tell me about Lake Tahoe.", [Passage("p1", "Lake Tahoe is a lake in the Sierra Nevada.", "Lake Tahoe", True)],
         rewrite="Tell me about Lake Tahoe."),
    Turn("assistant", "Lake Tahoe is a large freshwater lake in the Sierra Nevada."),
    Turn("user", "How deep is it?", [Passage("p2", "Lake Tahoe is 501 m deep.", "Lake Tahoe", True)], rewrite="How deep is Lake Tahoe?"),
])
RAIL = _conv("rail", [
    Turn("user", "What is the Eurail Global Pass?", [Passage("r1", "The Eurail Global Pass covers 33 countries.", "Eurail Global Pass", True)],
         rewrite="What is the Eurail Global Pass?"),
    Turn("assistant", "A rail pass for many European countries."),
    Turn("user", "Does it cover night trains?", [Passage("r2", "Night trains need a reservation.", "Eurail Global Pass", True)],
         rewrite="Does the Eurail Global Pass cover night trains?"),
])


def test_text_helpers():
    assert tx.added_referent("How deep is it?", "How deep is Lake Tahoe?") == "Lake Tahoe"
    assert tx.has_anaphor("Does it cover night trains?") == "it"
    ent = tx.key_entity("Does the Eurail Global Pass cover night trains?", [], [])
    assert ent.text == "Eurail Global Pass" and ent.head == "pass"
    assert tx.replace_entity("Does the Eurail Global Pass cover night trains?", ent, "the pass") == "Does the pass cover night trains?"


def test_followup_twins_make_a_contrastive_pair():
    out = list(followup_twins(_ctx(LAKE, 2, [RAIL], {"lake": ["Lake Tahoe", "Crater Lake"]})))
    records = [o for o in out if not isinstance(o, Rejection)]
    negative = next(r for r in records if not r.needs_clarification)
    positives = [r for r in records if r.needs_clarification]
    assert negative.category == "hard_negative" and negative.query == "How deep is it?"
    assert negative.resolution["referent"] == "Lake Tahoe" and negative.resolution["turn_index"] in (0, 1)
    assert positives and all(p.query == negative.query and p.pair_id == negative.pair_id for p in positives)
    for p in positives:
        assert "tahoe" not in " ".join(h["content"] for h in p.history).lower(), "self-check: referent not in the stitched history"
        assert p.category == "unresolved_reference"
        assert p.interpretations == ["How deep is Lake Tahoe?", "How deep is Crater Lake?"], "readings name the block's lakes"
        assert p.target["clarification"] != "CLEAR"


def test_followup_positive_needs_named_readings():
    # No other lake in the block or the kind lexicon: no positive with a placeholder reading, a rejection instead.
    out = list(followup_twins(_ctx(LAKE, 2, [RAIL])))
    assert not any(isinstance(o, Record) and o.needs_clarification for o in out)
    assert any(isinstance(o, Rejection) and "fewer than two names" in o.reason for o in out)


def test_positive_rejected_when_every_history_names_the_referent():
    # The only donor mentions Lake Tahoe: the stitched history would resolve "it", so it is not used.
    donor = _conv("donor", [Turn("user", "Is Lake Tahoe cold?"), Turn("assistant", "Lake Tahoe is cold."),
                            Turn("user", "Why?"), Turn("assistant", "Depth."), Turn("user", "ok")])
    out = list(followup_twins(_ctx(LAKE, 2, [donor])))
    for r in out:
        if not isinstance(r, Rejection) and r.needs_clarification:
            assert "tahoe" not in " ".join(h["content"] for h in r.history).lower()


def test_hard_negative_rejected_when_referent_missing_from_history():
    conv = _conv("x", [Turn("user", "Hello there."), Turn("assistant", "Hi."),
                       Turn("user", "How deep is it?", rewrite="How deep is Crater Lake?")])
    out = list(followup_twins(_ctx(conv, 2)))
    assert len(out) == 1 and isinstance(out[0], Rejection)
    assert "not found in the history" in out[0].reason


def test_entity_twins_generalize_with_head_noun():
    ctx = _ctx(RAIL, 2, [LAKE])
    ctx.block_entities = [("Eurail Global Pass", "rail", 1), ("Interrail Pass", "other", 1)]
    out = [o for o in entity_twins(ctx) if not isinstance(o, Rejection)]
    pos = next(r for r in out if r.needs_clarification)
    assert pos.interpretations == ["Does the Eurail Global Pass cover night trains?", "Does the Interrail Pass cover night trains?"]
    neg = next(r for r in out if not r.needs_clarification)
    assert pos.query == neg.query == "Does the pass cover night trains?"
    assert pos.category == "underspecified_entity" and neg.category == "hard_negative"
    assert neg.resolution["referent"] == "Eurail Global Pass"


def test_a_clarification_names_only_candidates_its_record_shows():
    # After an unrelated history (or none) the readings come from the block: the question asks openly
    # ("Which lake do you mean?"), not "Lake Tahoe or Crater Lake?", names the user never saw.
    ctx = _ctx(RAIL, 2, [LAKE])
    ctx.block_entities = [("Eurail Global Pass", "rail", 1), ("Interrail Pass", "other", 1)]
    records = list(entity_twins(ctx)) + list(followup_twins(_ctx(LAKE, 2, [RAIL], {"lake": ["Lake Tahoe", "Crater Lake"]})))
    positives = [r for r in records if isinstance(r, Record) and r.needs_clarification]
    assert len(positives) >= 3
    for r in positives:
        shown = " ".join(h["content"] for h in r.history).lower()
        for name in ("eurail global pass", "interrail pass", "lake tahoe", "crater lake"):
            if name not in shown:
                assert name not in r.target["clarification"].lower(), (r.history, r.target)
        assert r.clarification_pattern == "open"


def test_synthesis_is_deterministic_and_schema_valid():
    convs = ingest(None)
    a = synthesize(convs, SynthesizeConfig(), 13, "demo")
    b = synthesize(list(reversed(convs)), SynthesizeConfig(), 13, "demo")
    ids_a = sorted(r.id for r in a.candidates)
    assert ids_a == sorted(r.id for r in b.candidates), "order of conversations does not matter"
    valid, quarantined = validate([r.to_dict() for r in a.candidates])
    assert not quarantined and len(valid) == len(a.candidates)
    cats = Counter(r.category for r in a.candidates)
    assert cats["hard_negative"] and cats["clear"] and cats["unresolved_reference"] and cats["ill_formed"]
    patterns = Counter(r.clarification_pattern for r in a.candidates if r.needs_clarification)
    assert patterns["hedge"] and patterns["open"]
    c = synthesize(convs, SynthesizeConfig(), 14, "demo")
    assert sorted(r.to_dict()["target"]["clarification"] for r in c.candidates) != sorted(
        r.to_dict()["target"]["clarification"] for r in a.candidates
    ), "the seed changes the rule-based choices"


def test_blocks_stay_within_domain():
    convs = ingest(None)
    blocks = assign_blocks(convs, 2, 13)
    domain = {c.id: c.domain for c in convs}
    for block in set(blocks.values()):
        assert len({domain[c] for c, b in blocks.items() if b == block}) == 1


def test_registry_is_the_one_list_of_generators():
    registry = load_rules()
    assert {"followup_twins", "entity_twins", "fragment_twins", "passage_twins", "standalone_clear"} <= set(registry)
    assert set(SynthesizeConfig().generators) == set(registry), "defaults come from the registry"
    assert SynthesizeConfig().generators["standalone_clear"].rate == registry["standalone_clear"].default_rate
    for name, cls in registry.items():
        assert cls.name == name and cls.version and cls.describe, f"{name}: name, version and describe"


def test_duplicate_generator_name_raises():
    class Twin:
        name, version = "entity_twins", "99"

        def generate(self, ctx):
            return iter(())

    load_rules()
    with pytest.raises(ValueError, match="registered twice"):
        register(Twin)
    assert REGISTRY["entity_twins"] is EntityTwins


def test_config_checks_generator_names_and_options(tmp_path):
    from builder.config import load_config
    from builder.errors import InputError

    bad = tmp_path / "bad.yaml"
    bad.write_text("synthesize:\n  generators:\n    entity_twinz: {rate: 0.5}\n")
    with pytest.raises(InputError, match="entity_twinz.*known: .*entity_twins"):
        load_config(bad)
    bad.write_text("synthesize:\n  generators:\n    standalone_clear: {post_shares: 0.5}\n")
    with pytest.raises(InputError, match="standalone_clear.*post_shares"):
        load_config(bad)
    good = tmp_path / "good.yaml"
    good.write_text("synthesize:\n  generators:\n    standalone_clear: {post_share: 0.0}\n    entity_twins: {enabled: false}\n")
    config = load_config(good).synthesize
    assert config.generators["standalone_clear"].options() == {"post_share": 0.0}
    assert config.generators["followup_twins"].enabled, "a name left out keeps its defaults"
    assert config.generators["standalone_clear"].rate == 0.6, "an option alone keeps the generator's default rate"
    result = synthesize(ingest(None), config, 13, "demo")
    methods = Counter(r.provenance["method"] for r in result.candidates)
    assert not methods["entity_twins"] and methods["followup_twins"]
    assert not any(r.setting == "post_retrieval" for r in result.candidates if r.provenance["method"] == "standalone_clear")
    assert isinstance(BuildConfig().synthesize.generators["passage_twins"].rate, float)


def test_fragments_one_word_is_no_hard_negative_and_positives_are_fresh_chats():
    from builder.synthesize.rules.fragment_twins import FragmentTwins

    out = list(FragmentTwins(positive_share=1.0).generate(_ctx(LAKE, 2, names={"lake": ["Lake Tahoe", "Lake Superior"]})))
    records = [o for o in out if isinstance(o, Record)]
    # 'deep?' is one word: no hard negative after the history, whatever it names.
    assert not [r for r in records if not r.needs_clarification]
    assert any("one-word fragment" in o.reason for o in out if isinstance(o, Rejection))
    positives = [r for r in records if r.needs_clarification]
    assert positives and all(r.history == [] and r.clarification_pattern == "open" for r in positives)


def test_a_fragment_positive_needs_readings_that_agree_and_keep_no_short_form():
    # read 41, ce-3b6eadfca345ea31: 'etfs?' was read 'What are IRA (ETFs)?'
    from builder.synthesize.rules.fragment_twins import FragmentTwins

    names = {"fund": ["Vanguard Total Fund", "Fidelity Contrafund"]}
    for standalone, reason in [("How are Exchange-Traded Funds taxed in a year?", "is plural"),
                               ("How is the Magellan Fund (FMAGX) taxed in a year?", "short form in brackets")]:
        chat = _conv("etf", [Turn("user", standalone, rewrite=standalone)])
        out = list(FragmentTwins(positive_share=1.0).generate(_ctx(chat, 1, names=names)))
        assert not [o for o in out if isinstance(o, Record)], standalone
        assert any(reason in o.reason for o in out if isinstance(o, Rejection)), [o.reason for o in out]
    chat = _conv("etf", [Turn("user", "How is the Magellan Fund taxed in a year?", rewrite="How is the Magellan Fund taxed in a year?")])
    [positive] = [o for o in FragmentTwins(positive_share=1.0).generate(_ctx(chat, 1, names=names)) if isinstance(o, Record)]
    assert "How is the Fidelity Contrafund taxed in a year?" in positive.interpretations


def test_standalone_clear_needs_a_question_or_request():
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    chat = _conv("chat", [Turn("user", "ok, thanks for the summary.", rewrite="ok, thanks for the summary.")])
    out = list(StandaloneClear().generate(_ctx(chat, 1)))
    assert not [o for o in out if isinstance(o, Record)] and "no question or request" in out[0].reason
    asked = list(StandaloneClear().generate(_ctx(LAKE, 1)))
    assert [o for o in asked if isinstance(o, Record)]
    # A keyword query names its topic: people type those, and they are clear.
    keywords = _conv("kw", [Turn("user", "Lake Tahoe water temperature", rewrite="Lake Tahoe water temperature")])
    assert [o for o in StandaloneClear().generate(_ctx(keywords, 1)) if isinstance(o, Record)]
    # One common word names a topic, not a question about it.
    word = _conv("word", [Turn("user", "Clusters", rewrite="Clusters")])
    out = list(StandaloneClear().generate(_ctx(word, 1)))
    assert not [o for o in out if isinstance(o, Record)] and out[0].reason == "standalone form is a single common word"


def test_entity_twins_no_pronoun_twin_after_an_exchange_naming_another_candidate():
    probes = _conv("probes", [
        Turn("user", "Which probes went to Jupiter?", rewrite="Which probes went to Jupiter?"),
        Turn("assistant", "Juno and Galileo are the two most famous."),
        Turn("user", "What are the discoveries made by it at Jupiter?", [Passage("j", "Juno found cyclones at Jupiter's poles.", "Juno", True)],
             rewrite="What are the discoveries made by Juno at Jupiter?"),
    ])
    out = list(entity_twins(_ctx(probes, 2)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("names another candidate for 'it'" in o.reason for o in out if isinstance(o, Rejection))


def _drifting_talk(bicycles: str):
    return _conv("drift", [
        Turn("user", "How many motorcycle crashes are there each year in New York?",
             rewrite="How many motorcycle crashes are there each year in New York?"),
        Turn("assistant", "New York was the first state to require motorcycle helmets."),
        Turn("user", bicycles, rewrite="What are the rules for bicycles in California?"),
        Turn("assistant", "In California, bicyclists may ride on some freeways."),
        Turn("user", "What are the laws for pedestrians in it?", [Passage("ca", "California pedestrians have the right of way.", "California", True)],
             rewrite="What are the laws for pedestrians in California?"),
    ])


def test_entity_twins_no_pronoun_twin_when_the_user_named_another_of_its_kind_and_never_it():
    # reads 56 and 60, ce-b3315bbf03d4113a: the user asked about New York, the answers moved to California; 'it' may
    # mean either, whatever the last answer said.
    out = list(entity_twins(_ctx(_drifting_talk("What about bicycles?"), 3)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("the user's turns name New York, never 'California'" in o.reason for o in out if isinstance(o, Rejection))
    # the user who names California too settles it
    out = list(entity_twins(_ctx(_drifting_talk("What about bicycles in California?"), 3)))
    [negative] = [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert negative.interpretations == ["What are the laws for pedestrians in California?"]


def test_passage_twins_no_pronoun_twin_when_the_user_named_another_of_its_kind_and_never_it():
    # the same talk over California passages (read 56, ce-a36729fdd62e2364)
    from builder.synthesize.rules.passage_twins import PassageTwins

    out = list(PassageTwins().generate(_ctx(_drifting_talk("What about bicycles?"), 3)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("the user's turns name New York, never 'California'" in o.reason for o in out if isinstance(o, Rejection))
    out = list(PassageTwins().generate(_ctx(_drifting_talk("What about bicycles in California?"), 3)))
    assert [o for o in out if isinstance(o, Record) and not o.needs_clarification]


def test_standalone_clear_rejects_a_rewrite_that_leans_on_the_turn_before():
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    yard = _conv("yard", [Turn("user", "What about Residential Yard Waste?", rewrite="What about Residential Yard Waste?")])
    out = list(StandaloneClear().generate(_ctx(yard, 1)))
    assert not [o for o in out if isinstance(o, Record)]
    assert "leans on the turn before" in out[0].reason


def _followup(cid, first, answer, query, rewrite):
    """A first question (its own standalone form), the answer, and the follow-up with its rewrite."""
    return _conv(cid, [Turn("user", first, rewrite=first), Turn("assistant", answer), Turn("user", query, rewrite=rewrite)])


def _no_positive(outputs, reason):
    """No positive record among a generator's outputs, and a rejection that gives `reason`."""
    out = list(outputs)
    assert not [o for o in out if isinstance(o, Record) and o.needs_clarification]
    assert any(isinstance(o, Rejection) and reason in o.reason for o in out)


def test_a_followup_naming_an_alias_of_its_referent_is_no_positive():
    # 'how did I get covid tho...' had been read as COVID-19 or West Nile after an unrelated history: it names
    # COVID-19 by its short name (read 47, ce-97debe46d29261df)
    covid = _followup("covid", "What are the symptoms of COVID-19?", "COVID-19 causes fever and cough.",
                      "how did I get covid tho...", "How did I contract COVID-19?")
    _no_positive(followup_twins(_ctx(covid, 2, [RAIL], {"disease": ["COVID-19", "West Nile"]})), "already names the referent")


def test_a_bare_ordinal_is_neither_clear_nor_a_standalone_question():
    # 'So what is the next after The Office?' had been a clear negative: its rewrite names nothing for 'the next'
    # of the ranking said before (reads 45 and 47, ce-e0a2112ad6d847ca)
    office = _followup("office", "which TV series was the best in history?", "Many name The Office.",
                       "So what is the next after The Office?", "What should I watch next after The Office?")
    out = list(followup_twins(_ctx(office, 2)))
    assert not [o for o in out if isinstance(o, Record)]
    assert any(isinstance(o, Rejection) and "'the next' has no noun" in o.reason for o in out)
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    fresh = _conv("next", [Turn("user", "When is the next?", rewrite="When is the next?")])
    out = list(StandaloneClear().generate(_ctx(fresh, 1)))
    assert not [o for o in out if isinstance(o, Record)] and "'the next' with no noun" in out[0].reason
    other = _conv("orbits", [Turn("user", "What is the difference between an Earth satellite orbit and the other orbits?",
                                  rewrite="What is the difference between an Earth satellite orbit and the other orbits?")])
    out = list(StandaloneClear().generate(_ctx(other, 1)))  # read 49, ce-206614a49df1c53b
    assert not [o for o in out if isinstance(o, Record)] and "'the other ...'" in out[0].reason
    assert tx.bare_ordinal("Who was the first to climb Everest?") is None
    assert tx.bare_ordinal("Is the next release free?") is None


def test_followup_positive_needs_a_question():
    # A quote asks nothing: its own history makes it a hard negative, but no other history makes it a positive.
    quote = _followup("quote", "Tell me about Richard III.", "Richard III is a play by Shakespeare.",
                      "A horse, a horse, my kingdom for a horse!", "A horse, a horse, my kingdom for a horse in Richard III!")
    _no_positive(followup_twins(_ctx(quote, 2, [RAIL], {"play": ["Richard III", "Hamlet"]})), "no question")


def test_a_name_inside_a_longer_name_is_not_swapped():
    query = "what is the great wall of China built out of"
    entity = tx.entities(query)[0]
    assert entity.text == "China"  # 'built' is a participle, not the noun 'China' modifies
    assert tx.inside_longer_name(query, entity, ["The Great Wall of China is built of stone."]) == "The Great Wall of China"
    history = "what is the history of China"
    assert tx.inside_longer_name(history, tx.entities(history)[0], ["The history of China is long."]) is None


def test_a_name_the_question_capitalises_around_another_is_not_swapped():
    # 'Can you tell me more about the Office of it?' (ce-1d6636580e8cb025) was a hard negative made from 'the Office of
    # the New York State Attorney General': the question itself says the longer name, whatever its passages say.
    query = "Can you tell me more about the Office of the New York State Attorney General?"
    entity = next(e for e in tx.entities(query) if "Attorney General" in e.text)
    assert tx.inside_longer_name(query, entity, []) == "Office of the New York State Attorney General"
    # A capital that only opens the question, or a lowercase noun, is no name around it.
    for plain in ("History of the Roman Empire?", "What is the population of China?"):
        assert tx.inside_longer_name(plain, tx.entities(plain)[-1], []) is None


def test_a_possessive_name_becomes_one_thing_of_its_kind():
    query = "What are the penalties for not following Alameda County's three mandatory recycling ordinances?"
    entity = tx.key_entity(query, [], [])
    assert tx.generic_phrase(entity) == "the county"
    assert tx.replace_entity(query, entity, tx.generic_phrase(entity)).endswith("following the county's three mandatory recycling ordinances?")


def test_no_generic_phrase_beside_a_name_that_says_which():
    from builder.synthesize.rules.passage_twins import PassageTwins

    moon = _conv("moon", [
        Turn("user", "What is the surface of Jupiter's Moon, Europa, like?",
             [Passage("m1", "Jupiter's Moon, Europa, has an icy surface.", "Europa", True)],
             rewrite="What is the surface of Jupiter's Moon, Europa, like?"),
    ])
    out = list(PassageTwins().generate(_ctx(moon, 1)))
    assert not [o for o in out if isinstance(o, Record)]
    assert any("is one of a list" in o.reason for o in out if isinstance(o, Rejection))


def test_no_generic_phrase_for_one_side_of_a_comparison():
    from builder.synthesize.rules.entity_twins import EntityTwins

    # 'What is the difference between soccer and the sport?' was a positive (read 65, ce-3b330be0494c4bf7).
    sport = _conv("sport", [
        Turn("user", "What is the difference between soccer and American football?",
             [Passage("f1", "American football is a team sport played with an oval ball.", "American football", True)],
             rewrite="What is the difference between soccer and American football?"),
    ])
    out = list(EntityTwins().generate(_ctx(sport, 1)))
    assert not [o for o in out if isinstance(o, Record)]
    assert any("is one of a list" in o.reason for o in out if isinstance(o, Rejection))


def test_one_of_list_tells_a_list_from_a_clause():
    def member(text, name):
        start = text.index(name)
        return tx.one_of_list(text, tx.Entity(name, None, start, start + len(name)))

    assert member("Should I choose an IRA or a 401K?", "IRA")
    assert member("What is the difference between soccer and American football?", "American football")
    assert member("What are the differences among Fixed, Metered, and Reserved charges?", "Fixed")
    assert member("How do I compost in Madison County, NY?", "Madison County")
    # A clause after 'and' or a comma joins two questions or adds a condition, not a second thing.
    assert not member("What is the latest version of Carthage and where can I download it?", "Carthage")
    assert not member("What are spring and fall like in North Carolina, given that winters are cold?", "North Carolina")
    assert not member("Agriculture seems very significant in India, doesn't it?", "India")


def _fragment_after(answer, first, passage, rewrite):
    """fragment_twins' outputs (no positives) for a turn whose rewrite is `rewrite`, after `first` and `answer`;
    `passage` is (id, text, title) of the turn's relevant passage."""
    from builder.synthesize.rules.fragment_twins import FragmentTwins

    conv = _conv("frag", [
        Turn("user", first, rewrite=first),
        Turn("assistant", answer),
        Turn("user", "?", [Passage(*passage, True)], rewrite=rewrite),
    ])
    return list(FragmentTwins(positive_share=0.0).generate(_ctx(conv, 2)))


@pytest.mark.parametrize("first, passage, rewrite, lacking, reason, saying", [
    # the history must say what the fragment dropped: 'Persia' of 'military campaigns?'
    ("Tell me about the Byzantine Empire.", ("b1", "The Byzantine Empire fought many wars.", "Byzantine Empire"),
     "What military campaigns did the Byzantine Empire fight against Persia?",
     "The Byzantine Empire ruled from Constantinople.", "drops 'persia'", "The Byzantine Empire fought Persia for centuries."),
    # and what the question asks of it: 'house chores?' of 'Could the water ... be recycled and used in house chores
    # like cleaning and gardening?' after a talk that says nothing of reuse (read 50, ce-bea65a5050567b3d)
    ("Where does the water of the Hudson River go?", ("h1", "The Hudson River flows into the Atlantic.", "Hudson River"),
     "Could the water of the Hudson River be recycled and used in house chores like cleaning and gardening?",
     "The Hudson River flows into the Atlantic.", "drops what the question asks",
     "Hudson River water is recycled and used for cleaning and gardening in the valley."),
])
def test_a_fragment_is_no_hard_negative_when_the_history_lacks_what_it_dropped(first, passage, rewrite, lacking, reason, saying):
    def out(answer):
        return _fragment_after(answer, first, passage, rewrite)
    lacked = out(lacking)
    assert not [o for o in lacked if isinstance(o, Record)]
    assert any(reason in o.reason for o in lacked if isinstance(o, Rejection))
    assert [o for o in out(saying) if isinstance(o, Record) and o.category == "hard_negative"]


def test_a_fragment_of_words_the_user_already_typed_is_no_hard_negative():
    # 'garbage collection?' of 'Could you clarify the service rate for garbage collection?' after the user asked
    # about paying for garbage collection: it re-says the talk, and the service rate it asks about is gone
    # (reads 50 and 54, ce-08492a32bb1e2f64). Typed by the assistant only, the words are a follow-up.
    passage = ("g1", "Service rates are based on the size of your garbage cart.", "Service rates")
    rewrite = "Could you clarify the service rate for garbage collection?"
    answer = "Yes, the service rate depends on the size of your cart; garbage collection is weekly."
    typed = _fragment_after(answer, "Do I need to pay for garbage collection?", passage, rewrite)
    assert not [o for o in typed if isinstance(o, Record)]
    assert any("already typed every word" in o.reason for o in typed if isinstance(o, Rejection))
    heard = _fragment_after(answer, "Do I need to pay for this?", passage, rewrite)
    assert [o.query for o in heard if isinstance(o, Record) and o.category == "hard_negative"] == ["garbage collection?"]


def test_passage_twins_hard_negative_needs_the_turns_own_history():
    from builder.synthesize.rules.passage_twins import PassageTwins

    river = [Passage("r1", "The Penobscot River is 109 miles long.", "Penobscot River", True)]
    first = _conv("river", [Turn("user", "How long is the Penobscot River?", river, rewrite="How long is the Penobscot River?")])
    out = list(PassageTwins().generate(_ctx(first, 1)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("no history" in o.reason for o in out if isinstance(o, Rejection))
    later = _conv("river2", [
        Turn("user", "Tell me about the Penobscot River.", rewrite="Tell me about the Penobscot River."),
        Turn("assistant", "The Penobscot River flows through Maine."),
        Turn("user", "How long is it?", river, rewrite="How long is the Penobscot River?"),
    ])
    negatives = [o for o in PassageTwins().generate(_ctx(later, 2)) if isinstance(o, Record) and not o.needs_clarification]
    assert negatives and all(r.history and r.setting == "post_retrieval" for r in negatives)
    # The user's named question switched topic: the talk was about another river, and only the passages say which
    # (read 31, ce-123d51f50fcf87dd). No hard negative.
    switched = _conv("river3", [
        Turn("user", "Tell me about the Kennebec River.", rewrite="Tell me about the Kennebec River."),
        Turn("assistant", "The Kennebec River flows through Maine."),
        Turn("user", "How long is the Penobscot River?", river, rewrite="How long is the Penobscot River?"),
    ])
    out = list(PassageTwins().generate(_ctx(switched, 2)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("the passages alone would switch the topic" in o.reason for o in out if isinstance(o, Rejection))


def test_names_do_not_cross_lines_or_start_with_a_sentence_word():
    # a passage's title line and its first sentence are two texts, not one name
    assert tx.names_in("1996\nThe Defense of Marriage Act was passed.") == ["Defense of Marriage Act"]
    # 'Understanding' opens a sentence: no name, and it takes no noun with it
    assert tx.names_in("Prices change. Understanding bond prices helps.") == []
    # a gerund-looking name the text capitalizes mid-sentence stays a name
    assert tx.names_in("Towards the end of the Ming, the wall grew.") == ["Ming"]


def test_a_name_spaced_around_its_hyphen_is_one_name():
    # MTRAG's Wikipedia passages are tokenized: 'All - Star Game' is the All-Star Game, not a 'Star Game'
    text = "Each summer the All - Star Game placed a team of MLS players against a club."
    assert tx.named_of_kind(text, "game") == ["All-Star Game"]
    assert "Star Game" not in tx.names_in(text)


def test_a_name_of_no_kind_takes_the_kind_noun_after_it():
    text = "It offers a no-cost Trial plan, Standard Next plan, and more."
    assert tx.named_of_kind(text, "plan") == ["Trial plan", "Standard Next plan"]
    assert tx.names_in("The Penobscot River valley is green.") == ["Penobscot River"]  # it has its own kind


def test_entity_twins_no_kind_twin_after_an_exchange_naming_another_of_the_kind():
    accounts = _conv("accounts", [
        Turn("user", "don't know if I go with IRA or 401K...", rewrite="Should I go with an IRA or a 401K account?"),
        Turn("assistant", "A 401K account or an IRA account is a retirement account; a 401K has higher limits."),
        Turn("user", "How much can I accumulate in it?", [Passage("k", "A 401K account has a yearly limit.", "401K", True)],
             rewrite="How much can I accumulate in the 401K account?"),
    ])
    out = list(entity_twins(_ctx(accounts, 2)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("names another account: IRA" in o.reason for o in out if isinstance(o, Rejection))


def test_entity_twins_no_kind_twin_after_an_exchange_naming_a_lower_case_thing_of_the_kind():
    # 'What is the treatment for the disease?' right after an answer naming sickle cell disease and, in lower case,
    # tuberculosis and leukemia: the disease is open (read 64, ce-5dc9a3b7f688b295)
    marrow = _conv("marrow", [
        Turn("user", "What happens if bone marrow fails?", rewrite="What happens if bone marrow fails?"),
        Turn("assistant", "It can come from infections like tuberculosis, from leukemia, or, in sickle cell disease, "
                          "from the destruction of red cells."),
        Turn("user", "What is the treatment for it?",
             [Passage("s", "Sickle cell disease is treated with hydroxyurea.", "Sickle cell disease", True)],
             rewrite="What is the treatment for Sickle cell disease?"),
    ])
    out = list(entity_twins(_ctx(marrow, 2)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("names another disease: tuberculosis" in o.reason for o in out if isinstance(o, Rejection)), out

def test_a_referent_is_a_thing_not_a_verb():
    assert tx.added_referent("When was it found?", "When was the Byzantine Empire founded?") == "Byzantine Empire"
    assert tx.added_referent("Oops, no return result...", "Will there be a return result using this SDK?") == "SDK"
    assert tx.added_referent("Is there a cure for HIV?", "Is there a cure available for HIV?") is None
    cure = _conv("cure", [
        Turn("user", "What is HIV?", rewrite="What is HIV?"),
        Turn("assistant", "HIV is a virus that attacks the immune system."),
        Turn("user", "Is there a cure for HIV?", rewrite="Is there a cure available for HIV?"),
    ])
    out = [o for o in followup_twins(_ctx(cure, 2)) if isinstance(o, Record)]
    # the rewrite adds only a verb: the human question is clear as it stands, with no resolution to point at
    assert out and all(not r.needs_clarification and r.category == "clear" and r.resolution is None for r in out)


def test_no_pronoun_after_the_kind_noun_before_a_name():
    from builder.synthesize.generic import generalize

    probe = _conv("probe", [
        Turn("user", "Which probes went to Jupiter?", rewrite="Which probes went to Jupiter?"),
        Turn("assistant", "Galileo orbited Jupiter."),
        Turn("user", "What did it find?", [Passage("g", "Galileo found water under Europa's ice.", "Galileo", True)],
             rewrite="What are the major discoveries made by the spacecraft Galileo?"),
    ])
    got = generalize(_ctx(probe, 2), "test")
    assert isinstance(got, Rejection) and "a pronoun there is ungrammatical" in got.reason  # not 'the spacecraft it'


def test_a_rival_passage_of_another_kind_is_no_reading_of_the_kind_phrase():
    from builder.synthesize.generic import generalize
    from builder.synthesize.rules.passage_twins import _aspect_rivals

    mine = [Passage("a", "The Appalachian Mountains run through western North Carolina.", "Appalachian Mountains", True)]
    asked = _conv("nc", [Turn("user", "What about the mountains?", mine,
                             rewrite="What can you tell me about the Appalachian Mountains in North Carolina?")])
    other = _conv("other", [Turn("user", "Tell me about North Carolina.", [
        Passage("r", "The American Revolution in North Carolina: what historians tell of the war there.", "American Revolution", True),
        Passage("b", "The Great Smokies: what hikers tell of the mountains in North Carolina.", "Great Smokies", True),
        # read 69, ce-ddef5fc05a2bd90a: a title over a passage that never says the kind was a reading of it
        Passage("h", "Blue Ridge Parkway: what rangers tell of the peaks in North Carolina.", "Blue Ridge Parkway", True),
        Passage("k", "Rock Climbing: what climbers tell of the mountains in North Carolina.", "Rock Climbing", True),
        # read 43, ce-06444df9bafca0b6: 'the Climate of North Carolina in North Carolina' was a reading
        Passage("c", "Climate of North Carolina: what forecasters tell of the mountains in North Carolina.",
                "Climate of North Carolina", True),
    ], rewrite="Tell me about North Carolina.")])
    ctx = _ctx(asked, 1)
    got = generalize(ctx, "test")
    assert not isinstance(got, Rejection) and got.entity.head == "mountain"
    names = [name for name, _, _ in _aspect_rivals(ctx, got, mine, [_ctx(other, 1)])]
    assert "Great Smokies" in names and "American Revolution" not in names and "Blue Ridge Parkway" not in names
    assert "Rock Climbing" not in names  # an activity, whatever its passage says
    assert "Climate of North Carolina" not in names  # the query already says North Carolina
    assert tx.same_thing("soccer", "association football")  # one sport, one reading (read 15)


def test_a_nationality_before_a_common_noun_is_no_name():
    # 'What actions did Indian economy take?' (read 17): 'Indian economy' is no thing to pick
    assert tx.names_in("The Indian economy grew while Lord Linlithgow ruled.") == ["Lord Linlithgow"]
    assert tx.is_name("Korean War", "war") and tx.is_name("Qi wall", "wall") and tx.is_name("Japan Rail Pass", "pass")
    assert tx.is_name("401K account", "account") and tx.is_name("American football", "sport")  # a lexicon name


def test_an_adjective_that_opens_a_name_keeps_the_name():
    # 'new' is kept out of keyword fragments with the verbs, but 'New York' is a state: a talk naming it and
    # California names two states, not one.
    from builder.synthesize.rules.retrieved_passages import _good_name

    assert tx.is_name("New York", "state") and tx.is_name("New England Patriots", "team") and _good_name("New York")
    assert tx.names_in("The rules differ between New York and California.") == ["New York", "California"]
    assert not tx.is_name("new Roth IRA", "account") and not _good_name("Get Started")  # no name; a heading's verb


def test_one_thing_named_short_and_long_is_one_reading():
    # A talk about one boating certificate calls it three ways; 'the certificate' after it is no choice among them.
    assert tx.same_thing("NY safety certificate", "New York State Boating Safety Certificate")
    assert tx.same_thing("New York Safe Boating Certificate", "New York State Boating Safety Certificate")
    assert not tx.same_thing("Causeway VA Clinic", "Maplewood VA Clinic") and not tx.same_thing("Roman Empire", "Holy Roman Empire")
    assert not tx.same_thing("IBM Cloud service", "IBM Cloud Secrets Manager service")  # the maker's name names no product


def test_a_lone_adjective_of_a_name_is_no_name_of_the_kind():
    # 'film adaptations of Shakespearean play' was a reading of 'the play' (read 28, ce-65b3ecbb7a61c048)
    from builder.conversation import Conversation, Passage, Turn
    from builder.synthesize.context import names_by_kind

    ask = "What is the most popular Shakespearean play?"
    conv = Conversation("sh", "clapnq", [Turn("user", ask, [Passage("p", "Hamlet is the most popular Shakespearean play.",
                                                                   "Hamlet", True)], rewrite=ask)])
    assert not tx.is_name("Shakespearean", "play") and "Shakespearean play" not in names_by_kind([conv]).get("play", [])
    assert tx.is_name("English", "language") and tx.is_name("Roman Empire", "empire")  # a lexicon name; a name with its kind


def test_a_medium_or_genre_word_before_the_kind_is_no_name():
    # 'Which Comedy Series is the best in history?' and '... The TV series?' were readings (read 22): an
    # award's 'Outstanding Comedy Series' and 'TV series' say what kind of show, not which one.
    from builder.synthesize.rules.retrieved_passages import _good_name

    assert not tx.is_name("TV series", "series") and not tx.is_name("Comedy Series", "series")
    assert tx.is_name("Office series", "series") and tx.is_name("Korean War", "war")
    assert not _good_name("Comedy Series") and not _good_name("TV Series") and _good_name("Arrested Development")
    assert "Comedy Series" not in tx.named_of_kind("It won the Emmy for Outstanding Comedy Series, like Friends.", "series")


def test_a_type_asked_about_with_a_or_an_is_not_made_generic():
    from builder.synthesize.generic import generalize

    lite = _conv("lite", [Turn("user", "What is a Lite account in IBM Cloud?", rewrite="What is a Lite account in IBM Cloud?")])
    got = generalize(_ctx(lite, 1), "test")  # 'What is the account in IBM Cloud?' asks something else
    assert isinstance(got, Rejection) and "'What is a Lite account' asks what a type is" in got.reason
    plan = _conv("plan", [Turn("user", "What does the Lite plan include?", rewrite="What does the Lite plan include?")])
    assert not isinstance(generalize(_ctx(plan, 1), "test"), Rejection)
    # 'How many types of the plans does IBM Cloud offer?' asks about plans in general (read 28, ce-bc1d8344c1828f7f)
    kinds = "How many types of Lite plans does IBM Cloud offer?"
    got = generalize(_ctx(_conv("types", [Turn("user", kinds, rewrite=kinds)]), 1), "test")
    assert isinstance(got, Rejection) and "'types of Lite plans' asks about sorts of the kind" in got.reason


def test_a_name_written_with_the_keeps_it_in_a_reading():
    # 'What is the size of Sun?' (read 17)
    assert tx.substitute("What is the size of that star?", "that star", "Sun") == "What is the size of the Sun?"
    assert tx.substitute("How big is it?", "it", "Sun") == "How big is the Sun?"
    assert tx.substitute("How big is the star?", "the star", "Sirius") == "How big is Sirius?"


def test_a_clarification_names_the_options_when_they_are_known():
    # 'Which empire do you mean?' when the history names three empires (read 17): the guide's bar 3
    import random

    from builder.synthesize.clarify import clarification

    for seed in range(40):
        question, pattern = clarification("kind", random.Random(seed), options=["Roman Empire", "Byzantine Empire"],
                                          head="empire", heads="empires")
        assert pattern != "open" and "Roman Empire" in question and "Byzantine Empire" in question
    assert {clarification("kind", random.Random(s), options=[], head="empire", heads="empires")[1]
            for s in range(10)} == {"open"}


def test_the_lexicon_holds_words_as_written():
    # YAML 1.1 reads 'on' and 'no' as booleans: they were missing from the stopwords ('taxes on' was a referent)
    assert {"on", "no"} <= tx.stopwords()
    assert tx.kind_of("Carthage") is None  # a package manager in the IBM Cloud docs, not a city there
    assert "529" in tx.kind_lexicon() and tx.added_referent("Investments?", "What about taxes on investments?") == "taxes"


def test_a_list_of_names_joined_by_and_names_each():
    # 'Spain, Italy, Portugal and Greece' offers four countries, not two (read 17)
    text = "I do not know whether Spain, Italy, Portugal and Greece are still in recession."
    assert tx.named_of_kind(text, "country") == ["Spain", "Italy", "Portugal", "Greece"]
    assert tx.names_in("He joined Procter and Gamble in 1990.") == ["Procter and Gamble"]  # one name



def test_a_discourse_word_opening_a_sentence_is_no_name():
    text = "Credit Karma shows your score. However, lenders use FICO. Therefore, check both."
    assert tx.names_in(text) == ["Credit Karma", "FICO"]


def test_an_office_titled_general_is_no_general():
    # 'Office of the general press conference' (read 17) came from 'New York State Attorney General'
    assert tx.head_of("New York State Attorney General") is None and tx.head_of("Surgeon General") is None
    assert tx.head_of("Roman general") == "general"


def test_a_bare_pronoun_follow_up_is_no_positive_after_an_unrelated_history():
    # 'How deep is it?' after a talk of rail passes asks about the pass: only the fresh chat leaves 'it' open
    out = list(followup_twins(_ctx(LAKE, 2, [RAIL], {"lake": ["Lake Tahoe", "Crater Lake"]})))
    positives = [r for r in out if isinstance(r, Record) and r.needs_clarification]
    assert positives and all(not p.history for p in positives)
    assert any(isinstance(o, Rejection) and "reads as about that history's topic" in o.reason for o in out)
    assert tx.bare_pronoun("how is that calculated?") == "that" and tx.bare_pronoun("What about that game?") is None


def test_entity_twins_read_with_the_domains_names_when_the_block_has_none_in_a_fresh_chat_only():
    ctx = _ctx(RAIL, 2, [LAKE])
    ctx.block_entities = [("Eurail Global Pass", "rail", 1)]  # no other pass in the block
    ctx.domain_names = {"pass": ["Eurail Global Pass", "Interrail Pass"]}
    out = [o for o in entity_twins(ctx) if isinstance(o, Record)]
    positives = [r for r in out if r.needs_clarification]
    assert positives and all(not r.history for r in positives)  # no topic switch on names from outside the block
    assert positives[0].interpretations == ["Does the Eurail Global Pass cover night trains?", "Does the Interrail Pass cover night trains?"]


def test_one_name_typed_two_ways_is_one_reading():
    assert tx.same_thing("MSL All-Star game", "MLS All-Star Game")  # read 18: the user's misspelling
    assert not tx.same_thing("Type 1 diabetes", "Type 2 diabetes") and not tx.same_thing("North Carolina", "South Carolina")
    assert tx.same_thing("COVID-19", "Covid") and tx.same_thing("NASA’s Europa Clipper mission", "Europa Clipper mission")
    # 'What are the treatments for the disease?' was read as COVID-19 and as Coronavirus Disease (ce-159c6f2be2f820a9):
    # the disease's long name is one reading with its short one.
    assert tx.same_thing("COVID-19", "Coronavirus Disease") and tx.same_thing("Coronavirus Disease 2019", "Covid")
    # ... said as people say it, and found in the turn that says it by its other name.
    from builder.synthesize.context import resolving_turn

    assert tx.kind_named("COVID-19", "disease") == "COVID-19" and tx.kind_named("Rome", "empire") == "Roman Empire"
    talk = [{"role": "user", "content": "What are the treatments for COVID-19?"}, {"role": "assistant", "content": "Rest."}]
    assert resolving_turn(talk, "Coronavirus Disease") == 0
    assert not tx.same_thing("Western Roman Empire", "Eastern Roman Empire") and not tx.same_thing("Key Protect", "Key Project")


def test_no_generic_phrase_before_a_name_in_brackets():
    from builder.synthesize.generic import generalize

    vpc = _conv("vpc", [Turn("user", "What are the benefits of using Virtual Private Cloud (VPC)?",
                             rewrite="What are the benefits of using Virtual Private Cloud (VPC)?")])
    got = generalize(_ctx(vpc, 1), "test")  # 'the cloud (VPC)' still names it (read 18)
    assert isinstance(got, Rejection) and "a name in brackets follows" in got.reason


def test_an_attribute_is_no_kind():
    # 'Could you explain what version is?' (from 'what Spark version is', build of read 18)
    assert tx.head_of("Spark version") is None


def test_a_keyword_fragment_is_a_run_of_adjacent_words_a_person_would_type():
    assert tx.keyword_fragment("What is the annual fee of the Horizon Card?", "Horizon Card") == "annual fee?"
    # not 'parts world?' (read 18's 'steps career?' kind): two words from across the question
    assert tx.keyword_fragment("How does the storm drain work in other parts of the world?", "storm drain") == "parts?"
    assert tx.keyword_fragment("Does Germany have a strong economy?", "Germany") == "strong economy?"


def test_a_keyword_fragment_keeps_the_head_of_its_noun_phrase():
    # 'popular historical?' (read 19) for "What was Shakespeare's most popular historical play?"
    assert tx.keyword_fragment("What was Shakespeare's most popular historical play?", "Shakespeare") == "historical play?"


def test_entity_twins_no_positive_when_the_query_still_names_what_singles_the_entity_out():
    from builder.synthesize.corpus import Corpus

    wall = _conv("wall", [
        Turn("user", "When did the Berlin Wall come down?",
             [Passage("w1", "The Berlin Wall came down in 1989.", "Berlin Wall", True)], rewrite="When did the Berlin Wall come down?"),
        Turn("assistant", "In November 1989."),
        Turn("user", "Who led East Germany when it came down?",
             [Passage("w2", "Egon Krenz led East Germany when the Berlin Wall fell.", "Berlin Wall", True)],
             rewrite="Who was in charge of East Germany when the Berlin Wall came down?"),
    ])
    pool = _conv("pool", [Turn("user", "Tell me about East Germany.", [
        Passage("g1", "East Germany built the Berlin Wall in 1961.", "East Germany"),
        Passage("g2", "The Berlin Wall divided East Germany from West Berlin.", "Berlin Wall"),
        Passage("g3", "Hadrian's Wall is a wall in England.", "Hadrian's Wall"),
    ])])
    names = {"wall": ["Berlin Wall", "Hadrian's Wall"]}
    base = TurnContext(wall, 2, wall.user_turn_indices()[1], 7, "test", [RAIL], block_names=names)
    assert [r for r in entity_twins(base) if isinstance(r, Record) and r.needs_clarification]  # no pool: asked
    ctx = TurnContext(wall, 2, wall.user_turn_indices()[1], 7, "test", [RAIL], block_names=names,
                      corpus=Corpus.from_conversations([wall, pool]))
    out = list(entity_twins(ctx))
    records = [r for r in out if isinstance(r, Record)]
    assert records and not [r for r in records if r.needs_clarification]  # East Germany says which wall, in any chat
    assert any(isinstance(o, Rejection) and "still names 'East Germany'" in o.reason for o in out)
    assert [r.query for r in records] == ["Who was in charge of East Germany when the wall came down?"]  # the hard negative


def test_a_page_title_that_is_an_instruction_is_no_rival_name():
    from builder.synthesize.generic import good_name

    # read 20: 'File a complaint' (a page of the Attorney General's site) was offered as an office
    assert not good_name("File a complaint")
    assert good_name("Lord of the Rings") and good_name("Penobscot River")


def test_an_acronym_before_several_nouns_gets_no_kind_from_them():
    # 'Is storage included in this volume hourly price?' for the VPC (read 20, ce-8278121b27da6c41)
    vpc = ["Attach a VPC volume to the VPC instance.", "The VPC volume is encrypted; the VPC subnet is not."]
    assert tx.kind_in_text("VPC", vpc) is None
    assert tx.kind_in_text("NodeSync", ["Start the NodeSync service.", "The NodeSync service runs daily."]) == "service"


def test_entity_twins_no_pronoun_negative_when_the_last_exchange_names_another_topic():
    # 'What is the meaning of it in this context?' for the VPC three turns back (read 20, ce-bb8b7fcf67ed700f)
    talk = _conv("enc", [
        Turn("user", "What is data encryption?", rewrite="What is data encryption?"),
        Turn("assistant", "In IBM Cloud VPC, data encryption protects block storage volumes."),
        Turn("user", "Is it the same as a backup?", rewrite="Is data encryption the same as a backup?"),
        Turn("assistant", "No, encryption hides data; a backup is a protected copy of it."),
        Turn("user", "What is the meaning of it in this context?", rewrite="What is the meaning of VPC in this context?"),
    ])
    out = list(entity_twins(_ctx(talk, 3)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("the last exchange does not name 'VPC'" in o.reason for o in out if isinstance(o, Rejection))
    recent = _conv("enc2", talk.turns[:3] + [Turn("assistant", "No; IBM Cloud VPC keeps backups apart."), talk.turns[4]])
    negatives = [o for o in entity_twins(_ctx(recent, 3)) if isinstance(o, Record) and not o.needs_clarification]
    assert [r.query for r in negatives] == ["What is its meaning in this context?"]


def test_a_sort_of_thing_after_a_or_an_gets_no_resolved_twin():
    # 'Could you explain what the satellite orbit is?' as a hard negative (read 20, ce-c29043a13e581993): the user
    # asked about a sort of thing, so no history resolves 'the satellite' to what they meant
    from builder.synthesize.generic import generalize
    from builder.synthesize.rules.passage_twins import PassageTwins

    passage = Passage("o", "An Earth satellite orbit can be low or geostationary.", "Earth satellite orbits", True)
    orbit = _conv("orbit", [
        Turn("user", "Which Earth satellite maps the poles?", rewrite="Which Earth satellite maps the poles?"),
        Turn("assistant", "A polar Earth satellite does."),
        Turn("user", "Could you explain what an Earth satellite orbit is?", [passage],
             rewrite="Could you explain what an Earth satellite orbit is?"),
    ])
    got = generalize(_ctx(orbit, 2), "test")
    assert got.query == "Could you explain what the satellite orbit is?" and got.indefinite == "an Earth satellite"
    for generate in (entity_twins, PassageTwins().generate):
        out = list(generate(_ctx(orbit, 2)))
        assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
        assert any("'an Earth satellite' names no one thing" in o.reason for o in out if isinstance(o, Rejection))
    fund = _conv("fund", [Turn("user", "Can I work for a FAANG?", rewrite="Can I work for a FAANG?")])
    assert "names no one thing for a pronoun" in generalize(_ctx(fund, 1), "test").reason  # not 'work for it'


def test_a_pronoun_takes_a_subject_name_before_a_verb_but_not_a_person_or_a_name_with_a_common_noun():
    from builder.synthesize.generic import generalize

    def made(rewrite, passages=()):
        conv = _conv("c", [Turn("user", rewrite, list(passages), rewrite=rewrite)])
        got = generalize(_ctx(conv, 1), "test")
        return got if isinstance(got, Rejection) else got.query

    assert made("When was Carthage founded as a city?") == "When was it founded as a city?"  # "founded": no noun it modifies
    assert made("Is Richard III historically accurate?") == "Is it historically accurate?"
    empire = "When was the Byzantine Empire reorganized?"
    assert not tx.modifies_noun(empire, tx.key_entity(empire, [], []))  # pronoun_reference's 'When was it reorganized?'
    assert "modifies a noun" in made("Is storage included in the VPC hourly price?").reason
    assert "is a person" in made("How was Jennifer Aniston introduced in Friends?").reason  # a lexicon actress
    assert "ends in a common noun" in made("Do NASA scientists currently plan to send spacecraft to Jupiter?").reason
    assert "ends a noun phrase" in made("which FAANG pays the most?").reason  # not 'which it pays the most?'
    assert [e.text for e in tx.entities("How much does FAANG pay?")] == ["FAANG"]
    assert [e.text for e in tx.entities("Where did FAANG pays go?")] == ["FAANG"]  # 'pays' is no noun


def test_a_rival_name_ending_in_a_lowercase_word_ends_in_a_kind_noun():
    from builder.synthesize.generic import good_name

    assert good_name("Lite plan") and good_name("Red Hat OpenShift")
    assert not good_name("Jupiter's cyclones") and not good_name("Friends air")


def test_a_reading_with_another_name_fits_its_article():
    from builder.synthesize.generic import generalize, with_referent

    lite = _conv("lite", [Turn("user", "How much can I store in a Lite account?", rewrite="How much can I store in a Lite account?")])
    got = generalize(_ctx(lite, 1), "test")
    assert got.query == "How much can I store in the account?"
    assert with_referent(got, "Enterprise account") == "How much can I store in an Enterprise account?"


def test_a_reading_with_another_name_keeps_the_possessive_and_the_article_the_name_takes():
    # read 29: "the Roman Empire conversion" (ce-5d767f2a8fd29d41), "Are they all by IRS?" (ce-6a8a4db9da4fe84b)
    from builder.synthesize.clarify import clarification
    from builder.synthesize.generic import generalize, with_referent

    q = "What was the timeline for the Byzantine Empire's conversion to Catholicism?"
    empire = _conv("empire", [Turn("user", q, rewrite=q)])
    got = generalize(_ctx(empire, 1), "test")
    assert with_referent(got, "Roman Empire") == "What was the timeline for the Roman Empire's conversion to Catholicism?"
    assert tx.in_running_text("IRS", "agency") == "the IRS" and tx.in_running_text("NASA", "agency") == "NASA"
    assert tx.in_running_text("Roth IRA", "account") == "the Roth IRA" and tx.in_running_text("IBM", "company") == "IBM"
    assert not tx.takes_the("How do I open an ", "Roth IRA", "account")  # 'an IRA' -> 'a Roth IRA', not 'the'
    question, _ = clarification("entity", random.Random(0), options=["Roth IRA", "401K account"], head="account",
                                heads="accounts")
    assert "the Roth IRA" in question and "the 401K account" in question, question


def test_a_reading_with_a_name_said_bare_drops_the_kind_phrases_article():
    # read 33: 'cotton from the North Carolina', 'the NASA's Deep Impact Extended Mission'
    from builder.synthesize.generic import generalize, with_referent

    q = "What is the goal of the Deep Impact mission?"
    got = generalize(_ctx(_conv("impact", [Turn("user", q, rewrite=q)]), 1), "test")
    assert got.query == "What is the goal of the mission?"
    assert with_referent(got, "NASA's Europa Clipper mission") == "What is the goal of NASA's Europa Clipper mission?"
    assert with_referent(got, "Europa Clipper") == "What is the goal of Europa Clipper?"
    assert with_referent(got, "Juno mission") == "What is the goal of the Juno mission?"  # a kind noun keeps 'the'
    assert tx.in_running_text("NASA's Deep Impact Extended Mission", "mission") == "NASA's Deep Impact Extended Mission"
    q = "Can you give a summary of this Deep Impact mission?"
    got = generalize(_ctx(_conv("impact2", [Turn("user", q, rewrite=q)]), 1), "test")
    assert with_referent(got, "NASA's Juno mission") == "Can you give a summary of NASA's Juno mission?"


def test_a_name_and_a_part_of_it_with_the_kind_noun_after_are_one_thing():
    # read 29, ce-7b03987bb9cefff2: 'the Europa Clipper' and 'the Clipper spacecraft' were two readings
    assert tx.same_thing("Europa Clipper", "Clipper spacecraft")
    # a lower-case word that is no kind noun is no short form: the Indian Ocean is not the Indian economy
    assert not tx.same_thing("Indian Ocean", "Indian economy")
    assert not tx.same_thing("Roman Empire", "Holy Roman Empire")  # the kind noun is part of both names
    assert not tx.same_thing("Juno spacecraft", "Europa Clipper") and not tx.same_thing("Lite plan", "Lite Enterprise plan")


def test_a_which_question_joins_its_options_with_or_and_names_take_their_article():
    # read 21, ce-c120b12b83767558: 'Which league do you have in mind: NHL, NBA and Major League Soccer?',
    # readings 'in Premier League'
    from builder.synthesize.clarify import conjunction

    assert conjunction("Which {head} do you have in mind: {options}?") == "or"
    assert conjunction("There are several {heads} you could be asking about, like {options}. Which one?") == "and"
    assert tx.substitute("How many teams are in the league?", "the league", "Premier League") == \
        "How many teams are in the Premier League?"
    assert tx.with_the("Which is the most popular ") == "Which is the most popular "  # not '... popular the ...'


def test_an_option_with_a_clause_of_its_own_ends_at_a_comma():
    from builder.synthesize.clarify import join_options

    assert join_options(["Mars", "Jupiter, which has no solid surface", "Earth"]) == \
        "Mars, Jupiter, which has no solid surface, or Earth"  # read 30: 'no solid surface or Earth'
    assert join_options(["Earth", "Mars", "Jupiter, which has no solid surface"], "and") == \
        "Earth, Mars and Jupiter, which has no solid surface"
    assert join_options(["Mars", "Jupiter", "Earth"]) == "Mars, Jupiter or Earth"


def test_a_clarification_says_the_before_names_that_take_it():
    # 'Are you asking about Roman Empire, Byzantine Empire, or something else?' (read 23); a numbered list names bare
    import random

    from builder.synthesize.clarify import clarification

    for seed in range(40):
        question, pattern = clarification("kind", random.Random(seed), options=["Roman Empire", "Byzantine Empire"],
                                          head="empire", heads="empires")
        assert "the Roman Empire" in question and "the Byzantine Empire" in question, question
    assert tx.in_running_text("Yale University") == "Yale University" and tx.in_running_text("Hamlet") == "Hamlet"
    assert tx.in_running_text("Sun") == "the Sun" and tx.in_running_text("The Office") == "The Office"


def test_a_follow_up_whose_rewrite_keeps_its_pronoun_is_not_clear():
    # 'What is it?' -> 'What is it that can be cleaned up?': the rewrite names nothing for 'it' (read 23).
    conv = _conv("water", [
        Turn("user", "What is ground water contamination?", rewrite="What is ground water contamination?"),
        Turn("assistant", "Harmful substances that seep into the ground water."),
        Turn("user", "What is it?", rewrite="What is it that can be cleaned up?"),
    ])
    out = list(followup_twins(_ctx(conv, 2)))
    assert not [o for o in out if isinstance(o, Record)]
    assert [o.reason for o in out] == ["the rewrite keeps 'it' and names nothing for it"]
    # A rewrite that adds only a verb to a question without a pronoun leaves it clear as it stands.
    hiv = _conv("hiv", [
        Turn("user", "What is HIV?", rewrite="What is HIV?"), Turn("assistant", "A virus."),
        Turn("user", "Is there a cure for HIV?", rewrite="Is there a cure available for HIV?"),
    ])
    assert [o.category for o in followup_twins(_ctx(hiv, 2)) if isinstance(o, Record)] == ["clear"]


def test_a_phrase_follow_up_whose_rewrite_adds_more_than_the_referent_is_no_hard_negative():
    def conv(query, rewrite):
        return _conv("moxie", [
            Turn("user", "What does MOXIE do?", rewrite="What does MOXIE do?"),
            Turn("assistant", "MOXIE makes oxygen from the carbon dioxide of the Martian air."),
            Turn("user", query, rewrite=rewrite),
        ])
    # 'Others in the past?': that the others 'used it for similar purposes' is the answerer's guess (read 23).
    out = list(followup_twins(_ctx(conv("Others in the past?", "Have others in the past used carbon dioxide for similar "
                                         "purposes?"), 2)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any(o.reason.endswith("no hard negative") and "adds more than the referent" in o.reason
               for o in out if isinstance(o, Rejection))
    # A full question whose rewrite adds only the referent stays the hard negative.
    out = list(followup_twins(_ctx(conv("Can it be stored?", "Can carbon dioxide be stored?"), 2)))
    assert [o.category for o in out if isinstance(o, Record) and not o.needs_clarification] == ["hard_negative"]


def test_a_fragment_that_keeps_a_verb_cut_from_its_object_is_no_record():
    from builder.synthesize.rules.fragment_twins import FragmentTwins

    conv = _conv("india", [
        Turn("user", "Tell me about Indian agriculture.", rewrite="Tell me about Indian agriculture."),
        Turn("assistant", "Indian agriculture employs half of the workforce."),
        Turn("user", "earn a good income?", [Passage("i1", "Indian agriculture pays little.", "Indian agriculture", True)],
             rewrite="Do people working in the Indian agriculture industry earn a good income?"),
    ])
    out = list(FragmentTwins(positive_share=1.0).generate(_ctx(conv, 2, names={"industry": ["Indian agriculture"]})))
    assert not [o for o in out if isinstance(o, Record)]
    assert any("keeps the verb 'earn'" in o.reason for o in out if isinstance(o, Rejection))


def test_standalone_clear_rejects_a_keyword_query_whose_only_capital_opens_it():
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    def clear(rewrite, passage="Each cluster has worker nodes."):
        conv = _conv("kw", [Turn("user", rewrite, [Passage("k1", passage, "Clusters", True)], rewrite=rewrite)])
        return [o for o in StandaloneClear().generate(_ctx(conv, 1)) if isinstance(o, Record)]

    # 'Worker node' (read 23): a common word capitalized because it opens the query names nothing.
    assert not clear("Worker node")
    # A name the passages also capitalize mid-sentence does name its topic.
    assert clear("Kubernetes cluster", "You can run a Kubernetes cluster with worker nodes.")


def test_no_kind_twin_after_an_exchange_naming_kinds_of_the_kind_noun():
    # Read 24, ce-0e21aba2842e0626: 'Is the cloud free?' right after an answer on public, private and hybrid clouds.
    def clouds(answer):
        return _conv("clouds", [
            Turn("user", "What is IBM Cloud VPC?", rewrite="What is IBM Cloud VPC?"),
            Turn("assistant", "IBM Cloud VPC is a virtual private cloud on IBM Cloud."),
            Turn("user", "What are the different types of clouds?", rewrite="What are the different types of clouds?"),
            Turn("assistant", answer),
            Turn("user", "Is it free?", [Passage("v", "IBM Cloud VPC has no charge for the network.", "VPC", True)],
                 rewrite="Is IBM Cloud VPC free?"),
        ])
    kinds = "There are three: a public cloud, a private cloud and a hybrid cloud, which mixes the two."
    out = list(entity_twins(_ctx(clouds(kinds), 3)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("names kinds of clouds (public cloud, private cloud" in o.reason for o in out if isinstance(o, Rejection))
    plain = list(entity_twins(_ctx(clouds("There are several; IBM Cloud VPC is one of them."), 3)))
    assert not any("names kinds of" in o.reason for o in plain if isinstance(o, Rejection))


def test_a_turn_the_assistant_did_not_understand_is_no_clear_query():
    from builder.synthesize.rules.standalone_clear import StandaloneClear

    # 'any example of code for cart ahh sauce rather?' (read 25): the rewrite kept the garbled words.
    garbled = _conv("garbled", [
        Turn("user", "How do I install the SDK with CocoaPods?", rewrite="How do I install the SDK with CocoaPods?"),
        Turn("assistant", "Run pod install in your project folder."),
        Turn("user", "any example of code for cart ahh sauce rather?", rewrite="any example of code for cart ahh sauce rather?"),
        Turn("assistant", "I'm sorry, but I don't understand what you mean."),
    ])
    out = list(StandaloneClear(post_share=1.0).generate(_ctx(garbled, 2)))
    assert not [o for o in out if isinstance(o, Record)]
    assert out[0].reason == "the assistant's reply says it did not understand the turn"
    assert [o for o in StandaloneClear().generate(_ctx(garbled, 1)) if isinstance(o, Record)]
    assert tx.not_understood("Sorry, I didn’t follow. Could you rephrase?") and not tx.not_understood("Run pod install.")


def test_a_remark_that_trails_off_is_no_hard_negative():
    # 'Oops, no return result...' -> 'Will there be a return result using this SDK?' (read 25): the question is the
    # rewriter's guess.
    sdk = _conv("sdk", [
        Turn("user", "How do I call the Cloud Functions SDK?", rewrite="How do I call the Cloud Functions SDK?"),
        Turn("assistant", "The Cloud Functions SDK returns an activation ID for each call."),
        Turn("user", "Oops, no return result...", rewrite="Will there be a return result using the Cloud Functions SDK?"),
    ])
    out = list(followup_twins(_ctx(sdk, 2)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any(isinstance(o, Rejection) and "remark that trails off" in o.reason for o in out)
    asked = _conv("sdk-asked", sdk.turns[:2] + [Turn("user", "Does it return a result?",
                                                     rewrite="Does the Cloud Functions SDK return a result?")])
    assert [o for o in followup_twins(_ctx(asked, 2)) if isinstance(o, Record) and not o.needs_clarification]


EURO = _conv("euro", [
    Turn("user", "Why could the debts of some EU states end the Euro?", rewrite="Why could the debts of some EU states end the Euro?"),
    Turn("assistant", "Spain, Italy and Greece have to default on their debt, and France has a large deficit."),
    Turn("user", "Does Germany have a strong economy?", rewrite="Does Germany have a strong economy?"),
    Turn("assistant", "Germany has a strong economy and keeps bailing out the other countries."),
    Turn("user", "What happens if Germany stops bailing them out?",
         rewrite="What would happen if Germany stopped bailing out the other countries?"),
])


def test_a_pronoun_for_a_group_gets_no_reading_naming_one_member():
    # 'them' is the other countries together: 'bailing out the other Spain' is no reading (read 25).
    out = list(FollowupTwins(rival_prefixes=4).generate(_ctx(EURO, 3, names={"country": ["Spain", "Italy", "France"]})))
    assert not [o for o in out if isinstance(o, Record) and o.needs_clarification]
    assert any(isinstance(o, Rejection) and "'countries' is a group" in o.reason for o in out)


def test_a_common_phrase_is_a_thing_of_the_kind_its_last_word_says():
    # 'service support' is support, no service to make 'the service' of (read 25, ce-c1c7b75e045b6308).
    query = "Can I get some information about service support in case I run into some issues?"
    got = tx.key_entity(query, ["Getting service support"], [])
    assert got.text == "service support" and got.head is None
    assert tx.key_entity("Does the Eurail Global Pass cover night trains?", [], []).head == "pass"


def test_a_thing_the_question_names_is_no_candidate_for_its_pronoun():
    # 'Is it bigger than Germany?' right after France and Germany: 'it' can only be France, a hard negative.
    borders = _conv("borders", [
        Turn("user", "Which countries border the Rhine?", rewrite="Which countries border the Rhine?"),
        Turn("assistant", "France and Germany both border the Rhine."),
        Turn("user", "Is it bigger than Germany?", rewrite="Is France bigger than Germany?"),
    ])
    out = list(followup_twins(_ctx(borders, 2)))
    [negative] = [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert negative.category == "hard_negative" and negative.resolution["referent"] == "France"


def test_passage_twins_no_pronoun_twin_after_an_exchange_naming_another_candidate():
    # 'Is it a lethal disease?' after 'Is there a cure for HIV?' and an answer that also names herpes: the passages on
    # herpes do not settle 'it' (read 26, ce-1eb3f1f4f408d125).
    from builder.synthesize.rules.passage_twins import PassageTwins

    herpes = [Passage("h1", "Herpes spreads through direct contact with an infected person.", "Herpes", True)]

    def conv(question, answer):
        return _conv("hiv", [
            Turn("user", question, rewrite=question),
            Turn("assistant", answer),
            Turn("user", "Is it a lethal disease and how is it transmitted?", herpes,
                 rewrite="Is Herpes a lethal disease and how is it transmitted?"),
        ])
    out = list(PassageTwins().generate(_ctx(conv("Is there a cure for HIV?", "HIV can be controlled; one gel cut Herpes transmission by half."), 2)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("names another candidate for 'it': HIV" in o.reason for o in out if isinstance(o, Rejection))
    out = list(PassageTwins().generate(_ctx(conv("Is there a cure for Herpes?", "Herpes has no cure, but medicines cut its outbreaks."), 2)))
    assert [o for o in out if isinstance(o, Record) and not o.needs_clarification]


def test_a_pronoun_owning_the_noun_before_it_is_a_possessive():
    # 'What was the religion of it?' (read 28): people write 'What was its religion?'
    def swapped(query, name):
        entity = next(e for e in tx.entities(query) if name in e.text)
        return tx.replace_entity(query, entity, tx.pronoun_for(query, entity))

    assert swapped("What was the religion of the Roman Empire?", "Roman Empire") == "What was its religion?"
    assert swapped("When did the official reunification of Germany happen?", "Germany") == "When did its official reunification happen?"
    assert swapped("What is the rest of Hamlet about?", "Hamlet") == "What is the rest of it about?"  # a part, not owned
    assert swapped("What is the number of teams in the NFL?", "NFL") == "What is the number of teams in it?"


def test_readings_say_names_as_people_write_them():
    # Read 28: 'to the NASA', 'by the FINRA', 'Office series', 'the West Nile virus' beside 'the West Nile'
    from builder.conversation import Conversation, Passage, Turn
    from builder.synthesize.context import names_by_kind

    assert tx.fit_article("mandated by the ", "FINRA") == "mandated by " and tx.fit_article("to the ", "IRS") == "to the "
    assert tx.substitute("What did the agency say?", "the agency", "NASA") == "What did NASA say?"
    assert tx.same_thing("West Nile", "West Nile virus") and not tx.same_thing("Zika", "Ebola virus")
    ask = "How many seasons does The Office series have?"
    conv = Conversation("tv", "clapnq", [Turn("user", ask, [Passage("p", "The Office series ran for nine seasons.", "The Office",
                                                                   True)], rewrite=ask)])
    assert names_by_kind([conv]).get("series") == ["The Office"]


def test_a_kind_noun_that_modifies_the_head_of_a_name_is_not_its_kind():
    # 'Service Credentials' and the menu heading 'Services and Software' counted as two more services in a talk
    # about the Speech to Text service
    assert tx.head_of("Service Credentials") is None and tx.head_of("Services and Software") is None
    assert tx.head_of("Department of Veterans Affairs") == "department" and tx.head_of("Lake Tahoe") == "lake"
    assert tx.head_of("Amazon Web Services") == "service" and tx.head_of("Great Lakes") == "lake"


def test_a_hedge_naming_three_of_more_candidates_leaves_the_others_open():
    # read 30, ce-d329f5b73507c80d: 'Do you mean Germany, France or Spain?' over six countries
    import random

    from builder.synthesize.clarify import clarification

    six = ["Germany", "France", "Spain", "Italy", "Portugal", "Greece"]
    nine = six + ["Austria", "Belgium", "Ireland"]
    hedges = [q for seed in range(60) for q, p in [clarification("referent", random.Random(seed), options=nine)]
              if p == "hedge"]
    assert hedges and all("something else" in q for q in hedges)
    three = {clarification("referent", random.Random(seed), options=six[:3])[0] for seed in range(60)}
    assert "Do you mean Germany, France or Spain?" in three  # three candidates: the hedge may name them all
    # Four to eight: a list names them all; a hedge naming three would leave Greece out (reads 66, 67).
    for kind in ("referent", "kind"):
        asked = [clarification(kind, random.Random(seed), options=six, head="country", heads="countries", anaphor="it")
                 for seed in range(30)]
        assert {p for _, p in asked} == {"list"} and all(all(c in q for c in six) for q, _ in asked), asked[:2]


def test_an_alias_or_a_thing_of_another_kind_is_no_rival_passage():
    # 'how can I prevent ... getting it?' read as 'Covid' and 'COVID-19': one disease, one reading (read 32)
    from builder.synthesize.generic import generalize
    from builder.synthesize.rules.passage_twins import _aspect_rivals

    mine = [Passage("a", "COVID-19 spreads through droplets; masks prevent COVID-19 in families.", "COVID-19", True)]
    asked = _conv("cv", [Turn("user", "How can I prevent my family from getting it?", mine,
                             rewrite="How can I prevent my family from getting COVID-19?")])
    other = _conv("other", [Turn("user", "Tell me about Covid.", [
        Passage("c", "Covid: how families prevent getting it with masks and vaccines.", "Covid", True),
        Passage("f", "Influenza: how families prevent getting it with masks and vaccines.", "Influenza", True),
        Passage("i", "Identity Theft Awareness: how families prevent getting it with strong passwords.",
                "Identity Theft Awareness", True),
    ], rewrite="Tell me about Covid.")])
    ctx = _ctx(asked, 1)
    got = generalize(ctx, "test")
    assert not isinstance(got, Rejection)
    names = [name for name, _, _ in _aspect_rivals(ctx, got, mine, [_ctx(other, 1)])]
    assert "Influenza" in names and "Covid" not in names
    assert "Identity Theft Awareness" not in names  # no disease: 'getting Identity Theft Awareness' is no reading


def test_a_verb_or_a_count_is_no_kind_noun_of_a_name():
    # read 33: 'Where do the Arizona Cardinals play' -> 'Where do the play', 'Name two spacecraft' -> 'The spacecraft'
    from builder.synthesize.generic import generalize

    for q in ("Where do the Arizona Cardinals play, regardless of location, this week?",
              "Name two spacecraft that were sent to explore Jupiter."):
        got = generalize(_ctx(_conv("odd", [Turn("user", q, rewrite=q)]), 1), "test")
        assert isinstance(got, Rejection), (q, got)
    q = "How many seats does the Arizona Cardinals stadium have?"  # a plural name before a kind noun, no 'do'
    got = generalize(_ctx(_conv("ok", [Turn("user", q, rewrite=q)]), 1), "test")
    assert not isinstance(got, Rejection) and got.query == "How many seats does the stadium have?", got


def test_a_reading_drops_a_doubled_article_and_agrees_its_auxiliary():
    # read 33: 'the arch rival to The The Office', 'Do IBM have to use ...'
    from builder.synthesize.generic import generalize, with_referent

    q = "Do US-based Companies have to use a specific system for financial statements?"
    got = generalize(_ctx(_conv("sec", [Turn("user", q, rewrite=q)]), 1), "test")
    assert not isinstance(got, Rejection), got
    assert with_referent(got, "IBM").startswith("Does IBM have to use"), with_referent(got, "IBM")
    q = "Who was the arch rival to The Office series?"
    got = generalize(_ctx(_conv("office", [Turn("user", q, rewrite=q)]), 1), "test")
    assert not isinstance(got, Rejection), got
    assert with_referent(got, "The Simpsons") == "Who was the arch rival to The Simpsons?"


def test_a_fragment_is_a_noun_phrase_of_a_question_a_person_types():
    # read 36: 'press conference?' of a rewrite that asks nothing ('Office of the New York State Attorney General
    # press conference', ce-fe5b93768d933df3), 'pattern day?' cut from 'pattern day trading', 'two months?'.
    from builder.synthesize.rules.fragment_twins import FragmentTwins

    def fragment_outputs(rewrite, entity_text="Letitia James"):
        conv = _conv("ag", [
            Turn("user", f"Tell me about {entity_text}.", rewrite=f"Tell me about {entity_text}."),
            Turn("assistant", f"{entity_text} is often in the news."),
            Turn("user", "and?", [Passage("a1", f"{entity_text} held a press conference.", entity_text, True)], rewrite=rewrite),
        ])
        return list(FragmentTwins(positive_share=1.0).generate(_ctx(conv, 2, names={"person": [entity_text, "Andrew Cuomo"]})))

    for rewrite, reason in ((f"Letitia James press conference", "no question or request"),
                            ("Do the SEC rules on pattern day trading apply to Letitia James?", "cuts 'trading'"),
                            ("Can Letitia James schedule a status change in two months?", "keeps a number")):
        out = fragment_outputs(rewrite)
        assert not [o for o in out if isinstance(o, Record)], rewrite
        assert any(reason in o.reason for o in out if isinstance(o, Rejection)), (rewrite, out)
    # The same fragment of a question is a hard negative after the talk that names Letitia James.
    kept = fragment_outputs("When is the next press conference of Letitia James?")
    assert [o.query for o in kept if isinstance(o, Record) and not o.needs_clarification] == ["press conference?"], kept


def test_a_plural_kind_noun_after_its_modifier_names_a_class_not_a_thing():
    # read 36, ce-ffbde561ed30271d: 'Have any European teams participated in the MLS All-Star Games?' made 'Have any
    # teams participated ...?', read with 'Have any Arizona Cardinals participated ...?'.
    q = "Have any European teams participated in the MLS All-Star Games?"
    entity = tx.key_entity(q, [], [])
    assert entity.text == "European teams"
    assert "names a class of teams" in tx.not_a_kind_name(q, entity)
    # One named thing of the kind is still a name: 'the Penobscot River', 'The Office series'.
    for q in ("Where does the Penobscot River start?", "Who was the arch rival to The Office series?"):
        assert not tx.not_a_kind_name(q, tx.key_entity(q, [], [])), q


def test_the_kind_word_itself_capitalized_is_no_name_to_generalize():
    # read 37, ce-2dbe7b3460a806af: 'Will there be a return result using this SDK?' made '... this sdk?', read as
    # the query itself; 'the Moon' made 'the moon'.
    for q in ("Will there be a return result using this SDK?", "Why is it safe to look at the Moon during an eclipse?"):
        entity = tx.key_entity(q, [], [])
        assert "itself" in tx.not_a_kind_name(q, entity), (q, entity)
    for q in ("Does the Swift SDK return a result?", "Is there a cure for Huntington's disease?"):
        assert not tx.not_a_kind_name(q, tx.key_entity(q, [], [])), q


def test_a_direction_cut_from_a_longer_name_is_no_entity_to_swap():
    # Read 40, ce-1f2bc58a0516ea36: 'How did people attempt to escape from East to West Germany?' became 'escape from
    # it to West Germany', read with 'East' and the Berlin Wall.
    from builder.synthesize.rules.passage_twins import PassageTwins

    wall = _conv("wall", [
        Turn("user", "How did people attempt to escape from East to West Germany?",
             [Passage("w1", "People escaped from East Germany through tunnels under the Berlin Wall.", "Berlin Wall", True)],
             rewrite="How did people attempt to escape from East to West Germany?"),
    ])
    out = list(PassageTwins().generate(_ctx(wall, 1)))
    assert not [o for o in out if isinstance(o, Record) and "from it to" in o.query]
    assert any("'East' is a direction" in o.reason for o in out if isinstance(o, Rejection))
    assert tx.is_compass("East") and tx.is_compass(" northern ") and not tx.is_compass("East Germany")


def test_a_place_and_its_peoples_adjective_name_one_thing():
    # Read 40, ce-3e8e00eb03311dfe: 'Do you mean Indian economy or Economy of India?' offered one economy twice.
    assert tx.same_thing("Indian economy", "Economy of India") and tx.same_thing("Empire of Rome", "Roman Empire")
    assert tx.same_thing("Economy of Italy", "Italian economy") and tx.same_thing("Canadian dollar", "dollar of Canada")
    assert not tx.same_thing("India", "Indian")  # a country and a people (or an ocean)
    assert not tx.same_thing("Roman Empire", "Byzantine Empire") and not tx.same_thing("Indian economy", "Economy of China")


def test_a_passage_rival_is_read_without_a_trailing_possessive():
    # read 44, ce-d29cb89395b6f6c5: 'How are cyclones on Jupiter's formed?'
    from builder.synthesize.rules.passage_twins import without_possessive

    assert without_possessive("Jupiter's") == "Jupiter" and without_possessive("Jupiter’s") == "Jupiter"
    assert without_possessive("Shakespeare's plays") == "Shakespeare's plays"



def test_a_one_word_followup_is_no_hard_negative():
    # 'Solutions' after a talk of virtualization on IBM Cloud had been a hard negative read 'What are the solutions
    # offered by IBM Cloud?' (read 50, ce-011e8d2abf079af7); two words of the same kind stay one
    def out(query, rewrite):
        conv = _followup("cloud", "Does IBM Cloud run virtual servers?", "IBM Cloud offers virtual servers.", query, rewrite)
        return list(FollowupTwins(positive_share=0.0).generate(_ctx(conv, 2)))
    one = out("Solutions", "What are the solutions offered by IBM Cloud?")
    assert not [o for o in one if isinstance(o, Record) and not o.needs_clarification]
    assert any(isinstance(o, Rejection) and "one-word fragment" in o.reason for o in one)
    two = out("Backup solutions", "What are the backup solutions of IBM Cloud?")
    assert [o for o in two if isinstance(o, Record) and o.category == "hard_negative"]


def _third_turn(first, second, third):
    """A conversation of two (question, answer) exchanges, each question its own rewrite, then the turn `third`."""
    turns = [t for q, a in (first, second) for t in (Turn("user", q, rewrite=q), Turn("assistant", a))]
    return _conv("third", turns + [third])


def test_a_followup_is_no_hard_negative_when_the_talk_last_named_another_of_its_kind():
    # 'Fines and penalties' rewritten '... traffic violations in New York' after four turns on California had been
    # a hard negative (read 50, ce-9701dbecbdb69ca0)
    def out(later):
        conv = _third_turn(("What are the helmet rules in New York?", "Traffic violations in New York carry fines, and every rider needs a helmet."),
                           ("What about bicycles?", later),
                           Turn("user", "Fines and penalties", rewrite="What are the fines and penalties for traffic violations in New York?"))
        return list(FollowupTwins(positive_share=0.0).generate(_ctx(conv, 3)))
    moved = out("In California, bicycles may not ride on most freeways.")
    assert not [o for o in moved if isinstance(o, Record) and not o.needs_clarification]
    assert any(isinstance(o, Rejection) and "last named California" in o.reason for o in moved)
    stayed = out("In New York, bicycles may not ride on most freeways.")
    assert [o for o in stayed if isinstance(o, Record) and o.category == "hard_negative"]


def test_a_referent_that_starts_with_a_ranking_gives_no_readings():
    # 'That was not my question ...' rewritten 'Which is the longest river in North America, ...?' had been read
    # 'Which is the Hudson River America, ...?' in a fresh chat: the referent was 'longest river in North' (read 50,
    # ce-cc6847a7d6990efb)
    conv = _followup("river", "Which river is the longest?", "The Missouri River is the longest river in North Dakota.",
                     "That was not my question.", "Which is the longest river in North America, including Central America?")
    _no_positive(followup_twins(_ctx(conv, 2, names={"river": ["Hudson River", "Snake River", "Missouri River"]})),
                 "ranks things of the kind")


def test_passage_twins_hard_negative_needs_the_talk_to_have_last_named_its_entity():
    # 'Is the river important?' over Hudson River passages, right after a turn naming the Penobscot, the Mississippi
    # and the Missouri, had been a hard negative resolved by the passages (read 51, ce-561414994a9708f9)
    from builder.synthesize.rules.passage_twins import PassageTwins

    hudson = [Passage("h1", "The Hudson River is an important river of New York.", "Hudson River", True)]

    def negatives(last_answer):
        conv = _third_turn(("Tell me about the Hudson River.", "The Hudson River flows through New York."),
                           ("Which rivers are navigable?", last_answer),
                           Turn("user", "Is the Hudson River important?", hudson, rewrite="Is the Hudson River important?"))
        out = list(PassageTwins().generate(_ctx(conv, 3)))
        return out, [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    out, found = negatives("The Penobscot River and the Mississippi River are navigable.")
    assert not found
    assert any("the talk last named" in o.reason for o in out if isinstance(o, Rejection))
    _, found = negatives("The Hudson River is navigable up to Troy.")
    assert found and found[0].query == "Is the river important?"


def test_named_instead_keeps_short_forms_and_initials_as_one_thing():
    # 'the disease' over chronic wasting disease passages after a turn on CWD had been turned down as if the talk
    # named another disease (kinds.named_instead, the rule read 51's passage twins use)
    from builder.synthesize import kinds as kd

    def talk(answer):
        return [{"role": "user", "content": "Tell me more."}, {"role": "assistant", "content": answer}]
    assert kd.named_instead(talk("Deer can carry CWD, a prion disease."), "chronic wasting disease", "disease") == []
    assert kd.named_instead(talk("The Penobscot River is navigable."), "Hudson River", "river") == ["Penobscot River"]
    assert kd.named_instead(talk("The Hudson River is navigable."), "Hudson River", "river") == []


def test_a_thing_the_rewrite_names_too_is_no_other_thing_of_the_kind():
    # 'How is marriage defined?' rewritten '... in the Defense of Marriage Act 1996' (span 'Act 1996') had been
    # turned down as if the talk last named another act, the Defense of Marriage Act itself
    from builder.synthesize.rules.followup_twins import _named_instead

    talk = [{"role": "user", "content": "What does the Defense of Marriage Act say?"},
            {"role": "assistant", "content": "The Defense of Marriage Act defines marriage for federal purposes."}]
    rewrite = "How is marriage defined in the Defense of Marriage Act 1996?"
    assert _named_instead(talk, "How is marriage defined?", rewrite, "Act 1996", []) is None
    assert _named_instead(talk, "How is marriage defined?", "How is marriage defined in the Act 1996?", "Act 1996", []) \
        == "Defense of Marriage Act"


def test_a_rewrite_that_drops_the_place_of_its_talk_is_asked_only_after_that_talk():
    # 'I need to register my boat and boat trailer' had been a clear question in a fresh chat, with the New York of
    # its talk lost (read 50, ce-3f1c2c7a4478523f): where the boat is registered is what the answer turns on.
    from builder.synthesize.rules.standalone_clear import StandaloneClear, lost_place

    def boat(rewrite):
        return _conv("boat", [
            Turn("user", "How can I replace my lost New York boating safety certificate?",
                 rewrite="How can I replace my lost New York boating safety certificate?"),
            Turn("assistant", "Order a replacement from the New York State Parks office."),
            Turn("user", "I need to register my boat and boat trailer", rewrite=rewrite)])

    lost = boat("I need to register my boat and boat trailer")
    for seed in range(12):  # the fresh-chat and the block-mate draws change with the seed; the history never does
        ctx = TurnContext(lost, 2, 2, seed, "test", [RAIL], block_names={})
        records = [o for o in StandaloneClear(switch_share=1.0).generate(ctx) if isinstance(o, Record)]
        assert records and all(r.history == ctx.history for r in records)
    kept = boat("How do I register my boat and boat trailer in New York?")
    histories = {len(r.history) for seed in range(12)
                 for r in StandaloneClear().generate(TurnContext(kept, 2, 2, seed, "test", [], block_names={}))
                 if isinstance(r, Record)}
    assert histories == {0, 2}, "a rewrite that keeps its place is asked in a fresh chat too"
    assert lost_place("Do I need a permit?", [{"role": "user", "content": "I live in California."}])
    assert not lost_place("Do I need a permit in Ohio?", [{"role": "user", "content": "I live in California."}])
    assert not lost_place("Do I need a permit?", [{"role": "user", "content": "I fish in lakes."}])


def test_a_followup_whose_rewrite_keeps_a_kind_phrase_the_talk_never_says_is_no_hard_negative():
    # 'What are the suppliers for the city?' -> 'Who are the suppliers of the city's groundwater?' after a talk on
    # groundwater that names no city (read 53, ce-3e1d0130c26e7fc2): the rewrite resolved 'groundwater', not the city.
    first, answer = "What is groundwater contamination?", "Groundwater contamination is harmful waste in the ground."
    water = _followup("water", first, answer, "What are the suppliers for the city?",
                      "Who are the suppliers of the city's groundwater?")
    out = list(followup_twins(_ctx(water, 2)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any(isinstance(o, Rejection) and "keeps 'the city'" in o.reason for o in out)
    # A talk that says the city settles it: the human follow-up is a hard negative again.
    town = _followup("town", "What is groundwater contamination in the city?", answer,
                     "What are the suppliers for the city?", "Who are the suppliers of the city's groundwater?")
    assert [o for o in followup_twins(_ctx(town, 2)) if isinstance(o, Record) and o.category == "hard_negative"]


def test_a_described_thing_another_turn_asked_about_is_no_rival_name():
    # 'What is the most popular Shakespearean play in China?' asks about no play by name: 'Shakespearean play' was a
    # reading beside Hamlet and Romeo and Juliet (read 55). A named play of another turn stays a rival.
    from builder.synthesize.generic import generalize
    from builder.synthesize.rules.passage_twins import _conversation_rivals, about

    conv = _conv("plays", [
        Turn("user", "How many film adaptations of Hamlet are there?",
             [Passage("h", "Hamlet has been filmed many times, by Olivier and by Zeffirelli.", "Hamlet", True)],
             rewrite="How many film adaptations of Hamlet are there?"),
        Turn("assistant", "Hamlet has been filmed many times."),
        Turn("user", "What is the most popular Shakespearean play in China?",
             [Passage("c", "After 1976 a Shakespearean play drew crowds in China.", "Shakespeare in China", True)],
             rewrite="What is the most popular Shakespearean play in China?"),
        Turn("assistant", "Hamlet is often staged there."),
        Turn("user", "What about Romeo and Juliet?",
             [Passage("r", "Romeo and Juliet may be the most filmed play of all time.", "Romeo and Juliet", True)],
             rewrite="How many film adaptations of Romeo and Juliet are there?"),
    ])
    ctx = _ctx(conv, 1)
    got = generalize(ctx, "test")
    mine = [p for p in ctx.relevant_passages() if about(p, got.entity.text)]
    names = [name for name, _, _ in _conversation_rivals(ctx, got, mine, [_ctx(conv, 2), _ctx(conv, 3)])]
    assert names == ["Romeo and Juliet"]
    assert tx.counted_before("the most popular ") and tx.counted_before("Macbeth is the fifth ")
    assert not tx.counted_before("Tell me about the ") and not tx.counted_before("the Western ")


def test_a_lowercase_lexicon_name_is_a_rival_for_a_pronoun():
    # 'Where does it originate from?' right after an answer on the association football World Cup and on American
    # football was a hard negative read as association football (read 56, ce-9b9ff78257b8e727): 'association
    # football' is a sport of the kind lexicon, though no capital marks it.
    def talk(answer):
        return _conv("football", [
            Turn("user", "How does the MLS All-Star Game work?", rewrite="How does the MLS All-Star Game work?"),
            Turn("assistant", "It is an annual soccer game of Major League Soccer's best players."),
            Turn("user", "Which is the most popular?", rewrite="Which is the most popular sport?"),
            Turn("assistant", answer),
            Turn("user", "Where does it originate from?", rewrite="Where does association football originate from?"),
        ])
    both = "The association football World Cup has the largest audience; American football is the most popular sport in the US."
    out = list(FollowupTwins().generate(_ctx(talk(both), 3)))
    assert not [o for o in out if isinstance(o, Record) and not o.needs_clarification]
    assert any("open between" in o.reason for o in out if isinstance(o, Rejection))
    # Found by any of its aliases: the user's 'flu' singles out influenza beside the answer's polio and measles.
    from builder.synthesize import kinds as kd
    flu = [{"role": "user", "content": "Who should get a flu vaccine?"},
           {"role": "assistant", "content": "Vaccines cut infections such as polio and measles."}]
    assert kd.rivals(flu, "disease") == []
    assert sorted(kd.rivals([{"role": "user", "content": "Who should get a vaccine?"}, flu[1]], "disease")) == ["measles", "polio"]
    # The kind lexicon's 'association football' is a sport, not an association; 'Penobscot River' stays a river.
    assert tx.kind_of("association football") == "sport" and tx.kind_of("Kansas City Chiefs") == "team"
    assert tx.kind_of("Penobscot River") == "river"
    one = "The association football World Cup has the largest audience of any sporting event."
    assert [o for o in FollowupTwins().generate(_ctx(talk(one), 3)) if isinstance(o, Record) and not o.needs_clarification]
