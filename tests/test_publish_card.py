"""The dataset card: generated sections, merging with a card edited on the Hub, configs, the label plot."""

from __future__ import annotations

from huggingface_hub import DatasetCard

from builder.release.card import label_plot_png, merge_body, merge_changelog, merge_metadata, section
from publish_helpers import make_splits, write_test_release


def test_no_existing_card_gives_the_fresh_one():
    fresh = section("title", "# T") + "\n\n" + section("stats", "## S\n\n1")
    assert merge_body(None, fresh) == (fresh, [])


def test_hand_written_card_without_markers_is_kept_below():
    fresh = section("title", "# T")
    body, kept = merge_body("# My own card\n\nWritten by hand.\n", fresh)
    assert body.startswith(fresh) and body.endswith("# My own card\n\nWritten by hand.\n") and kept == []


def test_edited_sections_and_free_text_survive_and_the_rest_is_regenerated():
    old = "\n\n".join([section("title", "# v1"), section("purpose", "Original purpose."), section("stats", "## S\n\n10")])
    old = old.replace("Original purpose.", "Purpose, edited by the curator.")
    old += "\n\n## Curator notes\n\nHand-written.\n"
    fresh = "\n\n".join(
        [section("title", "# v2"), section("purpose", "New purpose."), section("stats", "## S\n\n12"), section("plot", "![p](x.png)")]
    )
    body, kept = merge_body(old, fresh)
    assert kept == ["purpose"]
    assert "# v2" in body and "## S\n\n12" in body and "Purpose, edited by the curator." in body
    assert "New purpose." not in body and "# v1" not in body
    assert body.index("## S\n\n12") < body.index("![p](x.png)") < body.index("## Curator notes\n\nHand-written.")
    # The kept section is still recognised as hand-edited on the next publish.
    assert merge_body(body, fresh)[1] == ["purpose"]


def test_changelog_keeps_earlier_entries_and_replaces_its_own():
    old = "## Changelog\n\n### v1.1.0\n\nOld text.\n\n### v1.0.0\n\nFirst."
    merged = merge_changelog(old, "## Changelog\n\n### v1.1.0\n\nNew text.")
    assert merged == "## Changelog\n\n### v1.1.0\n\nNew text.\n\n### v1.0.0\n\nFirst."
    merged = merge_changelog(merged, "## Changelog\n\n### v1.2.0\n\nNewest.")
    assert [line for line in merged.splitlines() if line.startswith("### ")] == ["### v1.2.0", "### v1.1.0", "### v1.0.0"]


def test_metadata_keeps_curator_keys_and_never_drops_configs():
    fresh = {"license": "apache-2.0", "configs": [{"config_name": "default", "data_files": "data/*.parquet"}]}
    merged = merge_metadata({"license": "mit", "tags": ["rag"], "configs": []}, fresh)
    assert merged == {"license": "apache-2.0", "tags": ["rag"], "configs": fresh["configs"]}


def test_card_yaml_and_sections(tmp_path):
    release = write_test_release(tmp_path / "dist", "1.0.0", make_splits(12))
    card = DatasetCard.load(release / "README.md")
    for key in ("license", "task_categories", "language", "size_categories", "pretty_name", "source_datasets"):
        assert card.data.to_dict().get(key), key
    assert card.data.to_dict()["source_licenses"] == {"mtrag": "apache-2.0"}
    for heading in ("## Fields", "## Statistics", "### By domain", "## How it was built", "## Loading", "## Changelog", "## Citation"):
        assert heading in card.text, heading
    assert "`clarify` version 2" in card.text and "`reference_ablation` version 1.0" in card.text
    assert "![Label distribution](assets/label_distribution.png)" in card.text


def test_configs_skip_empty_files_so_datasets_can_load_every_config(tmp_path):
    import datasets

    splits = make_splits(12)
    splits["test"] = [r for r in splits["test"] if r["setting"] == "post_retrieval"]  # no pre_retrieval test records
    release = write_test_release(tmp_path / "dist", "1.0.0", splits)
    configs = {c["config_name"]: c for c in DatasetCard.load(release / "README.md").data.to_dict()["configs"]}
    assert [f["split"] for f in configs["pre_retrieval"]["data_files"]] == ["train", "validation"]
    pre = datasets.load_dataset(str(release), "pre_retrieval", cache_dir=str(tmp_path / "cache"))
    assert sorted(pre) == ["train", "validation"]
    assert all(pre[s].features["setting"].int2str(r["setting"]) == "pre_retrieval" for s in pre for r in pre[s])
    assert sum(len(pre[s]) for s in pre) == sum(1 for rows in splits.values() for r in rows if r["setting"] == "pre_retrieval")


def test_label_plot_is_a_deterministic_png():
    splits = make_splits(12)
    png = label_plot_png(splits)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert label_plot_png(splits) == png
