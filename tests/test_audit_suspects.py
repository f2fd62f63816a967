"""Model-based suspects find planted label flips: recall@k on a hand-made release and on a demo build."""

import random
import pytest

from builder.audit.release import open_release
from builder.audit.suspects import model_suspects
from builder.release import load_release, write_release
from builder.io import read_json
from test_audit_helpers import CATEGORIES, make_records, relabel, write_test_release


def plant_flips(records, share, seed):
    """Give `share` of the records another category (label, target, etc. made consistent)."""
    rng = random.Random(seed)
    chosen = set(rng.sample(range(len(records)), round(share * len(records))))
    out = [relabel(r, rng.choice([c for c in CATEGORIES if c != r["category"]])) if i in chosen else r
           for i, r in enumerate(records)]
    return out, {records[i]["id"] for i in chosen}


def recall_at(suspects, flipped, k):
    return len(flipped & {s.record_id for s in suspects[:k]}) / len(flipped)


def test_planted_flips_rank_near_the_top(tmp_path):
    records, flipped = plant_flips(make_records(per_cell=4, seed=5), 0.05, seed=5)
    release = open_release(write_test_release(tmp_path / "rel", records))
    suspects = model_suspects(release, folds=5, seed=0)
    assert len(flipped) == 11
    assert recall_at(suspects, flipped, len(flipped)) >= 0.7
    assert recall_at(suspects, flipped, 2 * len(flipped)) >= 0.9
    # Ranked, scored, explained, deterministic.
    assert [s.rank for s in suspects] == list(range(1, len(suspects) + 1))
    assert all(a.score >= b.score for a, b in zip(suspects, suspects[1:]))
    top = suspects[0]
    assert top.reason.startswith(f"labelled {top.label}") and 0 <= top.given_p <= 1
    assert [s.record_id for s in model_suspects(release, folds=5, seed=0)] == [s.record_id for s in suspects]


def test_clean_release_has_no_confident_majority(tmp_path):
    # Without flips, few records are confidently contradicted: the flags are about the flips, not noise.
    release = open_release(write_test_release(tmp_path / "rel", make_records(per_cell=4, seed=5)))
    confident = [s for s in model_suspects(release) if s.confident]
    assert len(confident) <= 0.1 * len(release)


@pytest.mark.slow
def test_planted_flips_in_the_demo_build(demo_release, tmp_path):
    # demo_release: the session-wide demo build from tests/conftest.py
    splits = load_release(demo_release)
    ordered = [(split, r) for split, rows in splits.items() for r in rows]
    flipped_records, flipped = plant_flips([r for _, r in ordered], 25 / len(ordered), seed=1)
    patched = {s: [] for s in splits}
    for (split, _), record in zip(ordered, flipped_records):
        patched[split].append(record)
    write_release(tmp_path / "rel", patched, read_json(demo_release / "manifest.json"), "# flipped\n")
    suspects = model_suspects(open_release(tmp_path / "rel"))
    # 25 flips among ~500 contrastive records (twins differ by context only); a random ranking
    # would find about 10% of them in the top 50.
    assert recall_at(suspects, flipped, 50) >= 0.6
    assert recall_at(suspects, flipped, 100) >= 0.8
