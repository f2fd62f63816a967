"""The staged build: conversations -> candidates -> validated -> deduplicated -> split -> release.

Each stage reads the previous stage's JSONL in the work directory and writes its own, so a curator
can rerun one stage alone; `build` runs them all.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

from builder import __version__
from builder.build_report import BuildReport
from builder.release.card import card_assets, render_card
from builder.config import BuildConfig
from builder.conversation import Conversation
from builder.dedup import dedup
from builder.errors import InputError
from builder.ingest import demo_corpus, ingest
from builder.io import read_json, read_jsonl, write_json, write_jsonl
from builder.record import SPLITS
from builder.release import published, sha256_file, write_release
from builder.resources import resource
from builder.rows import AccountingRow, Assignment
from builder.split import SplitError, split
from builder.synthesize import METHOD_VERSIONS, generator_descriptions, synthesize
from builder.validate import validate

Progress = Callable[[Iterable, str], Iterable]


def _no_progress(items: Iterable, label: str) -> Iterable:
    return items


class Work:
    """The stage files inside one work directory, one named field each (a typo is an AttributeError)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.conversations = self.root / "conversations.jsonl"
        self.turns = self.root / "turns.jsonl"
        self.candidates = self.root / "candidates.jsonl"
        self.rejected = self.root / "rejected.jsonl"
        self.validated = self.root / "validated.jsonl"
        self.quarantine = self.root / "quarantine.jsonl"
        self.deduplicated = self.root / "deduplicated.jsonl"
        self.duplicates = self.root / "duplicates.jsonl"
        self.split = self.root / "split.jsonl"
        self.split_dropped = self.root / "split_dropped.jsonl"

    def need(self, path: Path, stage: str) -> Path:
        if not path.exists():
            raise InputError(f"{path}: not found; run `clariedge {stage}` first (or `clariedge build`)")
        return path


def default_work_dir(config: BuildConfig, out: Path) -> Path:
    """OUT/.work/<name>/<version>: where the stage files go unless --work says otherwise."""
    return Path(out) / ".work" / config.name / config.version


def input_path(config: BuildConfig) -> Path:
    return Path(config.input.path) if config.input.path else demo_corpus()


def source_name(config: BuildConfig, fmt_path: Path) -> str:
    if config.input.source_dataset:
        return config.input.source_dataset
    return "mtrag" if config.input.format == "mtrag" or fmt_path.suffix == ".json" else "clariedge-demo" if not config.input.path else fmt_path.stem


# --- stages ------------------------------------------------------------------------------------------


def read_input(config: BuildConfig) -> list[Conversation]:
    tasks = Path(config.input.retrieval_tasks) if config.input.retrieval_tasks else None
    return ingest(input_path(config), config.input.format, tasks)


def run_ingest(config: BuildConfig, work: Work) -> list[Conversation]:
    conversations = read_input(config)
    write_jsonl(work.conversations, (c.to_dict() for c in conversations))
    return conversations


def plan_llm(config: BuildConfig, cache_dir: str | None = None, no_cache: bool = False) -> dict[str, Any]:
    """The dry run: read the input, then count the LLM requests it needs (see llm_dry_run); writes nothing."""
    return llm_dry_run(config, read_input(config), cache_dir, no_cache)


def run_synthesize(config: BuildConfig, work: Work, progress: Progress = _no_progress,
                   cache_dir: str | None = None, no_cache: bool = False,
                   llm_progress: Callable[[Any], None] | None = None) -> dict[str, int]:
    rows = read_jsonl(work.need(work.conversations, "ingest"))
    conversations = [Conversation.from_dict(r) for r in rows]
    source = source_name(config, input_path(config))
    result = synthesize(conversations, config.synthesize, config.seed, source, lambda it: progress(it, "synthesize"))
    candidates = [r.to_dict() for r in result.candidates]
    rejections = [r.to_dict() for r in result.rejections]
    if config.llm is not None:
        candidates, rejections = _llm_synthesize(config, work, conversations, result, source, candidates, rejections,
                                                 cache_dir, no_cache, llm_progress)
    write_jsonl(work.candidates, candidates)
    write_jsonl(work.rejected, rejections)
    write_jsonl(work.turns, ({"conversation_id": c, "turn": t, "block": result.blocks[c]} for c, t in result.turns))
    return {"candidates": len(candidates), "rejected": len(rejections)}


# --- LLM generators (config.llm) ------------------------------------------------------------------------


def engine_config(config: BuildConfig, cache_dir: str | None = None, no_cache: bool = False):
    from builder.llm import EngineConfig

    return EngineConfig(**config.llm.endpoint.model_dump(), cache_dir=cache_dir, no_cache=no_cache)


def llm_settings(config: BuildConfig):
    from builder.synthesize.llm.base import LLMSettings

    s = config.llm
    return LLMSettings(model=s.model, temperature=s.temperature, max_tokens=s.max_tokens, seed=s.seed,
                       generators=dict(s.generators), verify=s.verify, naturalize=s.naturalize)


def llm_methods(settings) -> dict[str, dict[str, Any]]:
    """Method versions and prompts of the LLM steps this config runs (from the registry), for the manifest and card."""
    from builder.synthesize.llm.run import methods

    return methods(settings)


def _llm_contexts(config: BuildConfig, conversations: list[Conversation], source: str):
    from builder.synthesize import assign_blocks, turn_contexts

    blocks = assign_blocks(conversations, config.synthesize.block_size, config.seed)
    return turn_contexts(conversations, blocks, config.seed, source)


def _llm_synthesize(config, work, conversations, result, source, candidates, rejections, cache_dir, no_cache,
                    llm_progress=None):
    """Append the LLM generators' records; optionally naturalize rule-based ones; verify what an LLM wrote."""
    from builder.llm import RunStats
    from builder.synthesize.llm.run import llm_synthesize, naturalize, verify

    engine, settings = engine_config(config, cache_dir, no_cache), llm_settings(config)
    stats = RunStats(listener=llm_progress)
    records, lost = llm_synthesize(_llm_contexts(config, conversations, source), settings, engine, stats)
    written = [r.to_dict() for r in records]
    if settings.naturalize:
        edited, candidates = naturalize(candidates, settings, engine, stats)
        written += edited
    verdicts = verify(written, settings, engine, stats)
    rejections = rejections + [r.to_dict() for r in lost] + [
        {"method": d["record"]["provenance"]["method"], "reason": d["reason"],
         "conversation_id": d["record"]["provenance"]["conversation_id"], "turn": d["record"]["provenance"]["turn"],
         "query": d["record"]["query"]} for d in verdicts.dropped]
    run = stats.as_dict()
    # How every unique request ended (answered, or failed with its reason), also when the build stops below.
    write_jsonl(work.root / "llm_requests.jsonl", sorted(stats.outcomes, key=lambda o: (o["prompt"], o["key"])))
    check_llm_failures(config, work, run)
    write_jsonl(work.root / "llm_flagged.jsonl", ({"id": d["id"], "reason": d["reason"]} for d in verdicts.flagged))
    write_json(work.root / "llm_stats.json", {
        # Same on every run of the same config, cached or not: these go into the manifest.
        "model": settings.model,
        "requests": run["unique"],
        "failed": run["failed"],
        "structured_output": dict(sorted(run["modes"].items())),  # how the replies were asked for, per mode
        "records": len(written),
        "rejected": len(lost),
        "verify": {"mode": settings.verify, "dropped": len(verdicts.dropped), "flagged": len(verdicts.flagged)},
        "methods": llm_methods(settings),
        # This run only (cache hits, requests on the wire, tokens paid, time): work dir and build summary only.
        "run": run,
    })
    return candidates + verdicts.kept, rejections


def check_llm_failures(config: BuildConfig, work: Work, run: dict[str, Any]) -> None:
    """Stop the build, before anything is released, when too many LLM requests got no usable reply."""
    total, failed, limit = run["unique"], run["failed"], config.llm.max_failure_rate
    if not total or failed / total <= limit:
        return
    report = work.root / "llm_failures.json"
    reasons = sorted(run["failure_reasons"].items(), key=lambda kv: (-kv[1], kv[0]))
    write_json(report, {"requests": total, "failed": failed, "max_failure_rate": limit,
                        "first_error": run["first_error"], "reasons": dict(reasons[:50]), "run": run})
    raise InputError(
        f"{config.llm.endpoint.base_url}: {failed} of {total} LLM requests failed ({failed / total:.1%}, more than "
        f"the {limit:.1%} allowed by llm.max_failure_rate / --max-llm-failure-rate). First error: "
        f"{run['first_error']}. Nothing was released; every reason is in {report}")


def llm_dry_run(config: BuildConfig, conversations: list[Conversation], cache_dir: str | None = None,
                no_cache: bool = False) -> dict[str, Any]:
    """Requests and estimated input tokens the LLM generators would need, calling nothing."""
    from builder.synthesize.llm.run import dry_run

    contexts = _llm_contexts(config, conversations, source_name(config, input_path(config)))
    engine, settings = engine_config(config, cache_dir, no_cache), llm_settings(config)
    plan = dry_run(contexts, settings, engine)
    if settings.verify != "off":  # one judge call per expected LLM record
        plan = dry_run(contexts, settings, engine, n_records=plan["exact_requests"])
    return plan


def llm_manifest(config: BuildConfig, work: Work) -> dict[str, Any] | None:
    if config.llm is None:
        return None
    stats = read_json(work.need(work.root / "llm_stats.json", "synthesize"))
    return {k: v for k, v in stats.items() if k != "run"}


def run_validate(config: BuildConfig, work: Work) -> dict[str, int]:
    valid, quarantined = validate(read_jsonl(work.need(work.candidates, "synthesize")))
    write_jsonl(work.validated, valid)
    write_jsonl(work.quarantine, (q.to_dict() for q in quarantined))
    return {"validated": len(valid), "quarantined": len(quarantined)}


def run_dedup(config: BuildConfig, work: Work) -> dict[str, int]:
    result = dedup(read_jsonl(work.need(work.validated, "validate")), config.dedup.query_threshold)
    write_jsonl(work.deduplicated, result.kept)
    write_jsonl(work.duplicates, (d.to_dict() for d in result.dropped))
    return {"deduplicated": len(result.kept), "duplicates": len(result.dropped)}


def run_split(config: BuildConfig, work: Work) -> dict[str, Any]:
    records = read_jsonl(work.need(work.deduplicated, "dedup"))
    blocks = {t["conversation_id"]: t["block"] for t in read_jsonl(work.need(work.turns, "synthesize"))}
    for stale in (work.split, work.split_dropped):  # a failed split must leave nothing for `clariedge release`
        stale.unlink(missing_ok=True)
    if not records:
        counts = stage_counts(work, {})
        raise SplitError(f"{work.deduplicated}: no record left to split ({counts['candidates']} candidates, "
                         f"{counts['rejected_by_generators']} rejected by the generators, {counts['quarantined']} "
                         f"quarantined, {counts['duplicates']} duplicates): every split would be empty")
    result = split(records, config.split.model_dump(), config.seed, config.dedup.query_threshold, blocks)
    write_jsonl(work.split_dropped, (d.to_dict() for d in result.dropped))
    write_json(work.root / "split_report.json",
               {"groups": result.groups, "leakage": result.leakage, "quality": result.quality})
    write_jsonl(work.split, (Assignment(s, r).to_dict() for s in SPLITS for r in result.splits[s]))
    return {s: len(result.splits[s]) for s in SPLITS} | {"dropped_by_split": len(result.dropped)}


def run_release(config: BuildConfig, work: Work, out: Path, bump: str | None = None) -> Path:
    return release_with_manifest(config, work, out, bump)[0]


def release_with_manifest(config: BuildConfig, work: Work, out: Path,
                          bump: str | None = None) -> tuple[Path, dict[str, Any]]:
    """Write the release; returns its directory and the manifest written there."""
    from builder.release.versioning import decide_version

    rows = read_jsonl(work.need(work.split, "split"))
    splits = {s: [] for s in SPLITS}
    for row in rows:
        splits[row["split"]].append(published(row["record"]))  # as they read back: diffs compare like with like
    # --bump: version computed from the newest release in OUT/<name>/ and checked against the changes.
    decision = decide_version(Path(out) / config.name, config.version, splits, bump)
    report = read_json(work.root / "split_report.json")
    accounting, summary = account(work)
    llm = llm_manifest(config, work)
    methods = dict(METHOD_VERSIONS)
    if llm is not None:
        methods.update({m: info["version"] for m, info in llm["methods"].items()})
    methods = dict(sorted(methods.items()))
    manifest = {
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
        manifest["llm"] = llm
    card = render_card(
        splits,
        name=config.name,
        version=decision.version,
        license=config.license,
        source_datasets=config.source_datasets,
        methods=methods,
        changelog=decision.changelog,
        descriptions=manifest["generator_descriptions"],
    )
    target = Path(out) / config.name / decision.version
    release = write_release(target, splits, manifest, card, extra_files={"accounting.jsonl": accounting},
                            assets=card_assets(splits))
    return release, manifest


def build(config: BuildConfig, out: Path, work_dir: Path | None = None, progress: Progress = _no_progress,
          cache_dir: str | None = None, no_cache: bool = False,
          llm_progress: Callable[[Any], None] | None = None) -> BuildReport:
    """Run every stage; returns what the build made (see BuildReport). `llm_progress` gets a
    builder.llm.Tally as each LLM batch starts and after each of its requests ends."""
    work = Work(work_dir or default_work_dir(config, out))
    run_ingest(config, work)
    run_synthesize(config, work, progress, cache_dir, no_cache, llm_progress)
    run_validate(config, work)
    run_dedup(config, work)
    run_split(config, work)
    release, manifest = release_with_manifest(config, work, out)
    return BuildReport.of(release, manifest, llm_run(config, work))


def llm_run(config: BuildConfig, work: Work) -> dict[str, Any] | None:
    """This run's LLM figures (cache hits, attempts, tokens; never in the manifest), when config.llm ran."""
    if config.llm is None:
        return None
    return read_json(work.need(work.root / "llm_stats.json", "synthesize"))["run"]


# --- manifest pieces ---------------------------------------------------------------------------------


def code_hash() -> str:
    """Hash of the package source, so a manifest says exactly which code built it."""
    root = Path(__file__).parent
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in {".py", ".yaml", ".jsonl"} and "__pycache__" not in path.parts:
            h.update(path.relative_to(root).as_posix().encode())
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


def stage_counts(work: Work, splits: dict[str, list]) -> dict[str, int]:
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


def account(work: Work) -> tuple[list[dict[str, Any]], dict[str, Any]]:
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
    import re

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
