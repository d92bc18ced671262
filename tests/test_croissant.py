"""``croissant.json``: written with the card, a pure function of the manifests, valid for MLCommons' own
library (``mlcroissant``, the ``croissant`` extra), and its records are the stored rows."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from cogen.card.card import render_croissant
from cogen.folder import CROISSANT_FILE, file_sha256, read_manifests


@pytest.fixture(scope="module")
def three_families(shared_build):
    """The tiny build of every registered family, merged into one folder."""
    from conftest import tiny_of

    from cogen.family import FAMILIES

    return shared_build.folder(*((tiny_of(name).spec, tiny_of(name).options) for name in FAMILIES))


def _document(folder) -> dict:
    return json.loads((folder / CROISSANT_FILE).read_text(encoding="utf-8"))


def test_every_build_writes_it_with_the_card_and_it_is_the_render_of_its_manifests(tiny_builds, three_families):
    for folder in [*tiny_builds.values(), three_families]:
        assert (folder / CROISSANT_FILE).read_text(encoding="utf-8") == render_croissant(folder)


def test_a_file_object_per_shard_with_the_hash_of_its_bytes_and_a_record_set_per_config(three_families):
    document, manifests = _document(three_families), read_manifests(three_families)
    objects = {o["contentUrl"]: o for o in document["distribution"] if o["@type"] == "cr:FileObject"}
    shards = {f for m in manifests.values() for s in m["splits"].values() for f in s["files"]}
    assert set(objects) == shards
    for path, found in objects.items():
        assert found["sha256"] == file_sha256(three_families / path)
        assert found["contentSize"] == f"{(three_families / path).stat().st_size} B"
    assert [r["name"] for r in document["recordSet"]] == list(manifests)
    fields = {f["name"]: f for f in document["recordSet"][0]["field"]}
    assert fields["input"]["dataType"] == "cr:Int8" and fields["input"]["arrayShape"] == "-1,-1"
    carc = next(r for r in document["recordSet"] if r["name"] == "carc-systematicity-1860")
    assert {f["name"]: f.get("arrayShape") for f in carc["field"]}["study_inputs"] == "-1,-1,-1"
    assert "held out of training: validation, test" in carc["description"]


def test_the_responsible_ai_fields_say_how_the_data_was_made(three_families):
    document = _document(three_families)
    assert document["rai:hasSyntheticData"] is True
    assert "no data was collected from people" in document["rai:dataCollection"]
    for title in ("COGITAO", "Compositional-ARC", "String-to-grid programs"):
        assert title in document["rai:dataCollection"]
    assert document["rai:personalSensitiveInformation"] and document["rai:dataLimitations"]
    assert str(three_families) not in json.dumps(document)  # nothing of this machine: the file travels


@pytest.mark.slow
def test_mlcroissant_validates_it_and_reads_the_stored_rows(three_families):
    mlc = pytest.importorskip("mlcroissant")
    import numpy as np

    dataset = mlc.Dataset(jsonld=three_families / CROISSANT_FILE)  # raises on any validation error
    assert not dataset.metadata.ctx.issues.errors
    for name, manifest in read_manifests(three_families).items():
        records = list(dataset.records(name))
        assert len(records) == sum(v["rows"] for v in manifest["splits"].values())
        first = manifest["splits"][next(iter(manifest["splits"]))]["files"][0]
        stored = pq.read_table(three_families / first).slice(0, 1).to_pylist()[0]
        record = next(r for r in records if r[f"{name}/id"].decode() == stored["id"])
        assert record[f"{name}/split"].decode() == next(iter(manifest["splits"]))
        for column in ("input", "study_inputs", "sample_outputs"):
            if column in stored:
                assert [np.asarray(g).tolist() for g in record[f"{name}/{column}"]] == stored[column]


def test_push_uploads_it_rendered_for_the_repo(small_build):
    from cogen.hub.publish import upload_plan

    plan = upload_plan(small_build, repo_id="me/data")
    assert CROISSANT_FILE in {f.path for f in plan.files}
    assert json.loads(plan.croissant)["url"] == "https://huggingface.co/datasets/me/data"
