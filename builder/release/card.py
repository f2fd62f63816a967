"""Dataset card (README.md) for a release: YAML header with `configs`, then the body sections.

Each generated body section sits between `<!-- clariedge:begin KEY sha256=... -->` and
`<!-- clariedge:end KEY -->` markers. The hash lets a later publish tell a section a curator edited by
hand (kept) from one it may regenerate; text outside the markers is the curator's and always kept.
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from builder.record import NEGATIVE_CATEGORIES, POSITIVE_CATEGORIES, SETTINGS, SPLITS, label_of
from builder.release.diff import KINDS, ReleaseDiff, diff_splits

PLOT_PATH = "assets/label_distribution.png"
REPO_PLACEHOLDER = "<org>/<name>"
SOURCES_FILE = Path(__file__).resolve().parent.parent / "data" / "sources.yaml"
TAGS = ["rag", "clarification", "clarifying-questions", "multi-turn", "conversational", "synthetic"]
# Columns a user stratifies or filters on: ClassLabel in `dataset_info.features`, so `datasets` loads them as such.
CLASS_LABELS = ("category", "setting", "domain")


@lru_cache(maxsize=1)
def known_sources() -> dict[str, dict[str, Any]]:
    """Source metadata from builder/data/sources.yaml, keyed by lower-cased id and every alias."""
    out: dict[str, dict[str, Any]] = {}
    for source_id, info in (yaml.safe_load(SOURCES_FILE.read_text(encoding="utf-8")) or {}).items():
        entry = {k: v for k, v in info.items() if k != "aliases"} | {"id": source_id}
        for key in [source_id, *info.get("aliases", [])]:
            out[key.lower()] = entry
    return out


def size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "n>1M"


def source_info(source_dataset: str) -> dict[str, Any]:
    """A source's own metadata (license, url, citation), matched by its exact id or an alias."""
    known = known_sources().get(source_dataset.lower())
    if known:
        return known
    return {"id": source_dataset, "name": source_dataset, "license": "unknown", "url": "", "bibtex": "",
            "language_creators": ["found"]}


def class_names(splits: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """ClassLabel names: categories and settings from the schema (stable across releases), domains as present."""
    domains = sorted({r["domain"] for rows in splits.values() for r in rows})
    return {"category": [*POSITIVE_CATEGORIES, *NEGATIVE_CATEGORIES], "setting": list(SETTINGS), "domain": domains}


def features_yaml(splits: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """`dataset_info.features` of the card: the release's columns, with the CLASS_LABELS as ClassLabel."""
    import datasets

    from builder.release import ARROW_SCHEMA

    features = datasets.Features.from_arrow_schema(ARROW_SCHEMA)
    for column, names in class_names(splits).items():
        features[column] = datasets.ClassLabel(names=names)
    return datasets.DatasetInfo(features=features)._to_yaml_dict()["features"]


def card_metadata(
    total: int,
    license: str,
    pretty_name: str,
    source_datasets: list[str],
    splits: dict[str, list[dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """Card YAML. Given `splits`, configs list only non-empty files: `datasets` cannot load an empty split."""

    def files(setting: str | None) -> list[dict[str, str]]:
        out = []
        for s in SPLITS:
            rows = None if splits is None else [r for r in splits.get(s, []) if setting in (None, r["setting"])]
            if rows is None or rows:
                out.append({"split": s, "path": f"data/{setting}/{s}.parquet" if setting else f"data/{s}.parquet"})
        return out

    configs = [{"config_name": "default", "default": True, "data_files": files(None)}]
    configs += [{"config_name": st, "data_files": files(st)} for st in SETTINGS if files(st)]
    sources = [source_info(s) for s in source_datasets]
    label_sources = {r["provenance"]["label_source"] for rows in (splits or {}).values() for r in rows} or {"generator"}
    meta = {
        "pretty_name": pretty_name,
        "license": license,
        "language": ["en"],
        "multilinguality": ["monolingual"],
        "task_categories": ["text-classification", "text-generation"],
        "task_ids": ["multi-class-classification", "dialogue-modeling"],
        "tags": list(TAGS),
        "size_categories": [size_category(total)],
        "source_datasets": source_datasets,
        # Labels and clarifications are generated (rules or an LLM judge) unless a human audit set them.
        "annotations_creators": sorted({"expert-generated" if s == "human" else "machine-generated" for s in label_sources}),
        # The sources' own text, plus the generated queries and stitched contexts.
        "language_creators": sorted({c for s in sources for c in s.get("language_creators", [])} | {"machine-generated"}),
        # Not a Hub field: the license of each source, which `source_datasets` cannot carry.
        "source_licenses": {s: info["license"] for s, info in zip(source_datasets, sources)},
        "configs": configs,
    }
    if splits is not None:
        features = features_yaml(splits)
        # One copy per config (no YAML aliases): `datasets` reads the features of each config by its name.
        meta["dataset_info"] = [{"config_name": c["config_name"], "features": copy.deepcopy(features)} for c in configs]
    return meta


def count_table(splits: dict[str, list[dict[str, Any]]], field: str) -> str:
    """Markdown table: one row per value of `field`, one column per split."""
    counts = {s: Counter(_value(r, field) for r in splits.get(s, [])) for s in SPLITS}
    values = sorted(set().union(*counts.values()))
    lines = [f"| {field} | " + " | ".join(SPLITS) + " | total |", "|---|" + "---:|" * (len(SPLITS) + 1)]
    for v in values:
        row = [counts[s][v] for s in SPLITS]
        lines.append(f"| {v} | " + " | ".join(str(n) for n in row) + f" | {sum(row)} |")
    totals = [len(splits.get(s, [])) for s in SPLITS]
    lines.append("| **all** | " + " | ".join(str(n) for n in totals) + f" | {sum(totals)} |")
    return "\n".join(lines)


def _value(record: dict[str, Any], field: str) -> str:
    if field == "label":
        return label_of(record)
    return str(record[field])


def section_digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


def section(key: str, text: str) -> str:
    text = text.strip()
    return _marked(key, section_digest(text), text)


def _marked(key: str, digest: str, text: str) -> str:
    """The one section-marker format; `_BLOCK` parses it back."""
    return f"<!-- clariedge:begin {key} sha256={digest} -->\n{text}\n<!-- clariedge:end {key} -->"


def generators_and_prompts(splits: dict[str, list[dict[str, Any]]]) -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    """Generators (method -> version) and prompts (name, version, sha256) used by the records."""
    methods: dict[str, str] = {}
    prompts: set[tuple[str, str, str]] = set()
    for rows in splits.values():
        for r in rows:
            prov = r["provenance"]
            methods.setdefault(prov["method"], prov["method_version"])
            if prov.get("prompt"):
                p = prov["prompt"]
                prompts.add((p.get("name") or "?", p.get("version") or "?", (p.get("sha256") or "")[:12]))
    return methods, sorted(prompts)


def card_assets(splits: dict[str, list[dict[str, Any]]]) -> dict[str, bytes]:
    """The files the card links to, by release-relative path."""
    return {PLOT_PATH: label_plot_png(splits)}


def label_plot_png(splits: dict[str, list[dict[str, Any]]]) -> bytes:
    """Bar charts of labels by split and setting, and of categories by split, as PNG bytes (no timestamps)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4), dpi=100)
    groups = [(s, st) for s in SPLITS for st in SETTINGS]
    pos = [sum(1 for r in splits.get(s, []) if r["setting"] == st and r["needs_clarification"]) for s, st in groups]
    neg = [sum(1 for r in splits.get(s, []) if r["setting"] == st and not r["needs_clarification"]) for s, st in groups]
    x = range(len(groups))
    left.bar(x, pos, label="needs clarification", color="#d95f02")
    left.bar(x, neg, bottom=pos, label="clear", color="#1b9e77")
    left.set_xticks(list(x), [f"{s}\n{st.split('_')[0]}" for s, st in groups], fontsize=8)
    left.set_title("Label by split and setting")
    left.legend(fontsize=8)
    cats = sorted({r["category"] for rows in splits.values() for r in rows})
    width = 0.8 / len(SPLITS)
    for i, s in enumerate(SPLITS):
        c = Counter(r["category"] for r in splits.get(s, []))
        right.barh([j + i * width for j in range(len(cats))], [c[k] for k in cats], height=width, label=s)
    right.set_yticks([j + width for j in range(len(cats))], cats, fontsize=8)
    right.set_title("Category by split")
    right.legend(fontsize=8)
    fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="png", metadata={"Software": None})
    plt.close(fig)
    return out.getvalue()


def loading_text(repo_id: str, version: str) -> str:
    return (
        "## Loading\n\n```python\nfrom datasets import load_dataset\n\n"
        f'ds = load_dataset("{repo_id}")  # latest version (main)\n'
        f'ds = load_dataset("{repo_id}", revision="v{version}")  # pinned: this exact version\n'
        f'pre = load_dataset("{repo_id}", "pre_retrieval", revision="v{version}")  # one setting\n```'
    )


def changelog_text(entries: str) -> str:
    """The changelog section; `entries` is markdown of `### vX.Y.Z` entries, newest first."""
    return "## Changelog\n\n" + entries.strip()


def categories_text(splits: dict[str, list[dict[str, Any]]], descriptions: dict[str, str]) -> str:
    """Per category: how its records were made (the generators' own descriptions) and one real example."""
    records = sorted((r for rows in splits.values() for r in rows), key=lambda r: r["id"])
    parts = ["## How each category was made"]
    for category in (*POSITIVE_CATEGORIES, *NEGATIVE_CATEGORIES):
        rows = [r for r in records if r["category"] == category]
        if not rows:
            continue
        methods = Counter(r["provenance"]["method"] for r in rows)
        made = "\n".join(f"- `{m}` ({n}): {descriptions.get(m) or 'no description recorded'}"
                         for m, n in sorted(methods.items(), key=lambda kv: (-kv[1], kv[0])))
        parts.append(f"### `{category}` ({len(rows)} records)\n\n{made}\n\n{_example(rows)}")
    return "\n\n".join(parts)


def _example(rows: list[dict[str, Any]]) -> str:
    """The shortest record of the most common method: a real example, picked the same way every build."""
    top = Counter(r["provenance"]["method"] for r in rows).most_common(1)[0][0]
    r = min((r for r in rows if r["provenance"]["method"] == top),
            key=lambda r: (len(r["query"]) + sum(len(h["content"]) for h in r["history"][-2:]), r["id"]))
    lines = [f"Example `{r['id']}` ({r['setting']}, {r['domain']}):", ""]
    if r["history"]:
        lines += [f"> **{h['role']}**: {_short(h['content'], 160)}" for h in r["history"][-2:]]
        lines.append(">")
    lines.append(f"> **user (query)**: {r['query']}")
    if r["documents"]:
        titles = "; ".join(_short(d.get("title") or d["id"], 60) for d in r["documents"][:4])
        lines += ["", f"Documents: {titles}"]
    lines += ["", f"Target: `{_short(r['target']['clarification'], 220)}`"]
    return "\n".join(lines)


def render_card(
    splits: dict[str, list[dict[str, Any]]],
    *,
    name: str,
    version: str,
    license: str,
    source_datasets: list[str],
    methods: dict[str, str],
    body_sections: dict[str, str] | None = None,
    repo_id: str | None = None,
    changelog: str | None = None,
    extra_metadata: dict[str, Any] | None = None,
    descriptions: dict[str, str] | None = None,
) -> str:
    """The full card as text. `repo_id` fills the loading example; `changelog` is markdown of `### vX` entries."""
    from huggingface_hub import DatasetCard, DatasetCardData

    total = sum(len(v) for v in splits.values())
    meta = card_metadata(total, license, f"ClariEdge ({name})", source_datasets, splits)
    meta.update(extra_metadata or {})
    data = DatasetCardData(**meta)
    record_methods, prompts = generators_and_prompts(splits)
    methods = {**record_methods, **methods}
    repo = repo_id or REPO_PLACEHOLDER
    tables = "\n\n".join(f"### By {f}\n\n{count_table(splits, f)}" for f in ("label", "setting", "category", "domain"))
    generators = "\n".join(f"- `{m}` version {v}" for m, v in sorted(methods.items())) or "- none recorded"
    prompt_lines = "\n".join(f"- `{n}` version {v} (sha256 {h}…)" for n, v, h in prompts) or "- none (no LLM prompts)"
    sources = [source_info(s) | {"id": s} for s in source_datasets]
    source_lines = "\n".join(f"- {s['name']} (`{s['id']}`), license {s['license']} {s['url']}".rstrip() for s in sources)
    bibtex = "\n\n".join(s["bibtex"] for s in sources if s.get("bibtex"))
    sections = [
        section("title", f"# ClariEdge: {name} {version}"),
        section(
            "purpose",
            "Grounded multi-turn examples that teach a RAG assistant when to ask a clarifying question "
            "instead of guessing. Each record is labelled *needs clarification* (with the question to ask) "
            'or *clear*; the model target is `{"clarification": "<question>"}` or `{"clarification": "CLEAR"}`. '
            "Two settings: `pre_retrieval` (judged from the history alone, no documents) and `post_retrieval` "
            "(judged with the retrieved passages).",
        ),
        section(
            "fields",
            "## Fields\n\n"
            "| field | meaning |\n|---|---|\n"
            "| `id` | stable id from content and provenance (kept across relabels) |\n"
            "| `domain` | source domain of the conversation |\n"
            "| `setting` | `pre_retrieval` or `post_retrieval` |\n"
            "| `history` | earlier turns: `role`, `content` |\n"
            "| `query` | the last user turn, the one to judge |\n"
            "| `documents` | retrieved passages `id`, `title`, `text`; empty before retrieval |\n"
            "| `needs_clarification` | the label |\n"
            "| `category` | `unresolved_reference`, `underspecified_entity`, `missing_parameter`, `ill_formed`, "
            "`multiple_interpretations`; negatives `hard_negative`, `clear` |\n"
            "| `interpretations` | the readings a clarifying question chooses between |\n"
            "| `target` | `{clarification}`: the question to ask, or `CLEAR` |\n"
            "| `clarification_pattern` | `hedge`, `list` or `open` |\n"
            "| `resolution` | what resolves a hard negative (history turn or document) |\n"
            "| `pair_id` | links contrastive twins |\n"
            "| `provenance` | source dataset, conversation, turn, method and version, seed, label source, prompt |",
        ),
        section("statistics", f"## Statistics\n\nTotal records: {total}.\n\n{tables}"),
        section("plot", f"![Label distribution]({PLOT_PATH})"),
        section("categories", categories_text(splits, descriptions or {})),
        section(
            "building",
            f"## How it was built\n\nGenerators and their versions:\n\n{generators}\n\nPrompts:\n\n{prompt_lines}"
            f"\n\nSources:\n\n{source_lines or '- none recorded'}",
        ),
        section("loading", loading_text(repo, version)),
        section("changelog", changelog_text(changelog or f"### v{version}\n\nThis release.")),
    ]
    for title, text in (body_sections or {}).items():
        sections.append(section(f"extra-{title.lower().replace(' ', '-')}", f"## {title}\n\n{text}"))
    cite = ("Please cite the sources:\n\n```bibtex\n" + bibtex + "\n```") if bibtex else "No citation is recorded for the sources."
    sections.append(section("citation", "## Citation\n\n" + cite))
    card = DatasetCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n\n".join(sections) + "\n")
    return str(card)


# --- merging a card with the one already published (used by publish) --------------------------------

_BLOCK = re.compile(
    r"<!-- clariedge:begin (?P<key>[\w.-]+) sha256=(?P<digest>[0-9a-f]+) -->\n(?P<inner>.*?)\n<!-- clariedge:end (?P=key) -->",
    re.DOTALL,
)
_ENTRY = re.compile(r"^### ", re.MULTILINE)


@dataclass
class Block:
    key: str
    digest: str
    inner: str

    @property
    def edited(self) -> bool:
        return section_digest(self.inner) != self.digest

    def render(self) -> str:
        if self.edited:  # keep the old digest so it stays marked as hand-edited
            return _marked(self.key, self.digest, self.inner)
        return section(self.key, self.inner)


def parse_body(body: str) -> list[str | Block]:
    """Body as a list of free text (str) and generated blocks, in order."""
    out: list[str | Block] = []
    pos = 0
    for m in _BLOCK.finditer(body):
        out.append(body[pos : m.start()])
        out.append(Block(m["key"], m["digest"], m["inner"]))
        pos = m.end()
    out.append(body[pos:])
    return [p for p in out if not (isinstance(p, str) and p == "")]


def changelog_entry(version: str, previous: tuple[str, dict[str, list[dict[str, Any]]]] | None, splits, examples: int = 2) -> str:
    """Markdown for one `### v<version>` entry, from the diff against the previous version."""
    total = sum(len(v) for v in splits.values())
    if previous is None:
        return f"### v{version}\n\nFirst published version: {total} records."
    prev_version, prev_splits = previous
    diff = diff_splits(prev_splits, splits, f"v{prev_version}", f"v{version}")
    return f"### v{version}\n\n" + diff_markdown(diff, examples)


def diff_markdown(diff: ReleaseDiff, examples: int = 2) -> str:
    t = diff.totals()
    head = f"Compared with {diff.a}: " + ", ".join(f"{t[k]} {k.replace('_', '-')}" for k in KINDS) + "."
    if diff.empty:
        return head
    counts = diff.counts()
    lines = ["| change | " + " | ".join(SPLITS) + " | total |", "|---|" + "---:|" * (len(SPLITS) + 1)]
    for k in KINDS:
        lines.append(f"| {k} | " + " | ".join(str(counts[k][s]) for s in SPLITS) + f" | {t[k]} |")
    ex = []
    for k in KINDS:
        for c in diff.of(k)[:examples]:
            if k in ("added", "removed"):
                r = c.after or c.before
                ex.append(f"- {k} `{c.id}` ({c.split}, {r['category']}): {_short(r['query'])}")
            elif k == "moved":
                ex.append(f"- moved `{c.id}`: {c.from_split} → {c.split}")
            elif k == "relabelled":
                ex.append(f"- relabelled `{c.id}` ({c.split}): {c.before['category']} → {c.after['category']}")
            else:
                ex.append(f"- text changed `{c.id}` ({c.split}): {', '.join(c.fields)}")
    return head + "\n\n" + "\n".join(lines) + "\n\nExamples:\n\n" + "\n".join(ex)


def _short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def merge_changelog(existing_inner: str, new_inner: str) -> str:
    """New entries first, then every earlier entry not superseded (same version heading)."""

    def entries(inner: str) -> list[tuple[str, str]]:
        parts = _ENTRY.split(inner)[1:]
        return [(p.split(None, 1)[0] if p.strip() else "", "### " + p.strip()) for p in parts]

    new = entries(new_inner)
    seen = {v for v, _ in new}
    kept = [e for v, e in entries(existing_inner) if v not in seen]
    return changelog_text("\n\n".join([e for _, e in new] + kept))


def merge_body(existing: str | None, fresh: str) -> tuple[str, list[str]]:
    """(merged body, keys of hand-edited sections that were kept)."""
    fresh_blocks = {p.key: p for p in parse_body(fresh) if isinstance(p, Block)}
    if existing is None:
        return fresh, []
    parts = parse_body(existing)
    if not any(isinstance(p, Block) for p in parts):
        return fresh.rstrip() + "\n\n" + existing.lstrip(), []  # a hand-written card: keep all of it below
    kept_edited: list[str] = []
    present = set()
    out: list[str | Block] = []
    for p in parts:
        if isinstance(p, Block):
            present.add(p.key)
            if p.key == "changelog" and "changelog" in fresh_blocks:
                p = Block("changelog", "", merge_changelog(p.inner, fresh_blocks["changelog"].inner))
                p.digest = section_digest(p.inner)
            elif p.edited:
                kept_edited.append(p.key)
            elif p.key in fresh_blocks:
                p = fresh_blocks[p.key]
        out.append(p)
    # Sections new in this release go after the section that precedes them in the fresh card.
    order = list(fresh_blocks)
    for i, key in enumerate(order):
        if key in present:
            continue
        anchor = next((k for k in reversed(order[:i]) if k in present), None)
        at = len(out) if anchor is None else next(j for j, p in enumerate(out) if isinstance(p, Block) and p.key == anchor) + 1
        out[at:at] = ["\n\n", fresh_blocks[key]]
        present.add(key)
    body = "".join(p.render() if isinstance(p, Block) else p for p in out)
    return body, kept_edited


# Editorial keys: the release only seeds them, and a curator's value on the Hub wins.
CURATED_KEYS = ("tags",)


def merge_metadata(existing: dict[str, Any] | None, fresh: dict[str, Any]) -> dict[str, Any]:
    merged = dict(existing or {})
    merged.update({k: v for k, v in fresh.items() if not (k in CURATED_KEYS and merged.get(k))})
    merged["configs"] = fresh["configs"]  # never dropped, never stale
    return merged
