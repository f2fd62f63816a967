"""A release as the audit sees it: records by id (with their split), plus name and version."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.record import SPLITS, label_of


@dataclass
class AuditRelease:
    path: Path
    name: str
    version: str
    manifest: dict[str, Any]
    records: dict[str, dict[str, Any]]  # id -> record, each with "split" added
    ordered: list[str]  # ids in split order, then file order

    def __len__(self) -> int:
        return len(self.records)


def field_value(record: dict[str, Any], field: str) -> str:
    """A stratification / grouping value: `label` is derived, everything else is a top-level field."""
    if field == "label":
        return label_of(record)
    return str(record[field])


def open_release(path: Path) -> AuditRelease:
    from builder.release import layout

    release = layout.open_release(path, need_manifest=True)
    name, version = release.field("name"), release.field("version")
    path, manifest, splits = release.path, release.manifest, release.load()
    records: dict[str, dict[str, Any]] = {}
    ordered: list[str] = []
    for split in SPLITS:
        for record in splits[split]:
            if record["id"] in records:
                raise InputError(f"{path}: record id {record['id']} appears twice ({records[record['id']]['split']}, {split})")
            records[record["id"]] = {**record, "split": split}
            ordered.append(record["id"])
    return AuditRelease(path, str(name), str(version), manifest, records, ordered)


def strip_split(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "split"}
