"""OBELICS-layout Parquet (images as bytes or URLs, fetched lazily) and interleaved Parquet:
read, written, read back; bad documents rejected with reasons."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
from curator_interleaved import (
    InterleavedObelicsReaderStage,
    InterleavedParquetReaderStage,
    InterleavedParquetWriterStage,
    materialize_task_binary_content,
)
from curator_interleaved.testing import (
    encode_image,
    expected_rows,
    make_image,
    make_obelics_parquet,
)

from .conftest import file_task


def _content(batch):
    out = []
    for r in batch.to_pyarrow().to_pylist():
        if r["position"] >= 0:
            value = r["text_content"] if r["modality"] == "text" else r["binary_content"]
            out.append((r["sample_id"], r["position"], r["modality"], value))
    return out


def test_obelics_bytes_round_trip_through_parquet(tmp_path):
    docs = make_obelics_parquet(str(tmp_path / "obelics.parquet"), n_docs=6)
    stage = InterleavedObelicsReaderStage()
    batch = stage.process(file_task([tmp_path / "obelics.parquet"]))
    assert stage.drain_rejected() == []
    assert _content(batch) == expected_rows(docs)
    table = batch.to_pyarrow()
    meta = [r for r in table.to_pylist() if r["position"] == -1]
    assert [m["general_metadata"] for m in meta] == [d["general_metadata"] for d in docs]
    assert all(m["doc_quality"] is not None for m in meta)
    images = [r for r in table.to_pylist() if r["modality"] == "image"]
    assert all(r["content_type"] == "image/jpeg" for r in images)
    assert json.loads(images[0]["metadata"])["original_width"] > 0
    # written by us and read back: the same rows, in order
    writer = InterleavedParquetWriterStage(path=str(tmp_path / "out"))
    written = writer.process(batch)
    back = InterleavedParquetReaderStage().process(file_task(written.data))
    assert back.to_pyarrow().to_pylist() == table.to_pylist()


def test_obelics_urls_fetched_only_when_needed(tmp_path, http_dir):
    www, base = http_dir
    for k in range(3):
        (www / f"{k}.png").write_bytes(encode_image(make_image(30 + k, 20), "PNG"))
    urls = [f"{base}/{k}.png" for k in range(3)]
    docs = make_obelics_parquet(str(tmp_path / "o.parquet"), n_docs=5, image_urls=urls)
    batch = InterleavedObelicsReaderStage().process(file_task([tmp_path / "o.parquet"]))
    images = [r for r in batch.to_pyarrow().to_pylist() if r["modality"] == "image"]
    assert images and all(r["binary_content"] is None for r in images)
    assert [json.loads(r["source_ref"])["path"] for r in images] == \
        [v for d in docs for k, v in d["segments"] if k == "image"]
    assert all(r["content_type"] == "image/png" for r in images)
    got = materialize_task_binary_content(batch).to_pyarrow().to_pylist()
    fetched = [r["binary_content"] for r in got if r["modality"] == "image"]
    assert fetched == [(www / r.rsplit("/", 1)[1]).read_bytes() for r in
                       (json.loads(i["source_ref"])["path"] for i in images)]


def test_obelics_bad_documents_rejected(tmp_path):
    rows = [{"texts": ["a", None], "images": [None, b"x"], "metadata": "[]",
             "general_metadata": "{}"},
            {"texts": ["a"], "images": [None, None], "metadata": "[]", "general_metadata": "{}"},
            {"texts": ["a", "b"], "images": [b"x", None], "metadata": "[]",
             "general_metadata": "{}"},
            {"texts": ["a"], "images": [None], "metadata": "{bad", "general_metadata": "{}"}]
    path = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    stage = InterleavedObelicsReaderStage()
    batch = stage.process(file_task([path]))
    assert sorted((r.record["sample_id"], r.reason) for r in stage.drain_rejected()) == [
        ("bad-1", "text_image_count_mismatch"), ("bad-2", "malformed_document"),
        ("bad-3", "malformed_json")]
    assert set(batch.to_pyarrow()["sample_id"].to_pylist()) == {"bad-0"}


def test_parquet_reader_rejects_documents_without_positions(tmp_path):
    rows = [{"sample_id": "ok", "position": -1, "modality": "metadata"},
            {"sample_id": "ok", "position": 0, "modality": "text", "text_content": "hi"},
            {"sample_id": "lost", "position": -1, "modality": "metadata"},
            {"sample_id": "lost", "position": None, "modality": "text", "text_content": "?"},
            {"sample_id": None, "position": 0, "modality": "text", "text_content": "orphan"}]
    path = tmp_path / "p.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    stage = InterleavedParquetReaderStage(fields=("nothing",))
    batch = stage.process(file_task([path]))
    assert sorted(r.reason for r in stage.drain_rejected()) == [
        "segment_without_sample_id", "segments_without_position"]
    table = batch.to_pyarrow()
    assert table["sample_id"].to_pylist() == ["ok", "ok"]
    assert "nothing" in table.column_names
    assert table.schema.field("position").type == pa.int32()
