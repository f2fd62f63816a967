"""Rule-based clarification questions in the three human patterns: hedge, list, open."""

from __future__ import annotations

import random
from functools import lru_cache
from pathlib import Path

import yaml

from builder.synthesize import text as tx

# How often each pattern is picked when it is possible; a list needs 4-8 options, a hedge 2-3 (more only where no list
# fits); with two or more options known the question names them (hedge or list), with fewer it asks openly.
PATTERN_WEIGHTS = {"hedge": 0.45, "list": 0.15, "open": 0.40}


@lru_cache(maxsize=1)
def templates() -> dict:
    return yaml.safe_load((Path(__file__).parent / "templates.yaml").read_text(encoding="utf-8"))


def conjunction(template: str) -> str:
    """'like A, B and C' lists examples; 'Do you mean A, B or C?' and 'Which one: A, B or C?' ask for one."""
    return "and" if "like" in template or "such as" in template or "example" in template else "or"


def join_options(options: list[str], conj: str = "or") -> str:
    if len(options) == 1:
        return options[0]
    # An option with a clause of its own ('Jupiter, which has no solid surface') ends at a comma, or the clause
    # runs on into the next option ('Mars, Jupiter, which has no solid surface or Earth'; read 30).
    before = ", " if "," in options[-2] else " "
    return ", ".join(options[:-1]) + f"{before}{conj} " + options[-1]


def named_in(options: list[str], shown: str) -> list[str]:
    """The options a record shows (its history, its passages); fewer than two: none, so the question asks openly.
    A clarification never offers names the user never saw ('Lake Tahoe or Crater Lake?' after a talk of trains)."""
    named = [o for o in options if tx.mentions_any(shown, o)]
    return named if len(named) >= 2 else []


def clarification(kind: str, rng: random.Random, options: list[str] | None = None, **slots: str) -> tuple[str, str]:
    """Pick a pattern available for `kind` and fill one of its templates. Returns (question, pattern)."""
    options = list(options or [])
    listed = kind in templates().get("list", {}) and 4 <= len(options) <= 8
    possible = []
    for pattern in ("hedge", "list", "open"):
        if kind not in templates().get(pattern, {}):
            continue
        if pattern == "hedge" and len(options) < 2 and "topic" not in slots:
            continue
        if pattern == "hedge" and len(options) > 3 and listed:
            continue  # four to eight known: the list names them all, where a hedge would leave some out (reads 66, 67)
        if pattern == "list" and not 4 <= len(options) <= 8:
            continue
        if pattern == "open" and len(options) >= 2 and possible:
            continue  # known options are named (the guide's bar 3): 'Which empire do you mean?' hides them
        possible.append(pattern)
    if not possible:
        raise ValueError(f"no clarification pattern fits kind={kind!r} with {len(options)} options")
    weights = [PATTERN_WEIGHTS[p] for p in possible]
    pattern = rng.choices(possible, weights=weights, k=1)[0]
    choices = templates()[pattern][kind]
    if pattern == "hedge" and len(options) > 3:
        # It names three: 'Do you mean Germany, France or Spain?' would say there are no others (read 30).
        choices = [t for t in choices if "something else" in t or conjunction(t) == "and"] or choices
    template = rng.choice(choices)
    shown = options[:3] if pattern == "hedge" else options
    conj = conjunction(template)
    said = [tx.in_running_text(o, slots.get("head", "")) for o in shown]  # 'about the Roman Empire, ...'; a numbered list stays bare
    text = template.format(
        options=join_options(said, conj) if said else "",
        listed=", ".join(said),  # 'Are you asking about A, B, or something else?'
        numbered=", ".join(f"{i}) {o}" for i, o in enumerate(shown, start=1)),  # 'such as: 1) A, 2) B'
        **slots,
    )
    return text, pattern
