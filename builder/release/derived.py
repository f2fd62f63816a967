"""A release made from an earlier one (label fixes from `audit apply`): same card and manifest shape, new records.

The parent's manifest is carried over (less its file hashes), the card is rendered afresh from the new records,
and the parent's accounting travels along, so a derived release is written the same way as a built one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from builder.io import read_jsonl
from builder.release.layout import ACCOUNTING
from builder.release.writer import write_release


def write_derived_release(
    parent_dir: Path,
    parent_manifest: dict[str, Any],
    out_dir: Path,
    splits: dict[str, list[dict[str, Any]]],
    *,
    name: str,
    version: str,
    manifest_updates: dict[str, Any],
    body_sections: dict[str, str],
) -> Path:
    """Write `out_dir` as the next release after `parent_dir`; `manifest_updates` says what changed and why."""
    from builder.release.card import card_assets, render_card

    all_records = [r for rows in splits.values() for r in rows]
    manifest = {k: v for k, v in parent_manifest.items() if k != "files"}
    manifest.update(version=version, **manifest_updates)
    methods = {r["provenance"]["method"]: r["provenance"]["method_version"] for r in all_records}
    card = render_card(
        splits,
        name=name,
        version=version,
        license=str(parent_manifest.get("license", "see the parent release")),
        source_datasets=sorted({r["provenance"]["source_dataset"] for r in all_records}),
        methods=methods,
        body_sections=body_sections,
        descriptions=parent_manifest.get("generator_descriptions"),
    )
    extra = {}
    accounting = Path(parent_dir) / ACCOUNTING
    if accounting.exists():
        extra[ACCOUNTING] = read_jsonl(accounting)
    return write_release(Path(out_dir), splits, manifest, card, extra_files=extra, assets=card_assets(splits))
