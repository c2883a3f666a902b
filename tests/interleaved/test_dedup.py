"""Image dedup across documents: exact by content hash, near by CLIP embedding (core's
semantic dedup), removed in a second pass with renumbered positions."""

from curator import FileGroupTask
from curator_interleaved import InterleavedWebdatasetReaderStage
from curator_interleaved.dedup import InterleavedImageDuplicateRemovalStage, find_image_duplicates
from curator_interleaved.testing import make_mint_shards, make_tiny_clip_dir


def test_exact_and_near_duplicates_across_documents(tmp_path):
    # the generator reuses 7 distinct pixel patterns per size: many exact repeats across docs
    make_mint_shards(str(tmp_path / "in"), n_shards=1, docs_per_shard=8, seed=5)
    task = FileGroupTask(task_id="t", dataset_name="d",
                         data=[str(p) for p in sorted((tmp_path / "in").glob("*.tar"))])
    batch = InterleavedWebdatasetReaderStage(materialize_on_read=True).process(task)
    rows = batch.to_pyarrow().to_pylist()
    images = [(r["sample_id"], r["position"], r["binary_content"]) for r in rows
              if r["modality"] == "image"]
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
    # near duplicates: with eps near 2 every remaining image is one group with the first
    near = find_image_duplicates([batch], model_dir=make_tiny_clip_dir(str(tmp_path / "clip")),
                                 eps=1.99, n_clusters=1)
    assert len([d for d in near if d["kind"] == "near"]) == len(seen) - 1
