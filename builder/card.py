"""Dataset card (README.md) for a release: YAML header with `configs`, then the body sections.

Each generated body section sits between `<!-- clariedge:begin KEY sha256=... -->` and
`<!-- clariedge:end KEY -->` markers. The hash lets a later publish tell a section a curator edited by
hand (kept) from one it may regenerate; text outside the markers is the curator's and always kept.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from builder.record import SETTINGS, SPLITS

PLOT_PATH = "assets/label_distribution.png"
REPO_PLACEHOLDER = "<org>/<name>"
# Known sources: license, home page and citation. Matched by a substring of provenance.source_dataset.
SOURCES = {
    "mtrag": {
        "name": "MTRAG (IBM mt-rag-benchmark)",
        "license": "apache-2.0",
        "url": "https://github.com/IBM/mt-rag-benchmark",
        "bibtex": "@article{katsis2025mtrag,\n  title={MTRAG: A Multi-Turn Conversational Benchmark for Evaluating "
        "Retrieval-Augmented Generation Systems},\n  author={Katsis, Yannis and others},\n"
        "  journal={arXiv preprint arXiv:2501.03468},\n  year={2025}\n}",
    },
    "abg": {
        "name": "Abg-CoQA",
        "license": "mit",
        "url": "https://github.com/MeiqiGuo/AKBC2021-Abg-CoQA",
        "bibtex": "@inproceedings{guo2021abgcoqa,\n  title={Abg-CoQA: Clarifying Ambiguity in Conversational "
        "Question Answering},\n  author={Guo, Meiqi and Zhang, Mingda and Reddy, Siva and Alikhani, Malihe},\n"
        "  booktitle={3rd Conference on Automated Knowledge Base Construction},\n  year={2021}\n}",
    },
}


def size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return label
    return "n>1M"


def source_info(source_dataset: str) -> dict[str, str]:
    for key, info in SOURCES.items():
        if key in source_dataset.lower():
            return info
    return {"name": source_dataset, "license": "unknown", "url": "", "bibtex": ""}


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
    return {
        "pretty_name": pretty_name,
        "license": license,
        "language": ["en"],
        "task_categories": ["text-classification", "text-generation"],
        "size_categories": [size_category(total)],
        "source_datasets": source_datasets,
        # Not a Hub field: the license of each source, which `source_datasets` cannot carry.
        "source_licenses": {s: source_info(s)["license"] for s in source_datasets},
        "configs": configs,
    }


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
        return "needs_clarification" if record["needs_clarification"] else "clear"
    return str(record[field])


def section_digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


def section(key: str, text: str) -> str:
    text = text.strip()
    return f"<!-- clariedge:begin {key} sha256={section_digest(text)} -->\n{text}\n<!-- clariedge:end {key} -->"


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
    bibtex = "\n\n".join(s["bibtex"] for s in sources if s["bibtex"])
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
    sections.append(section("citation", "## Citation\n\nPlease cite the sources:\n\n```bibtex\n" + bibtex + "\n```"))
    card = DatasetCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n\n".join(sections) + "\n")
    return str(card)
