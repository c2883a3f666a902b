"""InterleavedObelicsWriterStage: OBELICS Parquet written by us and read back gives the same rows,
segments in order (images as bytes, or as URLs kept as source_ref); user fields; documents whose
images a filter removed; rows with no OBELICS form rejected with their reason."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator import Pipeline
from curator.output_dir import MANIFEST_NAME
from curator_interleaved import (
    InterleavedAspectRatioFilterStage,
    InterleavedBatch,
    InterleavedObelicsReader,
    InterleavedObelicsReaderStage,
    InterleavedObelicsWriterStage,
    InterleavedWebdatasetReaderStage,
)
from curator_interleaved.testing import (
    encode_image,
    expected_rows,
    make_image,
    make_mint_shards,
    make_obelics_parquet,
)

from .conftest import file_task


def _read_back(path, task_id="back"):
    stage = InterleavedObelicsReaderStage(sample_id_field="sample_id")
    batch = stage.process(file_task([path], task_id))
    assert stage.drain_rejected() == []
    return batch.to_pyarrow()


def _same_rows(got: pa.Table, want: pa.Table) -> None:
    """The same rows in the same order; locators of whole-file rows may name the file written."""
    keep = [c for c in want.column_names if c != "source_ref"]
    assert got.select(keep).to_pylist() == want.select(keep).to_pylist()


def test_bytes_round_trip_with_user_fields(tmp_path):
    docs = make_obelics_parquet(str(tmp_path / "in" / "o.parquet"), n_docs=6)
    first = InterleavedObelicsReaderStage().process(file_task([tmp_path / "in" / "o.parquet"]))
    writer = InterleavedObelicsWriterStage(path=str(tmp_path / "out"))
    written = writer.process(first)
    assert writer.drain_rejected() == []
    [path] = written.data
    assert path.endswith("/t0.parquet") and written.metadata["format"] == "parquet"
    raw = pq.read_table(path)
    assert raw.column_names == ["sample_id", "texts", "images", "metadata", "general_metadata",
                                "doc_quality"]
    assert raw.schema.field("images").type == pa.list_(pa.binary())
    assert raw["general_metadata"].to_pylist() == [d["general_metadata"] for d in docs]
    assert [json.loads(m) for m in raw["metadata"].to_pylist()] == [d["meta"] for d in docs]
    back = _read_back(path)
    _same_rows(back, first.to_pyarrow())
    content = [(r["sample_id"], r["position"], r["modality"],
                r["text_content"] if r["modality"] == "text" else r["binary_content"])
               for r in back.to_pylist() if r["position"] >= 0]
    assert content == expected_rows(docs)
    # and again: what we write from what we read back is byte-for-byte the same file
    again = InterleavedObelicsWriterStage(path=str(tmp_path / "again")).process(
        InterleavedBatch(task_id="t0", dataset_name="d", data=back))
    assert pq.read_table(again.data[0]).equals(raw)


def test_urls_kept_as_source_refs_and_never_fetched(tmp_path, http_dir):
    www, base = http_dir
    (www / "0.png").write_bytes(encode_image(make_image(30, 20), "PNG"))
    urls = [f"{base}/0.png", f"{base}/gone.png"]  # the second is a 404: never fetched
    make_obelics_parquet(str(tmp_path / "u.parquet"), n_docs=4, image_urls=urls)
    first = InterleavedObelicsReaderStage().process(file_task([tmp_path / "u.parquet"]))
    writer = InterleavedObelicsWriterStage(path=str(tmp_path / "out"))
    [path] = writer.process(first).data
    assert writer.drain_rejected() == []
    raw = pq.read_table(path)
    assert raw.schema.field("images").type == pa.list_(pa.string())
    assert {u for row in raw["images"].to_pylist() for u in row if u} == set(urls)
    back = _read_back(path)
    want = first.to_pyarrow()
    _same_rows(back, want)
    images = back.filter(pa.compute.equal(back["modality"], "image"))
    assert images["source_ref"].to_pylist() == \
        want.filter(pa.compute.equal(want["modality"], "image"))["source_ref"].to_pylist()
    assert images["binary_content"].null_count == images.num_rows
    # image_format="bytes" fetches them: the 404 goes to the rejected sink, the rest is written
    fetching = InterleavedObelicsWriterStage(path=str(tmp_path / "bytes"), image_format="bytes")
    [bpath] = fetching.process(first).data
    rejected = fetching.drain_rejected()
    assert rejected and {r.reason for r in rejected} == {"image_unavailable"}
    assert all("gone.png" in r.record["source_ref"] for r in rejected)
    fetched = pq.read_table(bpath)
    assert fetched.schema.field("images").type == pa.list_(pa.binary())
    assert {bytes(b) for row in fetched["images"].to_pylist() for b in row if b} == \
        {(www / "0.png").read_bytes()}


def test_mint_shards_write_bytes_and_tar_members_cannot_be_urls(tmp_path):
    docs = make_mint_shards(str(tmp_path / "in"), n_shards=1, docs_per_shard=4)
    batch = InterleavedWebdatasetReaderStage().process(
        file_task(sorted((tmp_path / "in").glob("*.tar"))))
    # auto: tar members are not URLs, so their bytes are fetched and written
    [path] = InterleavedObelicsWriterStage(path=str(tmp_path / "out")).process(batch).data
    back = _read_back(path)
    got = [(r["sample_id"], r["position"], r["modality"],
            r["text_content"] if r["modality"] == "text" else r["binary_content"])
           for r in back.to_pylist() if r["position"] >= 0]
    assert got == expected_rows(docs)
    assert {r["url"] for r in back.to_pylist() if r["position"] == -1} == \
        {d["url"] for d in docs}
    # image_format="url" cannot name a tar member: those rows are rejected, the texts kept
    writer = InterleavedObelicsWriterStage(path=str(tmp_path / "urls"), image_format="url")
    [upath] = writer.process(batch).data
    n_images = sum(k == "image" for d in docs for k, _ in d["segments"])
    rejected = writer.drain_rejected()
    assert len(rejected) == n_images
    assert {r.reason for r in rejected} == {"image_not_addressable"}
    back = _read_back(upath)
    assert "image" not in back["modality"].to_pylist()
    assert sum(m == "text" for m in back["modality"].to_pylist()) == \
        sum(k == "text" for d in docs for k, _ in d["segments"])


def test_documents_whose_images_were_filtered_out(tmp_path):
    make_obelics_parquet(str(tmp_path / "in" / "o.parquet"), n_docs=8, seed=3)
    out, rejected = tmp_path / "out", tmp_path / "rejected"
    result = Pipeline("obelics", stages=[
        InterleavedObelicsReader(file_paths=str(tmp_path / "in")),
        # every image fails the ratio: documents keep their texts, renumbered
        InterleavedAspectRatioFilterStage(min_aspect_ratio=50.0, max_aspect_ratio=60.0,
                                          split=True),
        InterleavedObelicsWriterStage(path=str(out))]).run(rejected_dir=str(rejected),
                                                           summary=False)
    assert result.ok
    files = sorted(out.glob("*.parquet"))
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert sorted(f.rsplit("/", 1)[-1] for f in manifest["files"]) == [f.name for f in files]
    raw = pa.concat_tables([pq.read_table(f) for f in files])
    assert all(i is None for row in raw["images"].to_pylist() for i in row)
    back = pa.concat_tables([_read_back(f) for f in files])
    before = InterleavedObelicsReaderStage().process(
        file_task([tmp_path / "in" / "o.parquet"])).to_pyarrow()
    texts = [r["text_content"] for r in before.to_pylist() if r["modality"] == "text"]
    assert [r["text_content"] for r in back.to_pylist() if r["modality"] == "text"] == texts
    for sid in set(back["sample_id"].to_pylist()):
        positions = [r["position"] for r in back.to_pylist()
                     if r["sample_id"] == sid and r["position"] >= 0]
        assert positions == list(range(len(positions)))
    assert sum(result.rejected.counts.values()) == sum(
        r["modality"] == "image" for r in before.to_pylist())
    # a re-run replaces its own files (deterministic names, same bytes): no second copy
    written = {f.name: f.read_bytes() for f in files}
    Pipeline("obelics", stages=[
        InterleavedObelicsReader(file_paths=str(tmp_path / "in")),
        InterleavedAspectRatioFilterStage(min_aspect_ratio=50.0, max_aspect_ratio=60.0),
        InterleavedObelicsWriterStage(path=str(out))]).run(summary=False)
    assert {f.name: f.read_bytes() for f in out.glob("*.parquet")} == written


def test_rows_without_an_obelics_form_are_rejected(tmp_path):
    png = encode_image(make_image(8, 8), "PNG")
    table = pa.table({
        "sample_id": ["a", "a", "a", "b", "b", "b", "c", "c", "c"],
        "position": pa.array([-1, 0, 1, -1, 0, 0, -1, 0, 2], pa.int32()),
        "modality": ["metadata", "text", "text", "metadata", "text", "image", "metadata",
                     "image", "text"],
        "text_content": [None, "hello", None, None, "x", None, None, None, "after a gap"],
        "binary_content": pa.array([None, None, None, None, None, png, None, png, None],
                                   pa.large_binary()),
        "caption": [None, None, None, None, None, None, None, "a cat", None],
        "lang": ["en", "en", None, None, None, None, "de", None, "fr"],
        "metadata": ['{"doc": 1}', None, None, None, None, None, None, '{"w": 8}', None]})
    writer = InterleavedObelicsWriterStage(path=str(tmp_path / "out"))
    [path] = writer.process(InterleavedBatch(task_id="t", dataset_name="d", data=table)).data
    assert sorted((r.reason, r.record["sample_id"]) for r in writer.drain_rejected()) == [
        ("duplicate_position", "b"), ("duplicate_position", "b"), ("duplicate_position", "b"),
        ("text_without_content", "a")]
    raw = pq.read_table(path)
    assert raw["sample_id"].to_pylist() == ["a", "c"]
    assert raw["texts"].to_pylist() == [["hello"], [None, None, "after a gap"]]
    assert raw["caption"].to_pylist() == [[None], ["a cat", None, None]]  # per position
    # set on both kinds of rows: the document's value and a per-position list, nothing lost
    assert raw["lang"].to_pylist() == ["en", "de"]
    assert raw["lang_segments"].to_pylist() == [["en"], [None, None, "fr"]]
    assert raw["document_metadata"].to_pylist() == ['{"doc": 1}', None]
    assert [json.loads(m) for m in raw["metadata"].to_pylist()] == [[None], [{"w": 8}, None, None]]
    back = _read_back(path).to_pylist()
    assert [(r["sample_id"], r["position"], r["modality"]) for r in back] == [
        ("a", -1, "metadata"), ("a", 0, "text"), ("c", -1, "metadata"), ("c", 0, "image"),
        ("c", 2, "text")]
    with pytest.raises(Exception, match="image_format"):
        InterleavedObelicsWriterStage(path=str(tmp_path / "x"), image_format="jpeg")
