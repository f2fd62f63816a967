"""Human labels -> label fixes for the next (patch) release.

`plan_fixes` decides, per annotated record, from the annotators' majority:
- relabel: the humans' label or category differs and their answers hold all the schema needs;
- retarget: label confirmed but the clarification judged unacceptable, and a better one was suggested;
- needs_curation: a fix is due but something the schema requires is missing (say, a hard negative
  without a resolution); the record stays as it is unless `drop_unfixable`, which drops it (a minor bump);
- undecided: annotators tied.
Fixed records get provenance.label_source = "human" and are validated against the schema.

`fixes.jsonl` (one Fix per line) is the interface to the release stage: `apply_fixes(splits, fixes)`
returns the patched splits. `write_patch_release` does both and writes the next release directory.
"""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from builder.audit.annotations import Annotation
from builder.audit.metrics import Consensus, consensus
from builder.audit.release import AuditRelease, strip_split
from builder.errors import InputError
from builder.io import iter_jsonl, write_jsonl
from builder.record import CLEAR, NEGATIVE_CATEGORIES, POSITIVE_CATEGORIES, SPLITS

ACTIONS = ("relabel", "retarget", "drop", "needs_curation", "undecided")
CHANGING = ("relabel", "retarget", "drop")


@dataclass
class Fix:
    record_id: str
    split: str
    action: str
    reason: str
    before: dict[str, Any]  # needs_clarification, category, target
    after: dict[str, Any] | None  # the whole fixed record (relabel, retarget); None otherwise
    annotators: list[str]
    votes: dict[str, dict[str, int]]
    label_source: str = "human"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _label(record: dict[str, Any]) -> dict[str, Any]:
    return {"needs_clarification": record["needs_clarification"], "category": record["category"], "target": record["target"]}


def _as_negative(record: dict[str, Any], category: str) -> tuple[dict[str, Any] | None, str]:
    if category == "hard_negative" and not record.get("resolution"):
        return None, "humans say hard_negative, which needs a resolution (referent, resolved query); the record has none"
    return dict(record, needs_clarification=False, category=category, target={"clarification": CLEAR},
                clarification_pattern=None, interpretations=[]), ""


def _as_positive(record: dict[str, Any], category: str, verdict: Consensus) -> tuple[dict[str, Any] | None, str]:
    question = record["target"]["clarification"]
    if not record["needs_clarification"] or (verdict.acceptable is False and verdict.suggestion):
        question = verdict.suggestion
    readings = verdict.interpretations or (record["interpretations"] if len(record["interpretations"]) >= 2 else [])
    missing = [name for name, value in (("suggested_clarification", question), ("interpretations (2+)", readings)) if not value]
    if missing:
        return None, f"humans say {category} (needs clarification) but gave no {' and no '.join(missing)}"
    pattern = record.get("clarification_pattern") if record["needs_clarification"] else None
    return dict(record, needs_clarification=True, category=category, target={"clarification": question},
                interpretations=list(readings), resolution=None, clarification_pattern=pattern), ""


def _decide(record: dict[str, Any], v: Consensus) -> tuple[str, str, dict[str, Any] | None]:
    if v.needs_clarification is None:
        return "undecided", "annotators tie on needs_clarification", None
    category = v.category
    if category is None:
        # No majority category: keep the generated one if it fits the human label, else the side's default.
        if v.needs_clarification == record["needs_clarification"]:
            category = record["category"]
        elif not v.needs_clarification:
            category = "clear"
        else:
            return "needs_curation", "humans say needs clarification but agree on no category", None
    expected = POSITIVE_CATEGORIES if v.needs_clarification else NEGATIVE_CATEGORIES
    if category not in expected:
        return "undecided", f"majority category {category} contradicts the majority label", None
    if category != record["category"] or v.needs_clarification != record["needs_clarification"]:
        fixed, why = _as_positive(record, category, v) if v.needs_clarification else _as_negative(record, category)
        if fixed is None:
            return "needs_curation", why, None
        return "relabel", f"{record['category']} -> {category} by human majority", fixed
    if record["needs_clarification"] and v.acceptable is False:
        if v.suggestion:
            fixed = dict(record, target={"clarification": v.suggestion}, clarification_pattern=None)
            return "retarget", "clarification judged unacceptable; replaced by the annotators' suggestion", fixed
        return "needs_curation", "clarification judged unacceptable and no replacement was suggested", None
    return "ok", "", None


def plan_fixes(release: AuditRelease, annotations: list[Annotation], drop_unfixable: bool = False) -> list[Fix]:
    import jsonschema

    from builder.resources import load_schema

    validator = jsonschema.Draft202012Validator(load_schema("clariedge.schema.json"))
    fixes = []
    for rid, verdict in consensus(annotations).items():
        record = release.records[rid]
        action, reason, fixed = _decide(strip_split(record), verdict)
        if action == "ok":
            continue
        if action == "needs_curation" and drop_unfixable:
            action, reason = "drop", f"dropped: {reason}"
        if fixed is not None:
            fixed = copy.deepcopy(fixed)
            fixed["provenance"] = dict(fixed["provenance"], label_source="human")
            errors = sorted(validator.iter_errors(fixed), key=lambda e: list(e.path))
            if errors:
                raise InputError(f"record {rid}: the fix does not fit the schema at "
                                 f"{'/'.join(map(str, errors[0].path)) or '(root)'}: {errors[0].message}")
        fixes.append(Fix(rid, record["split"], action, reason, _label(record), fixed, verdict.annotators, verdict.votes))
    return fixes


def summary(fixes: list[Fix]) -> dict[str, int]:
    counts = Counter(f.action for f in fixes)
    return {a: counts.get(a, 0) for a in ACTIONS}


def write_fixes(path: Path, fixes: list[Fix]) -> None:
    write_jsonl(path, (f.to_dict() for f in fixes))


def read_fixes(path: Path) -> list[Fix]:
    out = []
    for lineno, row in iter_jsonl(path):
        try:
            fix = Fix(**row)
        except TypeError as err:
            raise InputError(f"{path}:{lineno}: not a fix ({err})") from None
        if fix.action not in ACTIONS:
            raise InputError(f"{path}:{lineno}: field 'action': unknown value '{fix.action}'")
        if fix.action in ("relabel", "retarget") and not fix.after:
            raise InputError(f"{path}:{lineno}: field 'after': a {fix.action} needs the fixed record")
        out.append(fix)
    return out


def apply_fixes(splits: dict[str, list[dict[str, Any]]], fixes: list[Fix]) -> dict[str, list[dict[str, Any]]]:
    """Patched copy of `splits`: relabels and retargets replace their record in place, drops remove it.
    needs_curation and undecided change nothing. Every changing fix must find its record."""
    by_id = {f.record_id: f for f in fixes if f.action in CHANGING}
    found: set[str] = set()
    out: dict[str, list[dict[str, Any]]] = {}
    for split in SPLITS:
        rows = []
        for record in splits.get(split, []):
            fix = by_id.get(record["id"])
            if fix is None:
                rows.append(record)
                continue
            found.add(record["id"])
            if fix.action != "drop":
                rows.append(fix.after)
        out[split] = rows
    missing = sorted(set(by_id) - found)
    if missing:
        raise InputError(f"fixes name {len(missing)} record(s) the release does not have, e.g. {missing[0]}")
    return out


def _fixes_section(fixes: list[Fix], parent: str) -> str:
    counts = summary(fixes)
    lines = [f"Label fixes from human annotation of {parent} (`clariedge audit apply`); "
             "fixed records carry `provenance.label_source = \"human\"`.", "",
             "| action | records |", "|---|---:|"]
    lines += [f"| {a} | {counts[a]} |" for a in ACTIONS if counts[a]]
    return "\n".join(lines)


def write_patch_release(release: AuditRelease, fixes: list[Fix], out_dir: Path, fixes_file: Path | None = None) -> tuple[Path, str]:
    """The next release: patch version for relabels/retargets only, minor when records are dropped."""
    from builder.release import load_release, sha256_file
    from builder.release.derived import write_derived_release
    from builder.release.versioning import bump_version

    splits = apply_fixes(load_release(release.path), fixes)
    bump = "minor" if any(f.action == "drop" for f in fixes) else "patch"
    version = bump_version(release.version, bump)
    updates = {
        "parent_version": release.version,
        "label_fixes": {**summary(fixes), **({"fixes_sha256": sha256_file(fixes_file)} if fixes_file else {})},
    }
    write_derived_release(release.path, release.manifest, Path(out_dir), splits, name=release.name, version=version,
                          manifest_updates=updates, body_sections={"Label fixes": _fixes_section(fixes, release.version)})
    return Path(out_dir), version
