"""The paths the interleaved throughput depends on (issue 45): image bytes read once per shard
file and never copied into fresh Arrow memory, a filter's surviving rows sharing the input's
buffers, the writer keeping a table with nothing to fetch as it is, and Curator's own filters
(kept rows taken from Arrow) giving exactly NeMo Curator's frame rules (``annotate``)."""

import os
import tarfile

import pyarrow as pa
import pytest
from curator_interleaved import (
    INTERLEAVED_SCHEMA,
    InterleavedAspectRatioFilterStage,
    InterleavedBatch,
    InterleavedImageToTextRatioFilterStage,
)
from curator_interleaved.io.readers.webdataset import InterleavedWebdatasetReaderStage
from curator_interleaved.testing import encode_image, make_image, make_mint_shards
from curator_interleaved.utils.materialization import fetch_bytes, materialize_table

from tests.interleaved.conftest import file_task


def _row(sid, pos, modality, text=None, data=None, ref=None):
    return {"sample_id": sid, "position": pos, "modality": modality,
            "content_type": {"text": "text/plain", "image": "image/png",
                             "metadata": "application/json"}[modality],
            "text_content": text, "binary_content": data, "source_ref": ref,
            "materialize_error": None}


def _png(w, h):
    return encode_image(make_image(w, h), "PNG")


def _addresses(column):
    """``(start, end)`` of the value bytes of every chunk of a binary column."""
    out = []
    for chunk in column.chunks:
        if len(chunk) == chunk.null_count:
            continue
        data = chunk.buffers()[2]
        out.append((data.address, data.address + data.size))
    return out


def test_materialize_table_with_nothing_to_fetch_returns_the_table_itself():
    table = pa.Table.from_pylist([_row("a", -1, "metadata"), _row("a", 0, "image",
                                                                  data=_png(8, 8))],
                                 schema=INTERLEAVED_SCHEMA)
    assert materialize_table(table) is table  # the writer's common case: no bytes copied


def test_local_byte_ranges_one_open_per_file_and_short_reads_reported(tmp_path, monkeypatch):
    path = tmp_path / "blob.bin"
    path.write_bytes(bytes(range(256)) * 4)
    opened = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda p, *a, **k: opened.append(p) or real_open(p, *a, **k))
    refs = [{"path": str(path), "byte_offset": off, "byte_size": size}
            for off, size in ((900, 20), (0, 10), (512, 256), (1020, 10), (0, 10))]
    refs.append({"path": str(tmp_path / "gone.bin"), "byte_offset": 0, "byte_size": 4})
    payloads, errors = fetch_bytes(refs)
    data = path.read_bytes()
    assert payloads[:3] == [data[900:920], data[0:10], data[512:768]]
    assert payloads[4] == data[0:10] and errors[:3] == [None] * 3
    assert payloads[3] is None and "short range read: 4 of 10 bytes" in errors[3]
    assert payloads[5] is None and "FileNotFoundError" in errors[5]
    assert opened.count(str(path)) == 1


def test_fetched_bytes_join_the_column_without_a_copy_and_survivors_share_buffers(tmp_path):
    # lazily read shards: the aspect filter fetches the images, the ratio filter then drops
    # one document; the kept bytes are the fetched objects' own memory throughout
    make_mint_shards(str(tmp_path), n_shards=1, docs_per_shard=6, seed=3)
    [shard] = sorted(tmp_path.glob("*.tar"))
    batch = InterleavedWebdatasetReaderStage().process(file_task([shard]))
    assert batch.to_pyarrow()["binary_content"].null_count == batch.to_pyarrow().num_rows
    after_aspect = InterleavedAspectRatioFilterStage(min_aspect_ratio=0.0,
                                                     max_aspect_ratio=100.0).process(batch)
    table = after_aspect.to_pyarrow()
    images = [i for i, m in enumerate(table["modality"].to_pylist()) if m == "image"]
    assert images and all(table["binary_content"][i].as_py() for i in images)
    with tarfile.open(shard) as tf:  # the same bytes as the members
        members = {i.name: tf.extractfile(i).read() for i in tf if i.name.endswith(".jpg")}
    refs = [InterleavedBatch.parse_source_ref(table["source_ref"][i].as_py()) for i in images]
    assert [table["binary_content"][i].as_py() for i in images] == [
        members[r["member"]] for r in refs]

    before = _addresses(table["binary_content"])
    # a ratio every document passes but one: drop the document with the most images per word
    kept = InterleavedImageToTextRatioFilterStage(max_ratio=_second_highest_ratio(table))
    out = kept.process(after_aspect).to_pyarrow()
    assert 0 < out.num_rows < table.num_rows
    for start, end in _addresses(out["binary_content"]):
        assert any(lo <= start and end <= hi for lo, hi in before)  # not copied


def _second_highest_ratio(table):
    images, words = {}, {}
    for r in table.to_pylist():
        sid = r["sample_id"]
        images[sid] = images.get(sid, 0) + (r["modality"] == "image")
        words[sid] = words.get(sid, 0) + (len(r["text_content"].split())
                                          if r["modality"] == "text" else 0)
    ratios = sorted(images[s] / max(words[s], 1) for s in images)
    assert ratios[-1] > ratios[-2], "the generated documents need one distinct highest ratio"
    return ratios[-2]


@pytest.mark.parametrize("split", [False, True])
def test_arrow_path_matches_annotate_frame_rules(split):
    # documents interleaved in the batch, one left with no content, one losing a middle image
    rows = [_row("b", -1, "metadata"), _row("a", -1, "metadata"),
            _row("a", 0, "text", "some words here"), _row("b", 0, "image", data=_png(90, 10)),
            _row("a", 1, "image", data=_png(90, 10)), _row("a", 2, "image", data=_png(40, 30)),
            _row("c", -1, "metadata"), _row("a", 3, "text", "more"),
            _row("c", 1, "image", data=_png(60, 40)), _row("c", 0, "text", "first")]
    batch = InterleavedBatch(task_id="t", dataset_name="d",
                             data=pa.Table.from_pylist(rows, schema=INTERLEAVED_SCHEMA))
    stage = InterleavedAspectRatioFilterStage(split=split)
    out = stage.process(batch).to_pyarrow()
    from_arrow = stage.drain_rejected()
    frame = stage.annotate(batch, batch.to_pandas().copy())
    from_frame = stage.drain_rejected()

    def key(r):
        return (r["sample_id"], int(r["position"]), r["modality"], r["text_content"],
                r["binary_content"])

    got = [key(r) for r in out.to_pylist()]
    assert got == [key(r) for r in frame.to_dict("records")]
    assert [g[:3] for g in got] == [("a", -1, "metadata"), ("a", 0, "text"), ("a", 1, "image"),
                                    ("a", 2, "text"), ("c", -1, "metadata"), ("c", 0, "text"),
                                    ("c", 1, "image")]
    assert got[2][4] == rows[5]["binary_content"]
    assert [(r.record["sample_id"], r.record["position"]) for r in from_arrow] == [
        (r.record["sample_id"], r.record["position"]) for r in from_frame]
    expected = [("b", 0), ("a", 1), ("b", -1)] if split else []
    assert [(r.record["sample_id"], r.record["position"]) for r in from_arrow] == expected


def test_ratio_filter_arrow_path_matches_annotate():
    rows = [_row("a", -1, "metadata"), _row("a", 0, "text", "one two three four"),
            _row("a", 1, "image", data=b"x"), _row("b", -1, "metadata"),
            _row("b", 0, "image", data=b"x"), _row("b", 1, "text", "two words"),
            _row("b", 2, "image", data=b"x"), _row("c", -1, "metadata"),
            _row("c", 0, "text", None)]
    batch = InterleavedBatch(task_id="t", dataset_name="d",
                             data=pa.Table.from_pylist(rows, schema=INTERLEAVED_SCHEMA))
    stage = InterleavedImageToTextRatioFilterStage(max_ratio=0.5, split=True)
    out = stage.process(batch).to_pyarrow().to_pylist()
    from_arrow = sorted((r.record["sample_id"], r.record["position"], r.record["score"])
                        for r in stage.drain_rejected())
    frame = stage.annotate(batch, batch.to_pandas().copy()).to_dict("records")
    from_frame = sorted((r.record["sample_id"], r.record["position"], r.record["score"])
                        for r in stage.drain_rejected())
    assert [(r["sample_id"], r["position"]) for r in out] == [
        (r["sample_id"], int(r["position"])) for r in frame] == [
        ("a", -1), ("a", 0), ("a", 1), ("c", -1), ("c", 0)]
    assert from_arrow == from_frame == [("b", -1, 1.0), ("b", 0, 1.0), ("b", 1, 1.0),
                                        ("b", 2, 1.0)]


def test_a_subclass_deciding_on_its_frame_is_not_bypassed():
    class Landscape(InterleavedAspectRatioFilterStage):
        def content_keep_mask(self, task, df):  # every image goes
            return df["modality"] != "image"

    batch = InterleavedBatch(task_id="t", dataset_name="d", data=pa.Table.from_pylist(
        [_row("a", -1, "metadata"), _row("a", 0, "text", "hi"),
         _row("a", 1, "image", data=_png(40, 30))], schema=INTERLEAVED_SCHEMA))
    out = Landscape().process(batch).to_pyarrow()
    assert out["modality"].to_pylist() == ["metadata", "text"]
