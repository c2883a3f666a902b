"""The CUDA path of the image models and stages (skipped without a CUDA GPU): with GPU resources
the CLIP embedder loads on the GPU in float16, memory is allocated there, and embeddings and
scores agree with the CPU's."""

from __future__ import annotations

import numpy as np
import pytest
from curator import Pipeline
from curator_image import (
    ImageAestheticFilterStage,
    ImageBatch,
    ImageEmbeddingStage,
    ImageNSFWFilterStage,
    ImageObject,
    ImageReaderStage,
)
from curator_image.testing import make_image

torch = pytest.importorskip("torch")

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def _batch(*seeds) -> ImageBatch:
    return ImageBatch(task_id="t", dataset_name="d",
                      data=[ImageObject(image_id=str(s), image_data=make_image(s)) for s in seeds])


def test_clip_embedding_stage_on_cuda_matches_cpu(clip_dir) -> None:
    seeds = list(range(10))
    cpu = ImageEmbeddingStage(model_dir=clip_dir, model_inference_batch_size=4).process(
        _batch(*seeds))
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    stage = ImageEmbeddingStage(model_dir=clip_dir, model_inference_batch_size=4,
                                num_gpus_per_worker=1.0)
    stage.setup()
    embedder = stage.model()
    assert embedder.device == "cuda"
    params = list(embedder._model.parameters())
    assert {p.device.type for p in params} == {"cuda"} and params[0].dtype == torch.float16
    gpu = stage.process(_batch(*seeds))
    assert torch.cuda.max_memory_allocated() > 0
    g = np.stack([i.embedding for i in gpu.data])
    c = np.stack([i.embedding for i in cpu.data])
    assert g.dtype == np.float32 and g.shape == c.shape
    np.testing.assert_allclose(np.linalg.norm(g, axis=1), 1.0, rtol=1e-4)
    np.testing.assert_allclose(g, c, atol=1e-2)


def test_openclip_checkpoint_on_cuda_matches_cpu(tmp_path) -> None:
    from curator_image.testing import make_tiny_open_clip_checkpoint

    ckpt = make_tiny_open_clip_checkpoint(str(tmp_path / "open_clip_pytorch_model.bin"))
    cpu = ImageEmbeddingStage(model_dir=ckpt).process(_batch(0, 1, 2))
    gpu_stage = ImageEmbeddingStage(model_dir=ckpt, num_gpus_per_worker=1.0)
    gpu = gpu_stage.process(_batch(0, 1, 2))
    assert gpu_stage.model().device == "cuda"
    np.testing.assert_allclose(np.stack([i.embedding for i in gpu.data]),
                               np.stack([i.embedding for i in cpu.data]), atol=1e-2)


def test_score_filters_on_cuda_match_cpu(clip_dir, aesthetic_dir, nsfw_dir) -> None:
    emb = ImageEmbeddingStage(model_dir=clip_dir).process(_batch(*range(8)))
    for cls, model_dir in ((ImageAestheticFilterStage, aesthetic_dir),
                           (ImageNSFWFilterStage, nsfw_dir)):
        kw = {"model_dir": model_dir, "score_threshold": -1e9 if cls is
              ImageAestheticFilterStage else 2.0}
        gpu_stage = cls(**kw, num_gpus_per_worker=1.0)
        gpu_stage.setup()
        scorer = gpu_stage.model()
        assert scorer.device == "cuda"
        assert next(scorer._model.parameters()).is_cuda
        c = [i.aesthetic_score if cls is ImageAestheticFilterStage else i.nsfw_score
             for i in cls(**kw).process(emb).data]
        g = [i.aesthetic_score if cls is ImageAestheticFilterStage else i.nsfw_score
             for i in gpu_stage.process(emb).data]
        np.testing.assert_allclose(g, c, rtol=1e-3, atol=1e-4, err_msg=cls.__name__)


def test_gpu_pipeline_reader_to_embedding(shards, clip_dir) -> None:
    result = Pipeline("e", stages=[
        ImageReaderStage(shards),
        ImageEmbeddingStage(model_dir=clip_dir, num_gpus_per_worker=1.0)]).run()
    embs = [i.embedding for t in result for i in t.data]
    assert len(embs) == 12 and all(e.shape == (16,) and np.isfinite(e).all() for e in embs)
