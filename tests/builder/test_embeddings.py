"""Embedding precisions: the opt-in bfloat16 encoder agrees with float32 and never shares its cache."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest
from repo_paths import SHARED_DATA

from builder import checks, embeddings

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def sentences():
    """Sentences of three real PubMedQA abstracts."""
    abstracts = checks.pubmedqa_abstracts(SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json")[:3]
    found = [s for a in abstracts for s in re.split(r"(?<=\.)\s+", a.text) if len(s.split()) >= 5]
    assert len(found) >= 6
    return found


def test_bfloat16_vectors_are_unit_length_and_close_to_float32(sentences):
    fp32, bf16 = embeddings.load_encoder(), embeddings.load_encoder(precision="bfloat16")
    assert (embeddings.encoder_precision(fp32), embeddings.encoder_precision(bf16)) == ("float32", "bfloat16")
    a, b = embeddings.embed_texts(sentences, fp32), embeddings.embed_texts(sentences, bf16)
    assert b.dtype == np.float32 and b.shape == a.shape
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert (a * b).sum(axis=1).min() > 0.99
    assert not np.array_equal(a, b)  # really another precision, not the float32 model again


def test_each_precision_has_its_own_cache_folder(tmp_path, sentences):
    model = embeddings.DEFAULT_MODEL
    assert embeddings.model_fingerprint(model) == embeddings.model_fingerprint(model, "float32")
    fp32_cache = embeddings.open_cache(tmp_path, model, 384)
    bf16_cache = embeddings.open_cache(tmp_path, model, 384, "bfloat16")
    assert fp32_cache.folder != bf16_cache.folder
    assert json.loads((bf16_cache.folder / "meta.json").read_text(encoding="utf-8"))["precision"] == "bfloat16"

    bf16 = embeddings.load_encoder(precision="bfloat16")
    first = embeddings.embed_texts(sentences, bf16, bf16_cache)
    again = embeddings.open_cache(tmp_path, model, 384, "bfloat16")
    np.testing.assert_array_equal(embeddings.embed_texts(sentences, bf16, again), first)
    assert again.stats.from_cache == len(set(sentences)) and again.stats.embedded == 0
    assert not list(fp32_cache.folder.glob("emb-*.npz"))


def test_a_cache_of_another_precision_is_refused(tmp_path, sentences):
    fp32_cache = embeddings.open_cache(tmp_path, embeddings.DEFAULT_MODEL, 384)
    with pytest.raises(ValueError, match="float32 vectors, the encoder is bfloat16"):
        embeddings.embed_texts(sentences, embeddings.load_encoder(precision="bfloat16"), fp32_cache)
    with pytest.raises(ValueError, match="precision"):
        embeddings.load_encoder(precision="int8")


@pytest.mark.parametrize("name, is_path", [
    ("sentence-transformers/all-MiniLM-L6-v2", False), ("all-mpnet-base-v2", False),
    ("./models/encoder", True), ("/opt/models/encoder", True), ("~/encoder", True), ("models/org/encoder", True),
    ("C:\\models\\encoder", True),
])
def test_a_model_name_is_a_folder_only_when_written_as_one(name, is_path):
    """One reading for builder and trainer: a missing folder is an error, a Hub ``org/name`` is looked up."""
    from builder.embeddings import looks_like_path

    assert looks_like_path(name) is is_path


def _cut_zip(tmp_path, files: dict[str, str], parts: int) -> list:
    """A zip of ``files`` cut into ``parts`` byte ranges, as the all-mpnet-base-v2 packages ship it."""
    import zipfile

    whole = tmp_path / "model.zip"
    with zipfile.ZipFile(whole, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    data, paths = whole.read_bytes(), []
    step = -(-len(data) // parts)
    for i in range(parts):
        paths.append(tmp_path / f"model.zip.{i + 1:03d}")
        paths[-1].write_bytes(data[i * step:(i + 1) * step])
    whole.unlink()
    return paths


def test_a_model_cut_into_packages_is_joined_in_order_extracted_once_and_found_by_its_name(tmp_path, monkeypatch):
    files = {"all-mpnet-base-v2/config.json": '{"model_type": "mpnet"}', "all-mpnet-base-v2/vocab.txt": "[PAD]\n",
             "all-mpnet-base-v2/1_Pooling/config.json": "{}", "desktop.ini": ""}
    parts = _cut_zip(tmp_path, files, len(embeddings.MPNET_PARTS))
    monkeypatch.setenv("BIODIVERGENCE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(embeddings, "package_part", lambda name: parts[embeddings.MPNET_PARTS.index(name)])
    folder = tmp_path / "cache" / embeddings.MPNET
    assert embeddings.resolve_model("all-mpnet-base-v2") == str(folder)
    assert json.loads((folder / "config.json").read_text()) == {"model_type": "mpnet"}
    assert (folder / "1_Pooling" / "config.json").exists()
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [embeddings.MPNET]  # no zip or staging left
    parts[0].write_bytes(b"damaged")  # extracted once: the folder is read, the parts are not joined again
    assert embeddings.resolve_model("sentence-transformers/all-mpnet-base-v2") == str(folder)


def test_parts_out_of_order_or_missing_are_named_not_silently_used(tmp_path, monkeypatch):
    parts = _cut_zip(tmp_path, {"m/config.json": "{}"}, 3)
    with pytest.raises(ValueError, match=r"model\.zip\.003.*not a zip"):
        embeddings.joined_zip_model(parts[::-1], tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out*"))
    monkeypatch.setattr(embeddings, "package_part", lambda name: None if name.endswith("005") else parts[0])
    assert embeddings.packaged_mpnet() is None
    assert embeddings.resolve_model("all-mpnet-base-v2") == "all-mpnet-base-v2"  # a Hub id, as before
