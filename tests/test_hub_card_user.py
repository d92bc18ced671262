"""The card the user owns: card.yaml and CLI metadata, marked regions kept through rewrites and
pushes, a body that describes only the studies the folder holds, a header as `datasets` writes it."""

from __future__ import annotations

import re
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from cogen.card.card import render_card, write_card
from cogen.card.regions import fill_regions, user_regions
from cogen.cli import app
from cogen.errors import BuildError
from cogen.folder.manifest import read_manifests

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _header(text: str) -> dict:
    return yaml.safe_load(text.split("---\n", 2)[1])


def _body(text: str) -> str:
    return text.split("---\n", 2)[2]


def _edit_region(text: str, name: str, words: str) -> str:
    marker = f"<!-- cogen:user {name} -->\n"
    assert marker in text
    return text.replace(marker, marker + words + "\n", 1)


@pytest.fixture
def folder(small_build, tmp_path):
    copy = tmp_path / "build"
    shutil.copytree(small_build, copy)
    return copy


def test_header_features_are_what_datasets_writes_for_the_shards(small_build):
    """Each config's dataset_info equals datasets' own YAML record of a Dataset read from its shards."""
    import datasets

    header = _header((small_build / "README.md").read_text(encoding="utf-8"))
    infos = {info["config_name"]: info for info in header["dataset_info"]}
    for name, manifest in read_manifests(small_build).items():
        files = [str(small_build / f) for f in manifest["splits"]["train"]["files"]]
        written = datasets.Dataset.from_parquet(files, cache_dir=str(small_build.parent / "hf-cache")).info
        assert infos[name]["features"] == written._to_yaml_dict()["features"], name
        assert {s["name"]: s["num_examples"] for s in infos[name]["splits"]} == {
            s: v["rows"] for s, v in manifest["splits"].items()}


def test_card_yaml_sets_the_metadata_and_cli_options_override_it(folder):
    (folder / "card.yaml").write_text('pretty_name: My CompGen study\nlicense: cc-by-4.0\ntags: [arc, lab-x]\n'
                                      'task_categories: [image-to-image]\npapers: ["2401.01234"]\n'
                                      'prose: "Built for the **depth** ablation."\n')
    write_card(folder, previews=False)
    text = (folder / "README.md").read_text(encoding="utf-8")
    header = _header(text)
    assert (header["pretty_name"], header["license"], header["tags"], header["task_categories"]) == (
        "My CompGen study", "cc-by-4.0", ["arc", "lab-x"], ["image-to-image"])
    assert header["size_categories"] == ["n<1K"]  # not given: from the row count
    assert "# My CompGen study\n" in text and "Built for the **depth** ablation." in text
    assert "[arXiv:2401.01234](https://arxiv.org/abs/2401.01234)" in text
    assert "cc-by-4.0" in text.split("## Licence", 1)[1]

    result = CliRunner().invoke(app, ["card", str(folder), "--no-previews", "--pretty-name", "Other",
                                      "--tag", "t1", "--size-category", "1K<n<10K"])
    assert result.exit_code == 0, result.output
    header = _header((folder / "README.md").read_text(encoding="utf-8"))
    assert (header["pretty_name"], header["tags"], header["size_categories"], header["license"]) == (
        "Other", ["t1"], ["1K<n<10K"], "cc-by-4.0")


@pytest.mark.parametrize(("content", "message"), [
    ("licence: mit\n", "unknown field 'licence'"),
    ("tags: 3\n", "tags must be a list"),
    ("papers: [2401.01234]\n", "quote numbers"),
    ("papers: [not-a-paper]\n", "neither an arXiv id"),
    ("pretty_name: [a]\n", "pretty_name must be a string"),
    ("- a\n", "must be a mapping"),
])
def test_a_bad_card_yaml_names_the_file_and_field(folder, content, message):
    (folder / "card.yaml").write_text(content)
    with pytest.raises(BuildError, match=re.escape(message)) as error:
        render_card(folder)
    assert "card.yaml" in str(error.value)
    result = CliRunner().invoke(app, ["card", str(folder), "--no-previews"])
    assert result.exit_code == 1 and "Traceback" not in result.output


def test_rewriting_the_card_keeps_the_users_regions(folder):
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert user_regions(text) == {"intro": "", "notes": ""}
    edited = _edit_region(_edit_region(text, "notes", "Our own notes.\n\n- a list"), "intro", "Hello.")
    edited += "\n<!-- cogen:user legacy -->\nA region the template no longer has.\n<!-- cogen:end-user legacy -->\n"
    (folder / "README.md").write_text(edited, encoding="utf-8")
    write_card(folder, previews=False)
    rewritten = (folder / "README.md").read_text(encoding="utf-8")
    assert user_regions(rewritten) == {"intro": "Hello.", "notes": "Our own notes.\n\n- a list",
                                       "legacy": "A region the template no longer has."}
    write_card(folder, previews=False)
    assert (folder / "README.md").read_text(encoding="utf-8") == rewritten  # stable: nothing doubles


def test_edits_of_one_region_in_two_cards_are_both_kept_once():
    card = "x\n<!-- cogen:user notes -->\n<!-- cogen:end-user notes -->\n"
    local = card.replace("-->\n<!-- cogen:end", "-->\nlocal\n<!-- cogen:end")
    remote = card.replace("-->\n<!-- cogen:end", "-->\nremote\n<!-- cogen:end")
    merged = fill_regions(card, local, remote)
    assert user_regions(merged) == {"notes": "local\n\nremote"}
    assert fill_regions(card, merged, remote) == merged and fill_regions(card, local, merged) == merged


def test_push_keeps_edits_made_in_the_folder_and_on_the_hub(folder, fake_hub, tmp_path):
    from huggingface_hub import HfApi

    from cogen.hub.publish import push

    readme = folder / "README.md"
    readme.write_text(_edit_region(readme.read_text(encoding="utf-8"), "notes", "Edited in the folder."),
                      encoding="utf-8")
    push(folder, "org/owned", token="hf_test")
    pushed = fake_hub.repo("org/owned").files["README.md"].decode()
    assert user_regions(pushed)["notes"] == "Edited in the folder."

    # someone edits the card on the Hub; the next push from the folder keeps both edits
    api = HfApi(endpoint=fake_hub.url, token="hf_test")
    on_hub = _edit_region(pushed, "intro", "Edited on the Hub.").encode()
    api.upload_file(path_or_fileobj=on_hub, path_in_repo="README.md", repo_id="org/owned", repo_type="dataset")
    (folder / "card.yaml").write_text("pretty_name: Renamed\n")
    result = CliRunner().invoke(app, ["push", str(folder), "--repo", "org/owned", "--token", "hf_test"])
    assert result.exit_code == 0, result.output
    pushed = fake_hub.repo("org/owned").files["README.md"].decode()
    assert user_regions(pushed) == {"intro": "Edited on the Hub.", "notes": "Edited in the folder."}
    assert _header(pushed)["pretty_name"] == "Renamed"


def test_push_dry_run_shows_the_card_diff_and_json(folder):
    import json

    (folder / "card.yaml").write_text("pretty_name: Diffed name\n")
    result = CliRunner().invoke(app, ["push", str(folder), "--repo", "org/x", "--dry-run", "--no-verify"])
    assert result.exit_code == 0, result.output
    assert "+pretty_name: Diffed name" in result.output and "+# Diffed name" in result.output
    result = CliRunner().invoke(app, ["push", str(folder), "--repo", "org/x", "--dry-run", "--no-verify", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["dry_run"] and report["configs"]["C1-1"]["train"] == read_manifests(folder)["C1-1"]["splits"][
        "train"]["rows"]
    assert "+pretty_name: Diffed name" in report["readme_diff"]
    assert {f["path"] for f in report["files"]} >= {"README.md", "manifests/C1-1.json"}


@pytest.fixture(scope="module")
def c3_carc(tmp_path_factory):
    from cogen.hub.merging import merge
    from cogen.pipeline import build

    root = tmp_path_factory.mktemp("c3-carc")
    build("c3", root / "c3", scale=0.002, workers=1, only=["C3-1"])
    build("carc", root / "carc", scale=0.002, workers=1, only=["carc-systematicity-1860"])
    merge([root / "c3", root / "carc"], root / "merged")
    return root / "merged"


def test_a_c3_and_compositional_arc_card_describes_only_those_studies(c3_carc):
    text = (c3_carc / "README.md").read_text(encoding="utf-8")
    body = _body(text)
    outside_differences = body.split("## Differences from the reference", 1)[0] + body.split(
        "## Generation statistics", 1)[1]
    for other in (r"\bG[1-5]\b", r"\bG[1-5]-\d", "EnvGen", r"sample efficiency", r"\bS-\d", r"\(S\)",
                  "string-to-grid"):
        assert not re.search(other, outside_differences), other
    assert "G5-5 out of domain" not in body  # a difference that concerns only G
    assert "COGITAO CompGen (C3)" in body and "Compositional-ARC (carc)" in body
    for arxiv in ("2509.05249", "2504.01445"):
        assert f"https://arxiv.org/abs/{arxiv}" in body.split("## Papers", 1)[1]
        assert f"eprint        = {{{arxiv}}}" in body.split("## Citation", 1)[1]
    assert "Taoudi-Benchekroun" in body and "Mondorf" in body and "Anonymous" not in body


def test_a_cogitao_only_card_neither_links_nor_cites_compositional_arc(small_build):
    body = _body((small_build / "README.md").read_text(encoding="utf-8"))
    assert "2509.05249" in body and "2504.01445" not in body and "Compositional-ARC" not in body


def test_merge_keeps_the_regions_of_the_destination_and_of_every_source(folder, tmp_path):
    from cogen.hub.merging import merge

    readme = folder / "README.md"
    readme.write_text(_edit_region(readme.read_text(encoding="utf-8"), "notes", "From the source."), encoding="utf-8")
    into = tmp_path / "into"
    merge([folder], into)
    card = into / "README.md"
    assert user_regions(card.read_text(encoding="utf-8"))["notes"] == "From the source."
    card.write_text(_edit_region(card.read_text(encoding="utf-8"), "intro", "From the destination."),
                    encoding="utf-8")
    (into / "manifests" / "G2-1.json").unlink()
    shutil.rmtree(into / "data" / "G2-1")  # shards no manifest lists are not cogen's to replace
    merge([folder], into)  # G2-1 comes back: the card is rewritten
    assert user_regions(card.read_text(encoding="utf-8")) == {"intro": "From the destination.",
                                                              "notes": "From the source."}
