"""The release manifest: which code, config and inputs built it, what each stage kept, and the fate of every input."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path
from typing import Any

from builder import __version__
from builder.build.inputs import input_path
from builder.build.llm import llm_manifest
from builder.build.workdir import WorkDir
from builder.config import BuildConfig
from builder.io import read_json, read_jsonl
from builder.record import SPLITS
from builder.release import sha256_file
from builder.resources import resource
from builder.rows import AccountingRow
from builder.synthesize import METHOD_VERSIONS, generator_descriptions

PACKAGE = Path(__file__).resolve().parents[1]  # builder/


def manifest(config: BuildConfig, work: WorkDir, splits: dict[str, list], decision) -> tuple[dict[str, Any], list]:
    """The manifest of a release of `splits` at `decision` (a release.versioning decision), and its accounting rows."""
    report = read_json(work.split_report)
    accounting, summary = account(work)
    llm = llm_manifest(config, work)
    methods = generator_versions(llm)
    data = {
        "name": config.name,
        "version": decision.version,
        "previous_version": decision.previous,
        "seed": config.seed,
        "code_version": __version__,
        "code_sha256": code_hash(),
        "schema_sha256": sha256_file(resource("schemas/clariedge.schema.json")),
        "config": config_for_manifest(config),
        "inputs": {"conversations": {"name": input_path(config).name, "sha256": sha256_file(input_path(config))}},
        "generators": methods,
        "generator_descriptions": {m: d for m, d in generator_descriptions().items() if m in methods},
        "counts": stage_counts(work, splits),
        "splits": {s: len(splits[s]) for s in SPLITS},
        "leakage": report["leakage"],
        "split_groups": report["groups"],
        "split_quality": report.get("quality", {}),
        "accounting": summary,
        "statistics": statistics(splits),
    }
    if llm is not None:
        data["llm"] = llm
    return data, accounting


def generator_versions(llm: dict[str, Any] | None) -> dict[str, str]:
    """Every rule generator's version, and the LLM steps' when an llm: section ran, by name."""
    methods = dict(METHOD_VERSIONS)
    if llm is not None:
        methods.update({m: info["version"] for m, info in llm["methods"].items()})
    return dict(sorted(methods.items()))


def code_hash() -> str:
    """Hash of the package source, so a manifest says exactly which code built it."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*")):
        if path.suffix in {".py", ".yaml", ".jsonl"} and "__pycache__" not in path.parts:
            h.update(path.relative_to(PACKAGE).as_posix().encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def config_for_manifest(config: BuildConfig) -> dict[str, Any]:
    data = config.model_dump()
    if data["llm"] is None:
        del data["llm"]  # offline manifests stay as they were
    else:
        del data["llm"]["endpoint"]  # where the model is served (ports, hosts) does not change the data
        del data["llm"]["max_failure_rate"]  # a build over it releases nothing; under it, the data is the same
    for key in ("path", "retrieval_tasks"):
        if data["input"].get(key):
            data["input"][key] = Path(data["input"][key]).name  # no local paths in a published manifest
    return data


def stage_counts(work: WorkDir, splits: dict[str, list]) -> dict[str, int]:
    def n(path: Path) -> int:
        return sum(1 for _ in open(path, encoding="utf-8")) if path.exists() else 0

    return {
        "conversations": n(work.conversations),
        "user_turns": n(work.turns),
        "candidates": n(work.candidates),
        "rejected_by_generators": n(work.rejected),
        "quarantined": n(work.quarantine),
        "validated": n(work.validated),
        "duplicates": n(work.duplicates),
        "deduplicated": n(work.deduplicated),
        "dropped_by_split": n(work.split_dropped),
        "released": sum(len(v) for v in splits.values()),
    }


def account(work: WorkDir) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The fate of every candidate and every input turn: kept, rejected (reason) or deduplicated (kept id)."""
    split_of = {row["record"]["id"]: row["split"] for row in read_jsonl(work.split)}
    dropped = {row["id"]: row for row in read_jsonl(work.duplicates)}
    quarantined = {row["id"]: row for row in read_jsonl(work.quarantine)}
    by_split = {row["id"]: row for row in read_jsonl(work.split_dropped)} if work.split_dropped.exists() else {}
    rows: list[AccountingRow] = []
    per_turn: dict[tuple[str, int], Counter] = {}
    for cand in read_jsonl(work.candidates):
        prov, cid = cand["provenance"], cand["id"]
        where = {"conversation_id": prov["conversation_id"], "turn": prov["turn"], "method": prov["method"], "id": cid}
        if cid in split_of:
            row = AccountingRow(**where, status="kept", split=split_of[cid])
        elif cid in dropped:
            row = AccountingRow(**where, status="deduplicated", kept_id=dropped[cid]["kept_id"],
                                score=dropped[cid]["score"])
        elif cid in quarantined:
            row = AccountingRow(**where, status="rejected",
                                reason="schema: " + quarantined[cid]["errors"][0]["message"])
        elif cid in by_split:
            row = AccountingRow(**where, status="rejected", reason=by_split[cid]["reason"])
        else:
            raise RuntimeError(f"candidate {cid} vanished between stages")  # a bug, never input
        rows.append(row)
        per_turn.setdefault((row.conversation_id, row.turn), Counter())[row.status] += 1
    for rej in read_jsonl(work.rejected):
        rows.append(AccountingRow(conversation_id=rej["conversation_id"], turn=rej["turn"], method=rej["method"],
                                  id=None, status="rejected", reason=rej["reason"], query=rej["query"]))
        per_turn.setdefault((rej["conversation_id"], rej["turn"]), Counter())["rejected"] += 1
    turn_status: Counter = Counter()
    for t in read_jsonl(work.turns):
        seen = per_turn.get((t["conversation_id"], t["turn"]))
        if not seen:
            rows.append(AccountingRow(conversation_id=t["conversation_id"], turn=t["turn"], method=None, id=None,
                                      status="rejected", reason="no generator applies to this turn"))
            turn_status["rejected"] += 1
        else:
            turn_status["kept" if seen["kept"] else "deduplicated" if seen["deduplicated"] else "rejected"] += 1
    rows.sort(key=AccountingRow.sort_key)
    candidates = Counter(r.status for r in rows if r.id)
    reasons = Counter(_reason_kind(r.reason) for r in rows if r.status == "rejected")
    summary = {
        "turns": dict(sorted(turn_status.items())),
        "candidates": dict(sorted(candidates.items())),
        "rejections_by_reason": dict(sorted(reasons.items())),
        "every_input_accounted": sum(turn_status.values()) == len(read_jsonl(work.turns)),
    }
    return [r.to_dict() for r in rows], summary


def _reason_kind(reason: str) -> str:
    """Group reasons that differ only in the quoted entity."""
    reason = re.sub(r"'.*'", "'…'", reason)
    return re.sub(r"another \w+", "another …", reason).split(":")[0]


def statistics(splits: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    records = [r for s in SPLITS for r in splits[s]]
    n = len(records) or 1
    positives = [r for r in records if r["needs_clarification"]]
    negatives = [r for r in records if not r["needs_clarification"]]
    hard = [r for r in negatives if r["category"] == "hard_negative"]
    by_pair: dict[str, set] = {}
    for r in records:
        if r.get("pair_id"):
            by_pair.setdefault(r["pair_id"], set()).add(r["needs_clarification"])
    contrastive = [r for r in positives if r.get("pair_id") and by_pair[r["pair_id"]] == {True, False}]
    return {
        "records": len(records),
        "positive_share": round(len(positives) / n, 4),
        "hard_negative_share_of_negatives": round(len(hard) / (len(negatives) or 1), 4),
        "contrastive_share_of_positives": round(len(contrastive) / (len(positives) or 1), 4),
        "setting_share": {k: round(v / n, 4) for k, v in sorted(Counter(r["setting"] for r in records).items())},
        "domain_share": {k: round(v / n, 4) for k, v in sorted(Counter(r["domain"] for r in records).items())},
        "category": dict(sorted(Counter(r["category"] for r in records).items())),
    }
