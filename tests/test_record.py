"""The one label rule, for records as dataclasses and as the dicts the stages pass."""

from builder.record import Record, clear_target, label_of


def _record(needs: bool) -> Record:
    return Record(domain="govt", setting="pre_retrieval", history=[], query="How big is it?", documents=[],
                  needs_clarification=needs, category="unresolved_reference" if needs else "clear",
                  interpretations=[], target=clear_target(), provenance={"method": "test"})


def test_label_of_is_the_same_for_a_record_and_its_dict():
    for needs, label in ((True, "needs_clarification"), (False, "clear")):
        record = _record(needs)
        assert label_of(record) == label_of(record.to_dict()) == record.label == label
