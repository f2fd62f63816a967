"""Hand-made, schema-valid releases for the audit tests (no tests here).

Each category has its own phrasing, drawn from shared pools, so a text classifier can learn it
but not trivially: pronouns, products and numbers recur across categories.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import jsonschema

from builder.record import NEGATIVE_CATEGORIES, POSITIVE_CATEGORIES, Record, clear_target
from builder.release import write_release
from builder.resources import load_schema

CATEGORIES = POSITIVE_CATEGORIES + NEGATIVE_CATEGORIES
DOMAINS = ("banking", "cloud", "travel", "health")
PRODUCTS = {
    "banking": ["savings account", "credit card", "mortgage", "student loan", "checking account"],
    "cloud": ["object storage", "load balancer", "Kubernetes service", "VPN gateway", "database instance"],
    "travel": ["rail pass", "hotel booking", "flight ticket", "car rental", "travel insurance"],
    "health": ["flu vaccine", "dental plan", "blood test", "physiotherapy", "eye exam"],
}
ASPECTS = ["fees", "limits", "setup steps", "cancellation rules", "eligibility", "pricing tiers"]
PRONOUNS = ["it", "that one", "them", "this", "the other one"]


def _query(category: str, rng: random.Random, a: str, b: str, aspect: str) -> str:
    pron = rng.choice(PRONOUNS)
    if category == "unresolved_reference":
        return rng.choice([f"What are the {aspect} for {pron}?", f"How do I cancel {pron}?",
                           f"Is {pron} cheaper?", f"Can you explain {pron} again?"])
    if category == "hard_negative":
        return rng.choice([f"And what are the {aspect} of {pron}?", f"So how would I cancel {pron}?",
                           f"Does {pron} have {aspect} too?"])
    if category == "underspecified_entity":
        return rng.choice([f"What are the {aspect} of the plan?", f"Tell me the {aspect} for the account",
                           f"Which {aspect} apply to the service?", "How much is the standard option?"])
    if category == "missing_parameter":
        return rng.choice([f"How much would I pay per month?", "Convert the amount for me",
                           f"Calculate the total {aspect} for my trip", "How long will it take to arrive?",
                           "What would my rate be?"])
    if category == "ill_formed":
        return rng.choice([f"{aspect} {a} vs vs ??", f"the {a} how the {aspect} when",
                           f"{b} {aspect} and or not ??", "cancel cancel it why the"])
    if category == "multiple_interpretations":
        return rng.choice([f"Is the {a} better?", f"What is the best {a}?", f"Should I use the {a} or not?",
                           f"Which {a} is right?"])
    return rng.choice([f"What are the {aspect} of the {a} for a new customer in 2024?",
                       f"How do I cancel my {a} online before the renewal date?",
                       f"List the {aspect} of the {a} compared with the {b}."])


def make_record(category: str, setting: str, domain: str, rng: random.Random, n: int) -> dict[str, Any]:
    a, b = rng.sample(PRODUCTS[domain], 2)
    aspect = rng.choice(ASPECTS)
    if category in ("unresolved_reference", "multiple_interpretations"):
        history = [{"role": "user", "content": f"I am comparing the {a} and the {b}."},
                   {"role": "assistant", "content": f"Both the {a} and the {b} are popular; they differ in {aspect}."}]
    elif category == "hard_negative":
        history = [{"role": "user", "content": f"Tell me about the {a}."},
                   {"role": "assistant", "content": f"The {a} is our most requested option, and you mentioned only the {a}."}]
    elif category == "clear" and rng.random() < 0.5:
        history = []
    else:
        history = [{"role": "user", "content": f"Hi, I have a question about {domain}."},
                   {"role": "assistant", "content": "Sure, what would you like to know?"}]
    documents = []
    if setting == "post_retrieval":
        documents = [{"id": f"{domain}-{n}-{i}", "title": t.title(), "text": f"The {t} has {aspect} that depend on the customer."}
                     for i, t in enumerate((a, b))]
    query = _query(category, rng, a, b, aspect)
    positive = category in POSITIVE_CATEGORIES
    resolution = None
    if category == "hard_negative":
        resolution = {"source": "history", "turn_index": 1, "document_id": None, "referent": f"the {a}",
                      "resolved_query": query.replace("the other one", f"the {a}")}
    record = Record(
        domain=domain,
        setting=setting,
        history=history,
        query=query,
        documents=documents,
        needs_clarification=positive,
        category=category,
        interpretations=[f"about the {a}", f"about the {b}"] if positive else [],
        target={"clarification": f"Do you mean the {a} or the {b}?"} if positive else clear_target(),
        clarification_pattern="hedge" if positive else None,
        resolution=resolution,
        provenance={"source_dataset": "unit-test", "conversation_id": f"{domain}-{n}", "turn": 2 if history else 1,
                    "method": f"template_{category}", "method_version": "1", "seed": 0, "label_source": "generator"},
    )
    return record.to_dict()


def relabel(record: dict[str, Any], category: str) -> dict[str, Any]:
    """The same record with another (schema-consistent) label: the planted flip."""
    out = dict(record)
    positive = category in POSITIVE_CATEGORIES
    out["category"] = category
    out["needs_clarification"] = positive
    out["interpretations"] = ["reading one", "reading two"] if positive else []
    out["target"] = {"clarification": "Which one do you mean?"} if positive else clear_target()
    out["clarification_pattern"] = "open" if positive else None
    out["resolution"] = ({"source": "history", "turn_index": 0, "document_id": None, "referent": "it",
                          "resolved_query": record["query"]} if category == "hard_negative" else None)
    return out


def make_records(per_cell: int = 4, seed: int = 0) -> list[dict[str, Any]]:
    """per_cell records for every (category, setting, domain): 56 * per_cell records."""
    rng = random.Random(seed)
    out, n = [], 0
    for category in CATEGORIES:
        for setting in ("pre_retrieval", "post_retrieval"):
            for domain in DOMAINS:
                for _ in range(per_cell):
                    out.append(make_record(category, setting, domain, rng, n))
                    n += 1
    return out


def validate(records: list[dict[str, Any]]) -> None:
    validator = jsonschema.Draft202012Validator(load_schema("clariedge.schema.json"))
    for record in records:
        validator.validate(record)


def write_test_release(out: Path, records: list[dict[str, Any]], version: str = "1.0.0") -> Path:
    validate(records)
    splits = {"train": [], "validation": [], "test": []}
    for i, record in enumerate(records):
        splits[("train", "train", "train", "validation", "test")[i % 5]].append(record)
    manifest = {"name": "unit", "version": version, "seed": 0}
    return write_release(out, splits, manifest, "# unit test release\n")


# ---- shared pieces for the audit tests ---------------------------------------------------------

import csv as _csv
import io as _io
import xml.etree.ElementTree as _ET

REPO = Path(__file__).resolve().parents[1]
LS_CONFIG = REPO / "annotations" / "label_studio_config.xml"


def ls_controls() -> dict[str, dict[str, str]]:
    """Control tags of the labeling config: name -> {tag, toName}."""
    root = _ET.parse(LS_CONFIG).getroot()
    return {el.get("name"): {"tag": el.tag, "toName": el.get("toName")} for el in root.iter()
            if el.get("toName") is not None}


def ls_result(answers: dict[str, str]) -> list[dict[str, Any]]:
    """A Label Studio annotation `result` list, as the editor saves it, for the given answers."""
    controls = ls_controls()
    out = []
    for i, (name, value) in enumerate(answers.items()):
        if value in (None, ""):
            continue
        tag = controls[name]["tag"]
        kind = "choices" if tag == "Choices" else "textarea"
        payload = {"choices": [value]} if kind == "choices" else {"text": [value]}
        out.append({"id": f"r{i}", "from_name": name, "to_name": controls[name]["toName"], "type": kind,
                    "origin": "manual", "value": payload})
    return out


def read_csv_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf"), "CSV must start with a UTF-8 BOM"
    reader = _csv.DictReader(_io.StringIO(raw.decode("utf-8-sig"), newline=""))
    return list(reader.fieldnames or []), list(reader)


def write_csv_rows(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    """Save as a spreadsheet would: BOM, quoted cells, CRLF rows."""
    buf = _io.StringIO()
    writer = _csv.DictWriter(buf, fieldnames=header, quoting=_csv.QUOTE_MINIMAL, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_bytes(("\ufeff" + buf.getvalue()).encode("utf-8"))


def yes_no(value: bool) -> str:
    return "yes" if value else "no"
