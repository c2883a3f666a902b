import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator import Pipeline
from curator.errors import ConfigError
from curator_image import (
    ImageBatch,
    ImageDuplicateRemovalStage,
    ImageEmbeddingStage,
    ImageObject,
    ImageReaderStage,
    ImageSemanticDeduplicationWorkflow,
    find_image_duplicates,
)
from curator_image.dedup.duplicates import find_exact_duplicates, write_duplicates


def test_exact_duplicates_keep_the_smallest_id():
    mask = find_exact_duplicates(["c", "a", "b", "d"], ["h1", "h1", "h2", ""])
    assert mask.tolist() == [True, False, False, False]


def test_semantic_duplicates_from_parquet(tmp_path):
    rng = np.random.default_rng(0)
    base = rng.normal(size=(6, 8)).astype(np.float32)
    near = base[:2] + 1e-4  # planted near-duplicates of rows 0 and 1
    embs = np.concatenate([base, near])
    embs /= np.linalg.norm(embs, axis=1, keepdims=True)
    ids = [f"id{i}" for i in range(8)]
    pq.write_table(pa.table({"image_id": ids, "content_hash": [str(i) for i in range(8)],
                             "embedding": [list(map(float, e)) for e in embs]}),
                   tmp_path / "e.parquet")
    report = find_image_duplicates(str(tmp_path), eps=0.01, n_clusters=2)
    assert sorted(report.ids) == ["id6", "id7"] and set(report.reasons) == {"semantic"}
    assert report.n_images == 8


def test_removal_stage(tmp_path):
    from curator_image.dedup.duplicates import DuplicateReport

    path = write_duplicates(DuplicateReport(["b"], ["exact"], 3), str(tmp_path / "d.parquet"))
    stage = ImageDuplicateRemovalStage(duplicates_path=path)
    stage.setup()  # process() relies on setup() (executors and invoke_stage guarantee it)
    task = ImageBatch(task_id="t", dataset_name="d",
                      data=[ImageObject(image_id=i) for i in "abc"])
    assert [i.image_id for i in stage.process(task).data] == ["a", "c"]
    (rej,) = stage.drain_rejected()
    assert rej.reason == "exact_duplicate" and rej.kind == "filtered"


def test_workflow_removes_planted_duplicates(shards, clip_dir, tmp_path):
    # each shard's last sample repeats its first sample's bytes: 2 exact duplicates
    wf = ImageSemanticDeduplicationWorkflow(
        stages=[ImageReaderStage(shards, task_batch_size=4),
                ImageEmbeddingStage(model_dir=clip_dir)],
        output_dir=str(tmp_path / "out"), work_dir=str(tmp_path / "work"), eps=1e-4,
        n_clusters=2)
    result = wf.run()
    assert result.removed == {"000000005": "exact", "000010005": "exact"}
    assert result.n_images == 12
    kept = [i for t in Pipeline("r", stages=[ImageReaderStage(str(tmp_path / "out"))]).run()
            for i in t.data]
    assert len(kept) == 10 and {"000000000", "000010000"} <= {i.image_id for i in kept}
    assert all(i.embedding is not None for i in kept)
    assert result.rejected_counts.get("ImageDuplicateRemovalStage") == 2


def test_workflow_semantic_only_removes_identical_pixels(shards, clip_dir, tmp_path):
    wf = ImageSemanticDeduplicationWorkflow(
        stages=[ImageReaderStage(shards), ImageEmbeddingStage(model_dir=clip_dir)],
        output_dir=str(tmp_path / "out"), work_dir=str(tmp_path / "work"), eps=1e-5,
        n_clusters=1, exact=False)
    assert wf.run().removed == {"000000005": "semantic", "000010005": "semantic"}


def test_workflow_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="eps"):
        ImageSemanticDeduplicationWorkflow(stages=[ImageReaderStage("in")], output_dir="o",
                                           work_dir="w", eps=5)
    with pytest.raises(ConfigError, match="parameter 'stages' expects list"):  # not a stage
        ImageSemanticDeduplicationWorkflow(stages=[object()], output_dir="o", work_dir="w")
    with pytest.raises(ConfigError, match="stages"):
        ImageSemanticDeduplicationWorkflow(output_dir="o", work_dir="w")
