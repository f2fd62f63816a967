"""Where things are in a release directory, and the one way every command opens one.

A release is `data/<split>.parquet` (plus per-setting copies), `README.md`, `manifest.json` and
`accounting.jsonl`, as `builder.release.writer` writes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.io import read_json
from builder.record import SPLITS

DATA = "data"
MANIFEST = "manifest.json"
CARD = "README.md"
ACCOUNTING = "accounting.jsonl"


def split_file(split: str) -> str:
    """`data/<split>.parquet`, relative to the release directory."""
    return f"{DATA}/{split}.parquet"


def not_a_release(path: Path, missing: str) -> InputError:
    """The one error for a folder that is not a release directory."""
    return InputError(f"{path}: not a release directory (no {missing})")


@dataclass(frozen=True)
class ReleaseDir:
    path: Path
    manifest: dict[str, Any] | None  # None when the folder has no manifest.json (e.g. hand-made test data)

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def split_path(self, split: str) -> Path:
        return self.path / split_file(split)

    def load(self) -> dict[str, list[dict[str, Any]]]:
        """All records, by split."""
        from builder.release.writer import load_release

        return load_release(self.path)

    def field(self, key: str) -> Any:
        """A manifest field that must be there (name, version, files, ...)."""
        if self.manifest is None:
            raise not_a_release(self.path, MANIFEST)
        if key not in self.manifest or self.manifest[key] in (None, ""):
            raise InputError(f"{self.manifest_path}: field '{key}' is missing")
        return self.manifest[key]


def open_release(path: str | Path, *, splits: tuple[str, ...] = SPLITS, need_manifest: bool = False) -> ReleaseDir:
    """Check that `path` holds a release (the given splits' parquet files, the manifest when needed) and read its manifest."""
    path = Path(path)
    for split in splits:
        if not (path / split_file(split)).is_file():
            raise not_a_release(path, split_file(split))
    manifest_path = path / MANIFEST
    if need_manifest and not manifest_path.is_file():
        raise not_a_release(path, MANIFEST)
    manifest = read_json(manifest_path) if manifest_path.is_file() else None
    return ReleaseDir(path, manifest)
