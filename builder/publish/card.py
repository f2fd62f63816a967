"""The card as published: the release's card, updated for the Hub, merged with the card already there.

Merge rules (so a curator's work on the Hub survives the next publish):
- YAML: the existing metadata is kept; the release's keys win; `configs` always comes from the release.
- Body: text outside `clariedge` markers is the curator's and stays where it is. A generated section whose
  text no longer matches its recorded hash was edited by hand and is kept as is. Other generated sections
  are replaced. The changelog keeps every earlier entry and gets this version's entry, made from the diff.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from builder.release.card import (
    PLOT_PATH,
    Block,
    changelog_entry,
    changelog_text,
    label_plot_png,
    loading_text,
    merge_body,
    merge_metadata,
    parse_body,
    section_digest,
)


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
