"""Image dedup across documents: exact by content hash, near by CLIP embedding through core's
SemanticDeduplicationWorkflow (tiny random CLIP in the published layout), removed in a second
pass with renumbered positions; a document left without content is dropped."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator import FileGroupTask, Pipeline
from curator_interleaved import (
    InterleavedObelicsReader,
    InterleavedParquetWriterStage,
    InterleavedWebdatasetReaderStage,
)
from curator_interleaved.dedup import (
    InterleavedImageDuplicateRemovalStage,
    InterleavedImageEmbeddingStage,
    find_image_duplicates,
    read_image_duplicates,
)
from curator_interleaved.testing import (
    encode_image,
    make_image,
    make_mint_shards,
    make_tiny_clip_dir,
)

_TINTS = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (0, 1, 1)]


def _base(k: int) -> np.ndarray:
    """Five images far apart for the tiny CLIP (cosine <= 0.92 between them)."""
    return (make_image(64, 48, seed=k).astype(float) * np.array(_TINTS[k])).astype(np.uint8)


def _png(k):
    return encode_image(_base(k), "PNG")


def _jpg(k):  # the same picture re-encoded: a near duplicate (cosine >= 0.999 to the PNG)
    return encode_image(_base(k), "JPEG", quality=95)


# (file, documents): each a list of ("text", str) / ("image", (base, "png" | "jpg"))
_DOCS = {
    "a": [[("text", "one"), ("image", (0, "png")), ("text", "two"), ("image", (1, "png"))],
          [("text", "three"), ("image", (0, "png")), ("image", (2, "png"))]],
    "b": [[("image", (1, "jpg"))],  # only a near duplicate: the document goes
          [("text", "four"), ("image", (3, "png")), ("image", (2, "jpg")),
           ("image", (0, "png"))],
          [("text", "five"), ("image", (4, "jpg"))],
          [("text", "six"), ("image", (4, "png"))]],
}


def _write_obelics(root):
    root.mkdir()
    for name, docs in _DOCS.items():
        rows = []
        for doc in docs:
            texts = [v if k == "text" else None for k, v in doc]
            images = [None if k == "text" else (_png(v[0]) if v[1] == "png" else _jpg(v[0]))
                      for k, v in doc]
            rows.append({"texts": texts, "images": images, "metadata": "[]",
                         "general_metadata": json.dumps({"doc": name})})
        pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema([
            ("texts", pa.list_(pa.string())), ("images", pa.list_(pa.binary())),
            ("metadata", pa.string()), ("general_metadata", pa.string())])),
            root / f"{name}.parquet")


def _expected(embedding_files):
    """The reference rule, in the order of the embedding files: bytes seen before -> exact;
    the same picture seen before in the other encoding -> near; else kept."""
    lookup = {(f"{name}-{d}", p): v for name, docs in _DOCS.items()
              for d, doc in enumerate(docs) for p, (k, v) in enumerate(doc) if k == "image"}
    seen_bytes, seen_base, out = set(), set(), {}
    for f in embedding_files:
        for r in pq.read_table(f, columns=["sample_id", "position"]).to_pylist():
            key = (r["sample_id"], r["position"])
            base, form = lookup[key]
            if (base, form) in seen_bytes:
                out[key] = "exact"
            elif base in seen_base:
                out[key] = "near"
            seen_bytes.add((base, form))
            seen_base.add(base)
    return out


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    return make_tiny_clip_dir(str(tmp_path_factory.mktemp("clip") / "clip"))


def test_exact_and_near_duplicates_through_the_semantic_workflow(tmp_path, clip_dir):
    _write_obelics(tmp_path / "in")
    emb_dir, dedup_dir, out = tmp_path / "emb", tmp_path / "dedup", tmp_path / "out"
    first = Pipeline("embed", stages=[
        InterleavedObelicsReader(file_paths=str(tmp_path / "in")),
        InterleavedImageEmbeddingStage(path=str(emb_dir), model_dir=clip_dir)]).run(
        summary=False)
    assert first.ok
    files = sorted(str(p) for p in emb_dir.glob("*.parquet"))
    assert len(files) == 2
    table = pa.concat_tables([pq.read_table(f) for f in files])
    assert table.num_rows == 10 and table.schema.field("embeddings").type == \
        pa.list_(pa.float32())
    dups = find_image_duplicates(embeddings_path=str(emb_dir), eps=0.01, n_clusters=3,
                                 output_path=str(dedup_dir))
    expected = _expected(files)
    assert {(d["sample_id"], d["position"]): d["kind"] for d in dups} == expected
    assert sorted(expected.values()) == ["exact", "exact", "near", "near", "near"]
    # the semantic workflow's own files are there, and the list core's removal reads
    assert list((dedup_dir / "semantic" / "duplicates").glob("semantic_c*.parquet"))
    assert read_image_duplicates(str(dedup_dir)) == dups
    # second pass: the duplicates removed, positions renumbered, an emptied document dropped
    result = Pipeline("remove", stages=[
        InterleavedObelicsReader(file_paths=str(tmp_path / "in")),
        InterleavedImageDuplicateRemovalStage(duplicates_path=str(dedup_dir), split=True),
        InterleavedParquetWriterStage(path=str(out))]).run(summary=False)
    assert result.ok
    rows = [r for f in sorted(out.glob("*.parquet")) for r in pq.read_table(f).to_pylist()]
    pictures = {}
    for r in rows:
        if r["modality"] == "image":
            base = next(k for k in range(5) if r["binary_content"] in (_png(k), _jpg(k)))
            pictures[base] = pictures.get(base, 0) + 1
    assert pictures == {0: 1, 1: 1, 2: 1, 3: 1, 4: 1}  # every picture exactly once
    by_doc = {}
    for r in rows:
        if r["position"] >= 0:
            by_doc.setdefault(r["sample_id"], []).append(r["position"])
    assert all(p == list(range(len(p))) for p in by_doc.values())
    if ("b-0", 0) in expected:  # its only image removed: the document is gone
        assert "b-0" not in {r["sample_id"] for r in rows}
    removed = {(r.record["sample_id"], r.record["score"]) for r in result.rejected.records}
    assert removed == {(sid, kind) for (sid, _), kind in expected.items()} | (
        {("b-0", "no content left")} if ("b-0", 0) in expected else set())


def test_exact_duplicates_without_a_model(tmp_path):
    # the generator reuses 7 distinct pixel patterns per size: many exact repeats across docs
    make_mint_shards(str(tmp_path / "in"), n_shards=1, docs_per_shard=8, seed=5)
    task = FileGroupTask(task_id="t", dataset_name="d",
                         data=[str(p) for p in sorted((tmp_path / "in").glob("*.tar"))])
    batch = InterleavedWebdatasetReaderStage(materialize_on_read=True).process(task)
    images = [(r["sample_id"], r["position"], r["binary_content"])
              for r in batch.to_pyarrow().to_pylist() if r["modality"] == "image"]
    dups = find_image_duplicates([batch])
    seen, expected = set(), []
    for sid, pos, data in images:
        if data in seen:
            expected.append((sid, pos))
        seen.add(data)
    assert sorted((d["sample_id"], d["position"]) for d in dups) == sorted(expected)
    assert expected and all(d["kind"] == "exact" for d in dups)
    stage = InterleavedImageDuplicateRemovalStage(duplicates=dups, split=True)
    out = stage.process(batch).to_pyarrow().to_pylist()
    kept = [r["binary_content"] for r in out if r["modality"] == "image"]
    assert len(kept) == len(set(kept)) == len(seen)
    assert len(stage.drain_rejected()) >= len(expected)


def test_unfetchable_images_are_left_to_the_stage_that_needs_them(tmp_path):
    table = pa.table({
        "sample_id": ["s", "s", "s"], "position": pa.array([-1, 0, 1], pa.int32()),
        "modality": ["metadata", "image", "image"],
        "binary_content": pa.array([None, b"not an image", None], pa.large_binary()),
        "source_ref": [None, None, json.dumps({"path": str(tmp_path / "gone.png")})]})
    from curator_interleaved import InterleavedBatch

    stage = InterleavedImageEmbeddingStage(path=str(tmp_path / "e"), model_dir=None)
    [path] = stage.process(InterleavedBatch(task_id="t", dataset_name="d", data=table)).data
    # hashes only: the undecodable bytes are hashed, the missing file has no row, none rejected
    assert pq.read_table(path)["image_id"].to_pylist() == ['["s", 0]']
    assert stage.drain_rejected() == []
    with pytest.raises(ValueError, match="either batches or embeddings_path"):
        find_image_duplicates()
