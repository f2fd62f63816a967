"""Deprecated alias: the release diff lives in `builder.release.diff` (Hub sides: `builder.publish.hub.load_side`).

TODO(coordinator): drop once builder/publish/card.py imports builder.release.diff.
"""

from builder.release.diff import KINDS, LABEL_FIELDS, OTHER_FIELDS, Change, ReleaseDiff, diff_splits, render_table

__all__ = ["KINDS", "LABEL_FIELDS", "OTHER_FIELDS", "Change", "ReleaseDiff", "diff_splits", "render_table"]
