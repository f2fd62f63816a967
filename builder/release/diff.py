"""Differences between two releases, matched by record id: added, removed, moved, relabelled, text-changed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from builder.errors import InputError
from builder.record import SPLITS

KINDS = ("added", "removed", "moved", "relabelled", "text_changed")
LABEL_FIELDS = ("needs_clarification", "category")
# Everything but the id and the label; `target` follows the label, so it counts only when the label is unchanged.
OTHER_FIELDS = (
    "domain", "setting", "history", "query", "documents", "interpretations", "target",
    "clarification_pattern", "resolution", "pair_id", "provenance",
)  # fmt: skip


@dataclass
class Change:
    kind: str
    split: str
    id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    fields: list[str] = field(default_factory=list)
    from_split: str | None = None


@dataclass
class ReleaseDiff:
    a: str
    b: str
    changes: list[Change]

    def of(self, kind: str) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    def counts(self) -> dict[str, dict[str, int]]:
        """kind -> split -> count (split of the newer release; of the older one for removals)."""
        table = {k: {s: 0 for s in SPLITS} for k in KINDS}
        for c in self.changes:
            table[c.kind][c.split] = table[c.kind].get(c.split, 0) + 1
        return table

    def totals(self) -> dict[str, int]:
        return {k: sum(v.values()) for k, v in self.counts().items()}

    @property
    def empty(self) -> bool:
        return not self.changes

    def to_json(self, examples: int = 3) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "totals": self.totals(),
            "counts": self.counts(),
            "examples": {k: [_example(c) for c in self.of(k)[:examples]] for k in KINDS},
        }


def _label(r: dict[str, Any]) -> dict[str, Any]:
    return {"needs_clarification": r["needs_clarification"], "category": r["category"], "target": r["target"]}


def _example(c: Change) -> dict[str, Any]:
    out: dict[str, Any] = {"id": c.id, "split": c.split}
    if c.kind in ("added", "removed"):
        r = c.after if c.kind == "added" else c.before
        out.update(query=r["query"], setting=r["setting"], **_label(r))
    elif c.kind == "moved":
        out.update(from_split=c.from_split)
    elif c.kind == "relabelled":
        out.update(before=_label(c.before), after=_label(c.after))
    else:
        out.update(fields=c.fields, before={f: c.before[f] for f in c.fields}, after={f: c.after[f] for f in c.fields})
    return out


def _index(splits: dict[str, list[dict[str, Any]]], side: str) -> dict[str, tuple[str, dict[str, Any]]]:
    index: dict[str, tuple[str, dict[str, Any]]] = {}
    for split, rows in splits.items():
        for r in rows:
            if r["id"] in index:
                raise InputError(f"{side}: record {r['id']} appears twice (splits {index[r['id']][0]} and {split})")
            index[r["id"]] = (split, r)
    return index


def diff_splits(a: dict[str, list[dict[str, Any]]], b: dict[str, list[dict[str, Any]]], a_name="A", b_name="B") -> ReleaseDiff:
    """Compare two releases given as split -> records."""
    old, new = _index(a, a_name), _index(b, b_name)
    changes: list[Change] = []
    for rid, (split, r) in new.items():
        if rid not in old:
            changes.append(Change("added", split, rid, None, r))
    for rid, (split, r) in old.items():
        if rid not in new:
            changes.append(Change("removed", split, rid, r, None))
    for rid, (split, r) in new.items():
        if rid not in old:
            continue
        old_split, o = old[rid]
        if old_split != split:
            changes.append(Change("moved", split, rid, o, r, from_split=old_split))
        if any(o[f] != r[f] for f in LABEL_FIELDS):
            changes.append(Change("relabelled", split, rid, o, r, [f for f in LABEL_FIELDS if o[f] != r[f]]))
            continue
        changed = [f for f in OTHER_FIELDS if _norm(o.get(f)) != _norm(r.get(f))]
        if changed:
            changes.append(Change("text_changed", split, rid, o, r, changed))
    changes.sort(key=lambda c: (KINDS.index(c.kind), SPLITS.index(c.split) if c.split in SPLITS else 9, c.id))
    return ReleaseDiff(a_name, b_name, changes)


def _norm(value: Any) -> Any:
    """Absent optional fields and nulls compare equal (parquet round trips turn one into the other)."""
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_norm(v) for v in value]
    return value


def render_table(diff: ReleaseDiff, examples: int = 3):
    """A rich renderable: counts per kind and split, then a few examples of each kind."""
    from rich.console import Group
    from rich.table import Table

    counts = diff.counts()
    table = Table(title=f"{diff.a} → {diff.b}")
    table.add_column("change")
    for s in SPLITS:
        table.add_column(s, justify="right")
    table.add_column("total", justify="right")
    for kind in KINDS:
        row = [counts[kind][s] for s in SPLITS]
        table.add_row(kind, *map(str, row), str(sum(row)))
    parts: list[Any] = [table]
    for kind in KINDS:
        items = diff.of(kind)[:examples]
        if not items:
            continue
        ex = Table(title=f"{kind}: {len(items)} of {len(diff.of(kind))}", show_lines=False)
        for col in ("split", "id", "detail"):
            ex.add_column(col, overflow="fold")
        for c in items:
            ex.add_row(c.split, c.id, _detail(c))
        parts.append(ex)
    return Group(*parts)


def _detail(c: Change) -> str:
    if c.kind in ("added", "removed"):
        r = c.after or c.before
        return f"{r['category']}: {_short(r['query'])}"
    if c.kind == "moved":
        return f"from {c.from_split}"
    if c.kind == "relabelled":
        return f"{c.before['category']} → {c.after['category']}"
    return ", ".join(f"{f}: {_short(c.before[f])} → {_short(c.after[f])}" for f in c.fields)


def _short(value: Any, n: int = 60) -> str:
    text = value if isinstance(value, str) else str(value)
    return text if len(text) <= n else text[: n - 1] + "…"
