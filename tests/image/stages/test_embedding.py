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


def test_openclip_checkpoint_and_preprocessing_off_the_model_thread(tmp_path):
    import threading

    from curator_image.testing import make_tiny_open_clip_checkpoint

    ckpt = make_tiny_open_clip_checkpoint(str(tmp_path / "open_clip_pytorch_model.bin"))
    stage = ImageEmbeddingStage(model_dir=str(tmp_path), model_inference_batch_size=2)
    embedder = stage.model()
    threads: dict[str, set[str]] = {"preprocess": set(), "forward": set()}
    pre, fwd = embedder.preprocess, embedder.embed_pixels

    def preprocess(images):
        threads["preprocess"].add(threading.current_thread().name)
        return pre(images)

    def embed_pixels(pixels):
        threads["forward"].add(threading.current_thread().name)
        return fwd(pixels)

    embedder.preprocess, embedder.embed_pixels = preprocess, embed_pixels
    out = stage.process(_batch(0, 1, 2, 3, 4))
    assert all(t.startswith("clip-preprocess") for t in threads["preprocess"])
    assert threads["forward"] == {threading.current_thread().name}
    one = ImageEmbeddingStage(model_dir=ckpt, model_inference_batch_size=1).process(_batch(0, 1, 2, 3, 4))
    np.testing.assert_allclose(np.stack([i.embedding for i in out.data]),
                               np.stack([i.embedding for i in one.data]), atol=1e-5)
    assert out.data[0].embedding.shape == (16,)


def test_resources_with_gpus_ask_for_cuda(clip_dir):
    from curator import Resources

    stage = ImageEmbeddingStage(model_dir=clip_dir).with_(resources=Resources(cpus=1, gpus=1))
    assert stage.device == "auto"   # CUDA when present (resolve_device), else CPU
