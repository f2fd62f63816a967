"""Import annotator answers (Label Studio JSON / JSON-MIN exports, filled CSVs) into one labels.jsonl.

One line per (record, annotator), with the time of the annotation and where it came from.
Every problem is collected and reported together, each naming its file and row; nothing is dropped
without being counted.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from builder.audit.release import AuditRelease
from builder.audit.sample import ANSWER_COLUMNS
from builder.errors import InputError
from builder.io import iter_jsonl, read_json, read_text, write_jsonl
from builder.record import NEGATIVE_CATEGORIES, POSITIVE_CATEGORIES

CATEGORIES = POSITIVE_CATEGORIES + NEGATIVE_CATEGORIES
YES = {"yes", "y", "true", "1"}
NO = {"no", "n", "false", "0"}
NOT_APPLICABLE = {"", "n/a", "na"}
# Label Studio control names (annotations/label_studio_config.xml) -> our fields.
LS_FIELDS = ("needs_clarification", "category", "clarification_acceptable", "suggested_clarification",
             "interpretations", "comment")
MAX_LISTED = 15


@dataclass
class Annotation:
    record_id: str
    annotator: str
    needs_clarification: bool
    category: str | None
    clarification_acceptable: bool | None
    suggested_clarification: str | None
    comment: str
    annotated_at: str  # ISO 8601, UTC
    source: str  # "file:row" or "file:task N annotation M"
    time_source: str = "annotation"  # or "file_mtime" when a CSV row had no time
    interpretations: list[str] = field(default_factory=list)  # readings, when the annotator says "needs clarification"

    def key(self) -> tuple[str, str]:
        return (self.record_id, self.annotator)

    def answer(self) -> tuple:
        """What the annotator said, without where/when it was read."""
        return (self.needs_clarification, self.category, self.clarification_acceptable,
                self.suggested_clarification, tuple(self.interpretations), self.comment)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ImportResult:
    annotations: list[Annotation]
    unannotated: list[str] = field(default_factory=list)  # sources of empty rows / tasks
    cancelled: list[str] = field(default_factory=list)  # Label Studio skips
    unchanged: int = 0  # already in labels.jsonl with the same answer
    added: int = 0


class Problems:
    """Collects errors so one run reports all of them."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, message: str) -> None:
        self.items.append(message)

    def raise_if_any(self, what: str) -> None:
        if self.items:
            shown = "; ".join(self.items[:MAX_LISTED])
            more = f"; and {len(self.items) - MAX_LISTED} more" if len(self.items) > MAX_LISTED else ""
            raise InputError(f"{what}: {len(self.items)} problem(s): {shown}{more}")


# ---- value normalization ------------------------------------------------------------------------


def parse_bool(value: Any, where: str, name: str, problems: Problems, optional: bool) -> bool | None:
    text = "" if value is None else str(value).strip().lower()
    if text in YES:
        return True
    if text in NO:
        return False
    if optional and text in NOT_APPLICABLE:
        return None
    expected = "yes/no" + (" or blank" if optional else "")
    problems.add(f"{where}: field '{name}': unknown value '{value}' (expected {expected})")
    return None


def parse_category(value: Any, where: str, problems: Problems) -> str | None:
    text = "" if value is None else str(value).strip().lower().replace(" ", "_").replace("-", "_")
    if text in NOT_APPLICABLE:
        return None
    if text not in CATEGORIES:
        problems.add(f"{where}: field 'category': unknown value '{value}' (expected one of {', '.join(CATEGORIES)})")
        return None
    return text


def parse_time(value: Any, where: str, problems: Problems) -> str | None:
    text = "" if value is None else str(value).strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        problems.add(f"{where}: field 'annotated_at': not an ISO 8601 time: '{value}'")
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def build_annotation(raw: dict[str, Any], where: str, time: str | None, release: AuditRelease,
                     problems: Problems, time_source: str = "annotation") -> Annotation | None:
    """Validate one (record, annotator) answer; None (and problems noted) when it is unusable."""
    before = len(problems.items)
    record_id = str(raw.get("record_id") or "").strip()
    annotator = str(raw.get("annotator") or "").strip()
    if not record_id:
        problems.add(f"{where}: field 'record_id' is empty")
    elif record_id not in release.records:
        problems.add(f"{where}: record_id '{record_id}' is not in release {release.name} {release.version}")
    if not annotator:
        problems.add(f"{where}: field 'annotator' is empty (fill the column or pass --annotator)")
    needs = parse_bool(raw.get("needs_clarification"), where, "needs_clarification", problems, optional=False)
    category = parse_category(raw.get("category"), where, problems)
    acceptable = parse_bool(raw.get("clarification_acceptable"), where, "clarification_acceptable", problems, optional=True)
    if needs is not None and category is not None:
        expected = POSITIVE_CATEGORIES if needs else NEGATIVE_CATEGORIES
        if category not in expected:
            problems.add(f"{where}: category '{category}' contradicts needs_clarification={'yes' if needs else 'no'}")
    if time is None:
        problems.add(f"{where}: no annotation time")
    if len(problems.items) > before or not time:  # time "" = a bad time, already reported
        return None
    suggestion = str(raw.get("suggested_clarification") or "").strip() or None
    readings = [line.strip() for line in str(raw.get("interpretations") or "").splitlines() if line.strip()]
    return Annotation(record_id, annotator, bool(needs), category, acceptable, suggestion,
                      str(raw.get("comment") or "").strip(), str(time), where, time_source, readings)


def is_blank(raw: dict[str, Any]) -> bool:
    return all(not str(raw.get(k) or "").strip() for k in LS_FIELDS)


# ---- readers --------------------------------------------------------------------------------------


def read_csv(path: Path, release: AuditRelease, problems: Problems, default_annotator: str | None) -> ImportResult:
    text = read_text(path).removeprefix("\ufeff")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [c for c in ("record_id", "needs_clarification", "category", "clarification_acceptable", "comment")
               if c not in header]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)} (export a fresh sample.csv for the layout)")
    mtime = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat().replace("+00:00", "Z")
    result = ImportResult([])
    for row_number, row in enumerate(reader, start=2):  # row 1 is the header, as a spreadsheet counts
        where = f"{path}:row {row_number}"
        if None in row:
            problems.add(f"{where}: more cells than header columns")
            continue
        if is_blank(row):
            result.unannotated.append(where)
            continue
        raw = dict(row)
        raw["annotator"] = (row.get("annotator") or "").strip() or default_annotator
        source = "annotation"
        if str(row.get("annotated_at") or "").strip():
            time = parse_time(row.get("annotated_at"), where, problems) or ""
        else:
            time, source = mtime, "file_mtime"
        item = build_annotation(raw, where, time, release, problems, source)
        if item:
            result.annotations.append(item)
    return result


def _ls_user(value: Any) -> str:
    """Label Studio writes `completed_by` as a user id, or as a user object in some versions."""
    if isinstance(value, dict):
        return str(value.get("email") or value.get("username") or value.get("id") or "")
    return "" if value is None else f"ls-user-{value}"


def _ls_value(item: dict[str, Any]) -> str:
    value = item.get("value") or {}
    if "choices" in value:
        return ", ".join(value["choices"])
    if "text" in value:
        text = value["text"]
        return "\n".join(text) if isinstance(text, list) else str(text)
    return ""


def read_label_studio(path: Path, release: AuditRelease, problems: Problems) -> ImportResult:
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a Label Studio export (a JSON list of tasks)")
    result = ImportResult([])
    for index, task in enumerate(data, start=1):
        if not isinstance(task, dict):
            problems.add(f"{path}: task {index}: not a JSON object")
            continue
        task_where = f"{path}:task {task.get('id', index)}"
        if "annotations" in task:  # full JSON export
            record_id = (task.get("data") or {}).get("record_id")
            answered = [a for a in task["annotations"] if not a.get("was_cancelled")]
            result.cancelled += [f"{task_where} annotation {a.get('id')}" for a in task["annotations"] if a.get("was_cancelled")]
            if not answered:
                result.unannotated.append(task_where)
            for ann in answered:
                where = f"{task_where} annotation {ann.get('id')}"
                raw: dict[str, Any] = {"record_id": record_id, "annotator": _ls_user(ann.get("completed_by"))}
                for item in ann.get("result") or []:
                    name = item.get("from_name")
                    if name not in LS_FIELDS:
                        problems.add(f"{where}: unknown control '{name}' (the project's labeling config differs from annotations/label_studio_config.xml)")
                        continue
                    raw[name] = _ls_value(item)
                stamp = ann.get("updated_at") or ann.get("created_at")
                time = parse_time(stamp, where, problems) if stamp else None
                item = build_annotation(raw, where, "" if stamp and time is None else time, release, problems)
                if item:
                    result.annotations.append(item)
        elif "annotator" in task:  # JSON-MIN export: one flat object per annotation
            where = f"{task_where} annotation {task.get('annotation_id')}"
            raw = {k: task.get(k) for k in ("record_id", *LS_FIELDS)}
            raw["annotator"] = _ls_user(task.get("annotator")) if not isinstance(task.get("annotator"), str) else task["annotator"]
            stamp = task.get("updated_at") or task.get("created_at")
            time = parse_time(stamp, where, problems) if stamp else None
            item = build_annotation(raw, where, "" if stamp and time is None else time, release, problems)
            if item:
                result.annotations.append(item)
        elif "data" in task:  # the import file itself, or a task nobody has opened
            result.unannotated.append(task_where)
        else:
            problems.add(f"{task_where}: neither 'annotations' (JSON export) nor 'annotator' (JSON-MIN export)")
    return result


def read_annotation_file(path: Path, release: AuditRelease, problems: Problems, default_annotator: str | None) -> ImportResult:
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return read_csv(path, release, problems, default_annotator)
    if suffix == ".json":
        return read_label_studio(path, release, problems)
    raise InputError(f"{path}: unknown annotation file type '{suffix}' (expected .csv or a Label Studio .json export)")


# ---- labels.jsonl ---------------------------------------------------------------------------------


def labels_path(annotations_dir: Path, release: AuditRelease) -> Path:
    return Path(annotations_dir) / release.version / "labels.jsonl"


def load_labels(path: Path) -> list[Annotation]:
    names = set(Annotation.__dataclass_fields__)
    out = []
    for lineno, row in iter_jsonl(path):
        unknown = set(row) - names - {"dataset", "version"}
        if unknown:
            raise InputError(f"{path}:{lineno}: unknown field(s) {', '.join(sorted(unknown))}")
        try:
            out.append(Annotation(**{k: v for k, v in row.items() if k in names}))
        except TypeError as err:
            raise InputError(f"{path}:{lineno}: {err}") from None
    return out


def import_files(files: Iterable[Path], release: AuditRelease, labels_file: Path, *,
                 default_annotator: str | None = None, replace: bool = False) -> ImportResult:
    """Read every file, check it all, then merge into `labels_file` (or rebuild it with `replace`)."""
    problems = Problems()
    total = ImportResult([])
    for path in files:
        part = read_annotation_file(path, release, problems, default_annotator)
        total.annotations += part.annotations
        total.unannotated += part.unannotated
        total.cancelled += part.cancelled
    seen: dict[tuple[str, str], Annotation] = {}
    for item in total.annotations:
        if item.key() in seen:
            problems.add(f"{item.source}: duplicate annotation of {item.record_id} by '{item.annotator}' "
                         f"(also at {seen[item.key()].source})")
        else:
            seen[item.key()] = item
    existing = {a.key(): a for a in load_labels(labels_file)} if labels_file.exists() and not replace else {}
    merged = dict(existing)
    for key, item in seen.items():
        old = existing.get(key)
        if old is None:
            merged[key] = item
            total.added += 1
        elif old.answer() == item.answer():
            total.unchanged += 1
        else:
            problems.add(f"{item.source}: {item.record_id} by '{item.annotator}' was already imported from "
                         f"{old.source} with a different answer (use --replace to rebuild {labels_file} from the given files)")
    problems.raise_if_any("import failed, nothing written")
    rows = [{**merged[k].to_dict(), "dataset": release.name, "version": release.version} for k in sorted(merged)]
    write_jsonl(labels_file, rows)
    total.annotations = [merged[k] for k in sorted(merged)]
    return total
