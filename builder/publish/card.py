"""The card as published: the release's card, updated for the Hub, merged with the card already there.

Merge rules (so a curator's work on the Hub survives the next publish):
- YAML: the existing metadata is kept; the release's keys win; `configs` always comes from the release.
- Body: text outside `clariedge` markers is the curator's and stays where it is. A generated section whose
  text no longer matches its recorded hash was edited by hand and is kept as is. Other generated sections
  are replaced. The changelog keeps every earlier entry and gets this version's entry, made from the diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.card import (
    PLOT_PATH,
    changelog_text,
    label_plot_png,
    loading_text,
    section,
    section_digest,
)
from builder.publish.diff import KINDS, ReleaseDiff, diff_splits
from builder.record import SPLITS

_BLOCK = re.compile(
    r"<!-- clariedge:begin (?P<key>[\w.-]+) sha256=(?P<digest>[0-9a-f]+) -->\n(?P<inner>.*?)\n<!-- clariedge:end (?P=key) -->",
    re.DOTALL,
)
_ENTRY = re.compile(r"^### ", re.MULTILINE)


@dataclass
class Block:
    key: str
    digest: str
    inner: str

    @property
    def edited(self) -> bool:
        return section_digest(self.inner) != self.digest

    def render(self) -> str:
        if self.edited:  # keep the old digest so it stays marked as hand-edited
            return f"<!-- clariedge:begin {self.key} sha256={self.digest} -->\n{self.inner}\n<!-- clariedge:end {self.key} -->"
        return section(self.key, self.inner)


def parse_body(body: str) -> list[str | Block]:
    """Body as a list of free text (str) and generated blocks, in order."""
    out: list[str | Block] = []
    pos = 0
    for m in _BLOCK.finditer(body):
        out.append(body[pos : m.start()])
        out.append(Block(m["key"], m["digest"], m["inner"]))
        pos = m.end()
    out.append(body[pos:])
    return [p for p in out if not (isinstance(p, str) and p == "")]


def changelog_entry(version: str, previous: tuple[str, dict[str, list[dict[str, Any]]]] | None, splits, examples: int = 2) -> str:
    """Markdown for one `### v<version>` entry, from the diff against the previous version."""
    total = sum(len(v) for v in splits.values())
    if previous is None:
        return f"### v{version}\n\nFirst published version: {total} records."
    prev_version, prev_splits = previous
    diff = diff_splits(prev_splits, splits, f"v{prev_version}", f"v{version}")
    return f"### v{version}\n\n" + diff_markdown(diff, examples)


def diff_markdown(diff: ReleaseDiff, examples: int = 2) -> str:
    t = diff.totals()
    head = f"Compared with {diff.a}: " + ", ".join(f"{t[k]} {k.replace('_', '-')}" for k in KINDS) + "."
    if diff.empty:
        return head
    counts = diff.counts()
    lines = ["| change | " + " | ".join(SPLITS) + " | total |", "|---|" + "---:|" * (len(SPLITS) + 1)]
    for k in KINDS:
        lines.append(f"| {k} | " + " | ".join(str(counts[k][s]) for s in SPLITS) + f" | {t[k]} |")
    ex = []
    for k in KINDS:
        for c in diff.of(k)[:examples]:
            if k in ("added", "removed"):
                r = c.after or c.before
                ex.append(f"- {k} `{c.id}` ({c.split}, {r['category']}): {_short(r['query'])}")
            elif k == "moved":
                ex.append(f"- moved `{c.id}`: {c.from_split} → {c.split}")
            elif k == "relabelled":
                ex.append(f"- relabelled `{c.id}` ({c.split}): {c.before['category']} → {c.after['category']}")
            else:
                ex.append(f"- text changed `{c.id}` ({c.split}): {', '.join(c.fields)}")
    return head + "\n\n" + "\n".join(lines) + "\n\nExamples:\n\n" + "\n".join(ex)


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def merge_changelog(existing_inner: str, new_inner: str) -> str:
    """New entries first, then every earlier entry not superseded (same version heading)."""

    def entries(inner: str) -> list[tuple[str, str]]:
        parts = _ENTRY.split(inner)[1:]
        return [(p.split(None, 1)[0] if p.strip() else "", "### " + p.strip()) for p in parts]

    new = entries(new_inner)
    seen = {v for v, _ in new}
    kept = [e for v, e in entries(existing_inner) if v not in seen]
    return changelog_text("\n\n".join([e for _, e in new] + kept))


def merge_body(existing: str | None, fresh: str) -> tuple[str, list[str]]:
    """(merged body, keys of hand-edited sections that were kept)."""
    fresh_blocks = {p.key: p for p in parse_body(fresh) if isinstance(p, Block)}
    if existing is None:
        return fresh, []
    parts = parse_body(existing)
    if not any(isinstance(p, Block) for p in parts):
        return fresh.rstrip() + "\n\n" + existing.lstrip(), []  # a hand-written card: keep all of it below
    kept_edited: list[str] = []
    present = set()
    out: list[str | Block] = []
    for p in parts:
        if isinstance(p, Block):
            present.add(p.key)
            if p.key == "changelog" and "changelog" in fresh_blocks:
                p = Block("changelog", "", merge_changelog(p.inner, fresh_blocks["changelog"].inner))
                p.digest = section_digest(p.inner)
            elif p.edited:
                kept_edited.append(p.key)
            elif p.key in fresh_blocks:
                p = fresh_blocks[p.key]
        out.append(p)
    # Sections new in this release go after the section that precedes them in the fresh card.
    order = list(fresh_blocks)
    for i, key in enumerate(order):
        if key in present:
            continue
        anchor = next((k for k in reversed(order[:i]) if k in present), None)
        at = len(out) if anchor is None else next(j for j, p in enumerate(out) if isinstance(p, Block) and p.key == anchor) + 1
        out[at:at] = ["\n\n", fresh_blocks[key]]
        present.add(key)
    body = "".join(p.render() if isinstance(p, Block) else p for p in out)
    return body, kept_edited


# Editorial keys: the release only seeds them, and a curator's value on the Hub wins.
CURATED_KEYS = ("tags",)


def merge_metadata(existing: dict[str, Any] | None, fresh: dict[str, Any]) -> dict[str, Any]:
    merged = dict(existing or {})
    merged.update({k: v for k, v in fresh.items() if not (k in CURATED_KEYS and merged.get(k))})
    merged["configs"] = fresh["configs"]  # never dropped, never stale
    return merged


def publish_card(
    release_dir: Path,
    manifest: dict[str, Any],
    repo_id: str,
    existing: str | None,
    previous: tuple[str, dict[str, list[dict[str, Any]]]] | None,
) -> tuple[str, bytes | None, list[str]]:
    """(card text, label plot PNG or None when the release has one, hand-edited sections kept from the Hub)."""
    from huggingface_hub import DatasetCard, DatasetCardData

    from builder.errors import InputError
    from builder.release import load_release

    release_dir = Path(release_dir)
    version = str(manifest["version"])
    splits = load_release(release_dir)
    local = DatasetCard.load(release_dir / "README.md")
    local_meta = local.data.to_dict()
    if not local_meta.get("configs"):
        raise InputError(f"{release_dir / 'README.md'}: the card's YAML has no configs")
    # The release's card, with the parts only publishing knows: the repo id and the changelog entry.
    fresh_parts = parse_body(local.text)
    updates = {
        "loading": loading_text(repo_id, version),
        "changelog": changelog_text(changelog_entry(version, previous, splits)),
        "plot": f"![Label distribution]({PLOT_PATH})",
    }
    keys = {p.key for p in fresh_parts if isinstance(p, Block)}
    fresh_parts = [Block(p.key, "", updates[p.key]) if isinstance(p, Block) and p.key in updates else p for p in fresh_parts]
    fresh_parts += [Block(k, "", v) for k, v in updates.items() if k not in keys]
    for p in fresh_parts:
        if isinstance(p, Block) and not p.digest:
            p.digest = section_digest(p.inner)
    fresh_body = "".join(p.render() if isinstance(p, Block) else p for p in fresh_parts)
    fresh_body = re.sub(r"(<!-- clariedge:end [\w.-]+ -->)(?=<!-- clariedge:begin)", r"\1\n\n", fresh_body)

    old = DatasetCard(existing) if existing else None
    body, kept = merge_body(old.text if old else None, fresh_body)
    meta = merge_metadata(old.data.to_dict() if old else None, local_meta)
    card = DatasetCard(f"---\n{DatasetCardData(**meta).to_yaml()}\n---\n\n{body.lstrip()}")
    plot = None if PLOT_PATH in manifest.get("files", {}) else label_plot_png(splits)
    return str(card), plot, kept
