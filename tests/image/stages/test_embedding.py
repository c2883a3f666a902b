import cloudpickle
import numpy as np
import pytest
from curator import Pipeline
from curator.errors import ConfigError
from curator.testing import check_stage_contract
from curator_image import ImageBatch, ImageEmbeddingStage, ImageObject, ImageReaderStage
from curator_image.testing import make_image


def _batch(*seeds):
    return ImageBatch(task_id="t", dataset_name="d",
                      data=[ImageObject(image_id=str(s), image_data=make_image(s)) for s in seeds])


def test_embeds_in_batches_and_identical_images_match(clip_dir):
    stage = ImageEmbeddingStage(model_dir=clip_dir, model_inference_batch_size=2)
    out = stage.process(_batch(0, 1, 2, 0, 3))
    embs = np.stack([i.embedding for i in out.data])
    assert embs.shape == (5, 16)
    np.testing.assert_allclose(np.linalg.norm(embs, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(embs[0], embs[3], atol=1e-6)
    assert out.data[0].image_data is not None


def test_remove_image_data_and_missing_pixels_rejected(clip_dir):
    stage = ImageEmbeddingStage(model_dir=clip_dir, remove_image_data=True)
    task = _batch(0, 1)
    task.data.append(ImageObject(image_id="empty"))
    out = stage.process(task)
    assert [i.image_id for i in out.data] == ["0", "1"]
    assert all(i.image_data is None and i.embedding is not None for i in out.data)
    assert [r.reason for r in stage.drain_rejected()] == ["no_image_data"]


def test_gpu_resources_select_device_and_stage_pickles(clip_dir):
    stage = ImageEmbeddingStage(model_dir=clip_dir, num_gpus_per_worker=0.25)
    assert stage.resources.gpus == 0.25 and stage.device == "auto"
    assert ImageEmbeddingStage(model_dir=clip_dir).device == "cpu"
    stage.setup()
    assert stage.model().device in ("cpu", "cuda")
    clone = cloudpickle.loads(cloudpickle.dumps(stage))
    assert getattr(clone, "_model", None) is None


def test_contract(clip_dir):
    check_stage_contract(ImageEmbeddingStage(model_dir=clip_dir), _batch(0))


def test_in_a_pipeline(shards, clip_dir):
    result = Pipeline("e", stages=[ImageReaderStage(shards),
                                   ImageEmbeddingStage(model_dir=clip_dir)]).run()
    assert sum(len(t.data) for t in result) == 12
    assert all(i.embedding.shape == (16,) for t in result for i in t.data)


@pytest.mark.parametrize("kw", [{"model_dir": ""}, {"model_dir": "x",
                                                     "model_inference_batch_size": 0}])
def test_config_errors(kw):
    with pytest.raises(ConfigError):
        ImageEmbeddingStage(**kw)
