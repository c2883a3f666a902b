"""Interleaved pipelines on the local executor: shards -> filters -> writers, with the rejected
sink, the run manifest, deterministic names and resume."""

import json
import os
import tarfile

import pyarrow.parquet as pq
from curator import Pipeline, processing_stage
from curator.output_dir import MANIFEST_NAME
from curator_interleaved import (
    InterleavedAspectRatioFilterStage,
    InterleavedImageToTextRatioFilterStage,
    InterleavedParquetReader,
    InterleavedParquetWriterStage,
    InterleavedWebdatasetReader,
    InterleavedWebdatasetWriterStage,
)
from curator_interleaved.testing import expected_rows, make_mint_shards


def _content(rows):
    out = []
    for r in rows:
        if r["position"] >= 0:
            value = r["text_content"] if r["modality"] == "text" else r["binary_content"]
            out.append((r["sample_id"], r["position"], r["modality"], value))
    return out


def test_mint_shards_round_trip_through_webdataset_and_parquet(tmp_path):
    docs = make_mint_shards(str(tmp_path / "in"), n_shards=2, docs_per_shard=3)
    wds = tmp_path / "wds"
    first = Pipeline("to_wds", stages=[
        InterleavedWebdatasetReader(file_paths=str(tmp_path / "in")),
        InterleavedWebdatasetWriterStage(path=str(wds))]).run(summary=False)
    assert first.ok
    tars = sorted(wds.glob("*.tar"))
    assert len(tars) == 2
    with tarfile.open(tars[0]) as tf:  # MINT-1T layout: {key}.json + {key}.{pos}.{ext}
        names = tf.getnames()
    assert any(n.endswith(".json") for n in names) and any(n.endswith(".jpg") for n in names)
    manifest = json.loads((wds / MANIFEST_NAME).read_text())
    assert sorted(os.path.basename(f) for f in manifest["files"]) == [t.name for t in tars]
    pq_dir = tmp_path / "pq"
    Pipeline("to_pq", stages=[
        InterleavedWebdatasetReader(file_paths=str(wds), sample_id_field="sample_id"),
        InterleavedParquetWriterStage(path=str(pq_dir))]).run(summary=False)
    rows = [r for f in sorted(pq_dir.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    assert sorted(_content(rows)) == sorted(expected_rows(docs))
    urls = {r["sample_id"]: r["url"] for r in rows if r["position"] == -1}
    assert urls == {d["sample_id"]: d["url"] for d in docs}
    # and Parquet read back is the same rows again
    back = Pipeline("pq_back", stages=[InterleavedParquetReader(file_paths=str(pq_dir))]).run(
        summary=False)
    again = [r for b in back for r in b.to_pyarrow().to_pylist()]
    assert sorted(_content(again)) == sorted(_content(rows))
    # a re-run replaces its own files (deterministic names): no second copy
    before = sorted(p.name for p in wds.iterdir())
    Pipeline("to_wds", stages=[
        InterleavedWebdatasetReader(file_paths=str(tmp_path / "in")),
        InterleavedWebdatasetWriterStage(path=str(wds))]).run(summary=False)
    assert sorted(p.name for p in wds.iterdir()) == before


def test_bad_images_reach_the_rejected_sink_only_when_needed(tmp_path):
    make_mint_shards(str(tmp_path / "in"), n_shards=1, docs_per_shard=4)
    shard = tmp_path / "in" / "shard-00000.tar"
    with tarfile.open(shard) as tf:
        first_img = next(m for m in tf.getmembers() if m.name.endswith(".jpg"))
    data = bytearray(shard.read_bytes())
    data[first_img.offset_data:first_img.offset_data + first_img.size] = b"\0" * first_img.size
    shard.write_bytes(bytes(data))  # one image no longer decodes
    # no stage needs bytes: nothing rejected, the row is written as read
    plain = Pipeline("plain", stages=[
        InterleavedWebdatasetReader(file_paths=str(tmp_path / "in")),
        InterleavedImageToTextRatioFilterStage(),
        InterleavedParquetWriterStage(path=str(tmp_path / "a"), materialize_on_write=False),
    ]).run(summary=False)
    assert plain.ok and plain.rejected.counts == {}
    # the aspect-ratio filter needs them: that image is rejected with its reason, the rest kept
    result = Pipeline("needs_bytes", stages=[
        InterleavedWebdatasetReader(file_paths=str(tmp_path / "in")),
        InterleavedAspectRatioFilterStage(min_aspect_ratio=0.0, max_aspect_ratio=100.0),
        InterleavedParquetWriterStage(path=str(tmp_path / "b"))]).run(summary=False)
    assert result.ok
    [rec] = result.rejected.records
    assert rec.reason == "undecodable_image" and rec.record["source_ref"]
    rows = [r for f in (tmp_path / "b").glob("*.parquet") for r in pq.read_table(f).to_pylist()]
    assert sum(r["modality"] == "image" for r in rows) > 0
    assert all(r["binary_content"] for r in rows if r["modality"] == "image")


@processing_stage(name="crash_on_flag")
def _crash_on_flag(batch):
    with open(os.environ["IL_LOG"], "a") as fh:
        fh.write(batch.task_id + "\n")
    if batch.task_id == os.environ.get("IL_CRASH"):
        raise RuntimeError("crash")
    return batch


def test_resume_redoes_only_the_failed_partition(tmp_path, monkeypatch):
    make_mint_shards(str(tmp_path / "in"), n_shards=3, docs_per_shard=2)
    log, out, ckpt = tmp_path / "log.txt", tmp_path / "out", str(tmp_path / "ckpt")
    from curator.stages.file_partitioning import FilePartitioningStage

    parts = FilePartitioningStage(file_paths=str(tmp_path / "in"),
                                  file_extensions=[".tar"]).process(None)
    ids = [p.task_id for p in parts]
    monkeypatch.setenv("IL_LOG", str(log))
    monkeypatch.setenv("IL_CRASH", ids[1])

    def pipe():
        return Pipeline("p", stages=[InterleavedWebdatasetReader(file_paths=str(tmp_path / "in")),
                                     _crash_on_flag,
                                     InterleavedParquetWriterStage(path=str(out))])

    first = pipe().run(checkpoint_dir=ckpt, max_retries=0, summary=False,
                       raise_on_failure=False)
    assert not first.ok and len(list(out.glob("*.parquet"))) == 2
    log.write_text("")
    monkeypatch.delenv("IL_CRASH")
    again = pipe().run(checkpoint_dir=ckpt, summary=False)
    assert again.ok and log.read_text().split() == [ids[1]]
    files = sorted(p.name for p in out.glob("*.parquet"))
    assert files == sorted(f"{i}.parquet" for i in ids)
    docs = [r["sample_id"] for f in out.glob("*.parquet") for r in pq.read_table(f).to_pylist()
            if r["position"] == -1]
    assert len(docs) == len(set(docs)) == 6  # every document once
