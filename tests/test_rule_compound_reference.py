"""compound_reference: a common-noun compound of the rewrite ('the long-term bonds') made a bare kind phrase."""

from builder.conversation import Conversation, Turn
from builder.record import Record
from builder.synthesize.base import Rejection
from builder.synthesize.context import TurnContext
from builder.synthesize.compounds import compounds
from builder.synthesize.rules.compound_reference import CompoundReference


def _ctx(conv, turn):
    index = conv.user_turn_indices()[turn - 1]
    return TurnContext(conv, turn, index, 13, "test", [], block_names={})


def _records(outputs):
    return [o for o in outputs if isinstance(o, Record)]


# The first exchange compares two kinds of bonds; the question then asks about one of them.
TWO_BONDS = Conversation("bonds", "fiqa", [
    Turn("user", "What kinds of bonds can I buy?", rewrite="What kinds of bonds can I buy?"),
    Turn("assistant", "There are two kinds: the short-term bonds, which mature within a few years, and the long-term "
                      "bonds, which pay more interest."),
    Turn("user", "What is the interest rate on the long ones?",
         rewrite="What is the interest rate on the long-term bonds?"),
])
# The talk names only long-term bonds before the question, and compares the two kinds only after it.
ONE_BOND = Conversation("one-bond", "fiqa", [
    Turn("user", "What are the long-term bonds?", rewrite="What are the long-term bonds?"),
    Turn("assistant", "The long-term bonds mature in ten years or more."),
    Turn("user", "What is the interest rate on them?", rewrite="What is the interest rate on the long-term bonds?"),
    Turn("assistant", "About four percent a year."),
    Turn("user", "How do the short-term bonds compare with the long-term bonds?",
         rewrite="How do the short-term bonds compare with the long-term bonds?"),
    Turn("assistant", "The short-term bonds pay less, but their price moves less."),
])


def test_a_question_after_an_exchange_naming_two_compounds_of_its_noun_is_a_positive_naming_both():
    recs = _records(CompoundReference(later=False).generate(_ctx(TWO_BONDS, 2)))
    assert len(recs) == 1
    pos = recs[0]
    assert pos.needs_clarification and pos.category == "multiple_interpretations"
    assert pos.query == "What is the interest rate on the bonds?"
    assert sorted(pos.interpretations) == ["What is the interest rate on the long-term bonds?",
                                           "What is the interest rate on the short-term bonds?"]
    assert pos.history == [{"role": t.role, "content": t.text} for t in TWO_BONDS.turns[:2]]
    question = pos.target["clarification"]
    assert "short-term bonds" in question and "long-term bonds" in question


def test_a_history_naming_only_the_true_compound_gives_the_hard_negative_twin_resolved_by_its_turn():
    recs = _records(CompoundReference().generate(_ctx(ONE_BOND, 2)))
    neg = [r for r in recs if not r.needs_clarification]
    pos = [r for r in recs if r.needs_clarification]
    assert len(neg) == 1 and neg[0].category == "hard_negative"
    assert neg[0].query == "What is the interest rate on the bonds?"
    assert neg[0].history == [{"role": t.role, "content": t.text} for t in ONE_BOND.turns[:2]]
    assert neg[0].resolution["referent"] == "long-term bonds" and neg[0].resolution["turn_index"] in (0, 1)
    assert neg[0].resolution["resolved_query"] == ONE_BOND.turns[2].rewrite
    # Asked again after the later exchange that compares both kinds, the same question is open: the pair.
    assert len(pos) == 1 and pos[0].pair_id == neg[0].pair_id
    assert "How do the short-term bonds compare" in pos[0].history[-2]["content"]


def test_no_record_when_the_conversation_never_names_two_compounds_of_the_noun():
    alone = Conversation("alone", "fiqa", [*ONE_BOND.turns[:4]])
    out = list(CompoundReference().generate(_ctx(alone, 2)))
    assert not _records(out)
    assert any("no compound of a noun the conversation compares" in r.reason for r in out if isinstance(r, Rejection))


def test_a_compound_is_opened_by_a_determiner_or_preposition_not_by_a_verb_and_names_something():
    assert [c.phrase for c in compounds("Compare the personal loans with student loans.")] == ["personal loans", "student loans"]
    assert compounds("Banks offer personal loans.") == []  # after a verb, 'personal' may be the object's own word
    assert compounds("Use the same account and the other account.") == []  # modifiers that pick out nothing
    assert [c.phrase for c in compounds("the credit card fees")] == []  # the compound runs on past 'card'


def test_no_query_where_the_bare_kind_phrase_breaks_the_sentence():
    from builder.synthesize.rules.compound_reference import make_query

    def query(text, phrase):
        ref = next(c for c in compounds(text, anywhere=True) if c.phrase == phrase)
        return make_query(text, ref)

    assert query("How much physical activity should children get each day?", "physical activity").startswith("'physical")
    assert query("How does it relate to dynamic and static secrets?", "static secrets").startswith("'static")
    assert query("What are the steps to update a classic worker node?", "worker node").startswith("'worker")
    assert query("Why do I still have to pay income tax?", "income tax").query == "Why do I still have to pay the tax?"
    # 'How much money do I need to invest in the funds or ETFs?' was a hard negative (ETFs are funds too).
    assert "one of a list" in query("How much money do I need to invest in mutual funds or ETFs?", "mutual funds")


def test_a_compound_the_talk_calls_a_kind_of_another_is_no_rival_reading():
    # 'index-based mutual funds': index funds are mutual funds, so 'the funds' is not open between them (read 30,
    # ce-4710a361eee34ae6); kinds the talk keeps apart stay rivals
    def talk(answer):
        return Conversation("funds", "fiqa", [
            Turn("user", "What kinds of funds can I buy?", rewrite="What kinds of funds can I buy?"),
            Turn("assistant", answer),
            Turn("user", "What is the minimum to invest in the index ones?",
                 rewrite="What is the minimum amount to invest in index funds?"),
        ])
    nested = talk("There are the index funds and the mutual funds. Most people buy index-based mutual funds.")
    apart = talk("There are the index funds and the bond funds. They differ in what they hold.")
    assert not [r for r in _records(CompoundReference(later=False).generate(_ctx(nested, 2))) if r.needs_clarification]
    pos = [r for r in _records(CompoundReference(later=False).generate(_ctx(apart, 2))) if r.needs_clarification]
    assert [sorted(r.interpretations) for r in pos] == [["What is the minimum amount to invest in bond funds?",
                                                         "What is the minimum amount to invest in index funds?"]]


def _one_bond_saying(remark: str) -> Conversation:
    """ONE_BOND with the first answer also saying `remark`: a second kind of bond, named where the strict reading
    of compounds does not look."""
    turns = list(ONE_BOND.turns)
    turns[1] = Turn("assistant", f"The long-term bonds mature in ten years or more. {remark}")
    return Conversation("one-bond-and", "fiqa", turns)


def test_no_hard_negative_twin_when_the_history_also_names_another_kind_anywhere():
    # 'the tax' after a talk of income tax that also said 'employer-paid payroll taxes' and '"withholding taxes"'
    # (read 51, ce-71dd0d77921a96c4): which tax is open, so the history singles out none.
    for remark in ("Funds also hold cheap callable bonds.", 'These are also called "coupon bonds," or notes.'):
        recs = _records(CompoundReference().generate(_ctx(_one_bond_saying(remark), 2)))
        assert [r for r in recs if not r.needs_clarification] == [], remark
    plain = _records(CompoundReference().generate(_ctx(_one_bond_saying("They suit patient savers."), 2)))
    assert [r.category for r in plain if not r.needs_clarification] == ["hard_negative"]


def test_gerund_modifiers_are_read_only_when_asked():
    text = 'known as "withholding taxes," or taxing at the source'
    assert compounds(text, anywhere=True) == []  # 'holding short-term bonds': an -ing word is mostly a verb
    assert [c.phrase for c in compounds(text, anywhere=True, gerund=True)] == ["withholding taxes"]
