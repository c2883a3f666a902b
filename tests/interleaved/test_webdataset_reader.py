"""MINT-1T WebDataset shards: read as NeMo Curator reads them; bad input rejected with reasons."""

import io
import json
import os
import tarfile

import pytest
from curator_interleaved import InterleavedWebdatasetReaderStage, materialize_task_binary_content
from curator_interleaved.testing import encode_image, expected_rows, make_image, make_mint_shards

from .conftest import file_task


def _content(batch, with_values=True):
    rows = batch.to_pyarrow().to_pylist()
    out = []
    for r in rows:
        if r["position"] < 0:
            continue
        value = r["text_content"] if r["modality"] == "text" else r["binary_content"]
        out.append((r["sample_id"], r["position"], r["modality"]) + ((value,) if with_values
                                                                       else ()))
    return out


def _shards(tmp_path, **kw):
    docs = make_mint_shards(str(tmp_path / "shards"), **kw)
    return docs, sorted((tmp_path / "shards").glob("*.tar"))


def test_reads_documents_in_order_with_user_fields(tmp_path):
    docs, paths = _shards(tmp_path, n_shards=2, docs_per_shard=3)
    stage = InterleavedWebdatasetReaderStage()
    batch = stage.process(file_task(paths))
    assert stage.drain_rejected() == []
    assert batch.num_items == 6
    assert _content(batch, with_values=False) == [e[:3] for e in expected_rows(docs)]
    table = batch.to_pyarrow()
    meta = [r for r in table.to_pylist() if r["modality"] == "metadata"]
    assert [m["url"] for m in meta] == [d["url"] for d in docs]
    assert {"url", "language", "score"} <= set(table.column_names)
    # lazily: no bytes yet, byte ranges into the shard
    images = [r for r in table.to_pylist() if r["modality"] == "image"]
    assert images and all(r["binary_content"] is None for r in images)
    ref = json.loads(images[0]["source_ref"])
    assert ref["byte_offset"] is not None and ref["member"].endswith(".jpg")
    got = materialize_task_binary_content(batch)
    assert _content(got) == expected_rows(docs)


def test_fields_select_user_columns(tmp_path):
    _, paths = _shards(tmp_path, n_shards=1, docs_per_shard=2)
    table = InterleavedWebdatasetReaderStage(fields=("url", "missing")).process(
        file_task(paths)).to_pyarrow()
    assert [c for c in table.column_names if c not in
            {"sample_id", "position", "modality", "content_type", "text_content",
             "binary_content", "source_ref", "materialize_error"}] == ["url", "missing"]
    with pytest.raises(ValueError, match="reserved"):
        InterleavedWebdatasetReaderStage(fields=("sample_id",)).process(file_task(paths))


def test_materialize_on_read(tmp_path):
    docs, paths = _shards(tmp_path, n_shards=1, docs_per_shard=3)
    batch = InterleavedWebdatasetReaderStage(materialize_on_read=True).process(file_task(paths))
    assert _content(batch) == expected_rows(docs)


def _tar(path, members):
    with tarfile.open(path, "w") as tf:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_bad_documents_are_rejected_with_reasons_rest_kept(tmp_path):
    jpg = encode_image(make_image(40, 30))
    good = {"texts": ["a b", None], "images": [None, "good.1.jpg"]}
    path = _tar(tmp_path / "mixed.tar", [
        ("good.1.jpg", jpg), ("good.json", json.dumps(good).encode()),
        ("broken.json", b"{not json"),
        ("mismatch.json", json.dumps({"texts": ["a", None, "b"], "images": [None, "x"]}).encode()),
        ("notlist.json", json.dumps({"texts": "a string", "images": []}).encode()),
        ("noimage.json", json.dumps({"texts": ["t", None], "images": [None, "absent"]}).encode()),
    ])
    stage = InterleavedWebdatasetReaderStage()
    batch = stage.process(file_task([path]))
    rejected = {r.record["member"]: r.reason for r in stage.drain_rejected()}
    assert rejected == {"broken.json": "malformed_json",
                        "mismatch.json": "text_image_count_mismatch",
                        "notlist.json": "malformed_document"}
    table = batch.to_pyarrow()
    assert sorted(set(table["sample_id"].to_pylist())) == ["good", "noimage"]
    missing = [r for r in table.to_pylist() if r["sample_id"] == "noimage"
               and r["modality"] == "image"]
    assert "missing image member" in missing[0]["materialize_error"]


def test_truncated_tar_keeps_what_was_read(tmp_path):
    jpg = encode_image(make_image(40, 30))
    members = []
    for k in range(3):
        members += [(f"d{k}.1.jpg", jpg), (f"d{k}.json", json.dumps(
            {"texts": ["x", None], "images": [None, f"d{k}.1.jpg"]}).encode())]
    full = _tar(tmp_path / "full.tar", members)
    data = open(full, "rb").read()
    cut = tmp_path / "cut.tar"
    # cut inside the last image member: the last document's JSON is lost, its image truncated
    with tarfile.open(full) as tf:
        last_img = [m for m in tf.getmembers() if m.name == "d2.1.jpg"][0]
    cut.write_bytes(data[:last_img.offset_data + 100])
    stage = InterleavedWebdatasetReaderStage()
    batch = stage.process(file_task([cut]))
    reasons = [r.reason for r in stage.drain_rejected()]
    assert reasons and set(reasons) == {"truncated_tar"}
    assert sorted(set(batch.to_pyarrow()["sample_id"].to_pylist())) == ["d0", "d1"]
    # a shard that is not a tar at all
    junk = tmp_path / "junk.tar"
    junk.write_bytes(os.urandom(50))
    stage.process(file_task([junk]))
    assert [r.reason for r in stage.drain_rejected()] == ["unreadable_shard"]


def test_missing_and_truncated_members_fill_materialize_error(tmp_path):
    jpg = encode_image(make_image(40, 30))
    path = _tar(tmp_path / "s.tar", [("a.1.jpg", jpg), ("a.json", json.dumps(
        {"texts": ["x", None], "images": [None, "a.1.jpg"]}).encode())])
    batch = InterleavedWebdatasetReaderStage().process(file_task([path]))
    # the shard is cut after reading: the byte range now comes back short
    data = open(path, "rb").read()
    with tarfile.open(path) as tf:
        off = tf.getmember("a.1.jpg").offset_data
    open(path, "wb").write(data[:off + 10])
    out = materialize_task_binary_content(batch).to_pyarrow().to_pylist()
    img = [r for r in out if r["modality"] == "image"][0]
    assert img["binary_content"] is None and "short range read" in img["materialize_error"]


def test_mint_pdf_style_tiff_frames(tmp_path):
    from PIL import Image

    frames = [Image.new("RGB", (20 + i, 10), (50 * i, 0, 0)) for i in range(2)]
    buf = io.BytesIO()
    frames[0].save(buf, format="TIFF", save_all=True, append_images=frames[1:])
    path = _tar(tmp_path / "p.tar", [("doc.tiff", buf.getvalue()), ("doc.json", json.dumps(
        {"texts": ["a", None, None], "images": [None, "page_0_img", "page_1_img"]}).encode())])
    batch = InterleavedWebdatasetReaderStage(materialize_on_read=True).process(file_task([path]))
    imgs = [r for r in batch.to_pyarrow().to_pylist() if r["modality"] == "image"]
    assert [json.loads(r["source_ref"])["frame_index"] for r in imgs] == [0, 1]
    sizes = [Image.open(io.BytesIO(r["binary_content"])).size for r in imgs]
    assert sizes == [(20, 10), (21, 10)]
