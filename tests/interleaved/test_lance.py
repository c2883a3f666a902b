"""Interleaved Lance datasets: written by curator-text's LanceWriter, read back by
InterleavedLanceReader with the same rows in order; unordered documents rejected."""

import lance
import pyarrow as pa
import pytest
from curator import Pipeline
from curator_interleaved import InterleavedWebdatasetReader
from curator_interleaved.lance import InterleavedLanceReader, InterleavedLanceReaderStage
from curator_interleaved.testing import expected_rows, make_mint_shards
from curator_text import LanceWriter, commit_lance_checkpoint
from curator_text.io.lance import LancePartitioningStage


def test_mint_shards_to_lance_and_back(tmp_path):
    docs = make_mint_shards(str(tmp_path / "in"), n_shards=2, docs_per_shard=3)
    dst, ck = str(tmp_path / "il.lance"), str(tmp_path / "ck")
    Pipeline("to_lance", stages=[
        InterleavedWebdatasetReader(file_paths=str(tmp_path / "in"), materialize_on_read=True),
        LanceWriter(path=dst, commit_path=ck)]).run(summary=False)
    commit_lance_checkpoint(dst, ck)
    out = Pipeline("from_lance", stages=[
        InterleavedLanceReader(path=dst, include_lance_metadata=False)]).run(summary=False)
    rows = [r for b in sorted(out, key=lambda b: b.to_pyarrow()["sample_id"][0].as_py())
            for r in b.to_pyarrow().to_pylist()]
    got = [(r["sample_id"], r["position"], r["modality"],
            r["text_content"] if r["modality"] == "text" else r["binary_content"])
           for r in rows if r["position"] >= 0]
    assert got == expected_rows(docs)
    assert {r["url"] for r in rows if r["position"] == -1} == {d["url"] for d in docs}
    assert out[0].to_pyarrow().schema.field("position").type == pa.int32()


def test_lance_reader_checks_fields_and_rejects_unordered(tmp_path):
    with pytest.raises(ValueError, match="required columns"):
        InterleavedLanceReaderStage(fields=["sample_id"])
    path = str(tmp_path / "bad.lance")
    lance.write_dataset(pa.table({
        "sample_id": ["a", "a", "b", "b"], "position": pa.array([-1, 0, -1, None], pa.int32()),
        "modality": ["metadata", "text", "metadata", "text"],
        "text_content": [None, "x", None, "y"]}), path)
    [task] = LancePartitioningStage(path=path).process(None)
    stage = InterleavedLanceReaderStage(max_batch_rows=1)
    out = stage.process(task)
    assert [r.reason for r in stage.drain_rejected()] == ["segments_without_position"]
    assert out.to_pyarrow()["sample_id"].to_pylist() == ["a", "a"]
