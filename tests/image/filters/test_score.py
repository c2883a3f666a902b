import numpy as np
from curator import Pipeline
from curator.testing import check_stage_contract
from curator_image import (
    AestheticScorer,
    ImageAestheticFilterStage,
    ImageBatch,
    ImageEmbeddingStage,
    ImageNSFWFilterStage,
    ImageObject,
    ImageReaderStage,
    NSFWScorer,
)


def _batch(n=8):
    rng = np.random.default_rng(0)
    embs = rng.normal(size=(n, 16)).astype(np.float32)
    embs /= np.linalg.norm(embs, axis=1, keepdims=True)
    return ImageBatch(task_id="t", dataset_name="d", data=[
        ImageObject(image_id=str(i), embedding=e) for i, e in enumerate(embs)]), embs


def test_aesthetic_keeps_scores_at_or_above_threshold_and_splits_the_rest(aesthetic_dir):
    task, embs = _batch()
    scores = AestheticScorer(aesthetic_dir).score(embs)
    threshold = float(np.median(scores))
    stage = ImageAestheticFilterStage(model_dir=aesthetic_dir, score_threshold=threshold,
                                      model_inference_batch_size=3, split=True)
    out = stage.process(task)
    assert {i.image_id for i in out.data} == {str(i) for i in np.flatnonzero(scores >= threshold)}
    np.testing.assert_allclose([i.aesthetic_score for i in out.data],
                               scores[scores >= threshold], rtol=1e-5)
    rejected = stage.drain_rejected()
    assert len(rejected) == (scores < threshold).sum()
    assert all(r.kind == "filtered" and r.reason == "filtered by ImageAestheticFilterStage"
               and r.record["filter"] == "ImageAestheticFilterStage" and
               r.record["score"] < threshold for r in rejected)


def test_nsfw_drops_above_threshold(nsfw_dir):
    task, embs = _batch()
    scores = NSFWScorer(nsfw_dir).score(embs)
    threshold = float(np.median(scores))
    stage = ImageNSFWFilterStage(model_dir=nsfw_dir, score_threshold=threshold)  # split=False
    out = stage.process(task)
    assert {i.image_id for i in out.data} == {str(i) for i in np.flatnonzero(scores <= threshold)}
    assert all(i.nsfw_score <= threshold for i in out.data)
    assert stage.drain_rejected() == []


def test_missing_embedding_is_rejected(aesthetic_dir):
    stage = ImageAestheticFilterStage(model_dir=aesthetic_dir, score_threshold=-1e9)
    task = ImageBatch(task_id="t", dataset_name="d", data=[ImageObject(image_id="x")])
    assert stage.process(task).data == []
    assert [r.reason for r in stage.drain_rejected()] == ["no_embedding"]


def test_contract(aesthetic_dir, nsfw_dir):
    task, _ = _batch(2)
    check_stage_contract(ImageAestheticFilterStage(model_dir=aesthetic_dir), task)
    check_stage_contract(ImageNSFWFilterStage(model_dir=nsfw_dir), _batch(2)[0])


def test_pipeline_counts_filtered_images(shards, clip_dir, aesthetic_dir):
    result = Pipeline("f", stages=[
        ImageReaderStage(shards), ImageEmbeddingStage(model_dir=clip_dir),
        ImageAestheticFilterStage(model_dir=aesthetic_dir, score_threshold=1e9, split=True)]).run()
    assert sum(len(t.data) for t in result) == 0
    assert result.rejected.counts == {"ImageAestheticFilterStage": 12}
    stats = next(s for s in result.stats.stages if s.name == "ImageAestheticFilterStage")
    assert (stats.items_in, stats.items_out) == (12, 0)


def test_one_model_root_serves_every_stage_as_in_nemo(shards, tmp_path):
    """NeMo Curator passes one ``model_dir`` root to every image stage, each model under its hub
    id; the migration guide's dedup reads ``image_embedding`` and ``image_id``."""
    from curator.dedup import SemanticDeduplicationStage
    from curator_image.testing import make_tiny_model_dir

    root = make_tiny_model_dir(str(tmp_path / "models"))
    result = Pipeline("root", stages=[
        ImageReaderStage(shards), ImageEmbeddingStage(model_dir=root),
        ImageAestheticFilterStage(model_dir=root, score_threshold=-1e9),
        ImageNSFWFilterStage(model_dir=root, score_threshold=1.0),
        SemanticDeduplicationStage(id_field="image_id", embedding_field="image_embedding",
                                   n_clusters=100, eps=0.01)]).run()
    images = [i for t in result for i in t.data]
    assert result.ok and len(images) == 10  # 12 read, the 2 planted duplicates removed
    assert all(i.aesthetic_score is not None and 0 <= i.nsfw_score <= 1 for i in images)
    assert all(i.image_embedding is i.embedding for i in images)
