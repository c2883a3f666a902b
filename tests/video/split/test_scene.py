import numpy as np
import pytest
from curator import Task
from curator.stages.lifecycle import ensure_setup
from curator.testing import check_stage_contract
from curator_video import HistogramSceneDetector, SceneCutSplitStage, SceneDetector
from curator_video.synthetic import moving_frames, scene_frames
from curator_video.tasks import Video, VideoMetadata, VideoTask

from ..conftest import CUTS, FPS, SCENES


def test_histogram_detector_finds_exact_cuts_on_raw_frames():
    assert HistogramSceneDetector().detect(scene_frames([5, 8, 3, 6]), 10) == [5, 13, 16]
    assert HistogramSceneDetector().detect(moving_frames(20), 10) == []


def test_known_scene_cuts_found_within_one_frame(load_video):
    task = ensure_setup(SceneCutSplitStage(min_clip_length_s=0.0)).process(load_video("scenes.mp4"))
    starts = [round(c.span[0] * FPS) for c in task.data.clips]
    ends = [round(c.span[1] * FPS) for c in task.data.clips]
    assert len(starts) == len(SCENES)
    assert starts[0] == 0 and ends[-1] == sum(SCENES)
    for found, cut in zip(starts[1:], CUTS, strict=True):
        assert abs(found - cut) <= 1


def test_min_and_max_clip_length(load_video):
    # scenes last 1.4 s, 0.9 s, 1.7 s: the 0.9 s one is dropped, the others split in 2
    task = ensure_setup(SceneCutSplitStage(min_clip_length_s=0.95, max_clip_length_s=1.0)).process(
        load_video("scenes.mp4"))
    durations = [round(c.duration, 2) for c in task.data.clips]
    assert durations == [0.7, 0.7, 0.85, 0.85]
    task = ensure_setup(SceneCutSplitStage(min_clip_length_s=0.5, max_clip_length_s=1.0)).process(
        load_video("scenes.mp4"))
    assert [round(c.duration, 2) for c in task.data.clips] == [0.7, 0.7, 0.9, 0.85, 0.85]


def test_moving_video_without_cuts_is_one_clip(load_video):
    task = ensure_setup(SceneCutSplitStage()).process(load_video("moving.mp4"))
    assert [c.span for c in task.data.clips] == [(0.0, 3.0)]


class EveryTenFrames(SceneDetector):
    def __init__(self):
        self.ready = False

    def setup(self):
        self.ready = True

    def detect(self, frames, fps):
        assert self.ready and frames.shape[1:] == (24, 32, 3)
        return list(range(10, len(frames), 10))


def test_pluggable_detector(load_video):
    stage = SceneCutSplitStage(detector=EveryTenFrames(), decode_size=(32, 24))
    stage.setup()
    task = stage.process(load_video("moving.mp4"))
    assert [c.span for c in task.data.clips] == [(0, 1), (1, 2), (2, 3)]


def test_undecodable_video_is_rejected(video_dir):
    path = f"{video_dir}/corrupt.mp4"
    task = VideoTask("t", "d", Video(path, VideoMetadata(duration=1, fps=10, width=64)))
    stage = SceneCutSplitStage()
    assert stage.process(task) is None
    (rec,) = stage.drain_rejected()
    assert rec.source == path and rec.error


def test_config_errors():
    with pytest.raises(ValueError, match="detector"):
        SceneCutSplitStage(detector="nope")
    with pytest.raises(ValueError, match="threshold"):
        SceneCutSplitStage(threshold=1.5)
    with pytest.raises(TypeError, match="detector"):
        SceneCutSplitStage(detector=object())


def test_contract(load_video):
    out = check_stage_contract(SceneCutSplitStage(), load_video("scenes.mp4"))
    assert isinstance(out[0], Task) and np.isclose(out[0].data.clips[0].span[0], 0)


def test_hands_on_a_copy_and_leaves_its_input_alone(load_video):
    task = load_video("scenes.mp4")
    out = ensure_setup(SceneCutSplitStage(min_clip_length_s=0.0)).process(task)
    assert out is not task and out.data is not task.data
    assert task.data.clips == [] and len(out.data.clips) == len(SCENES)
    assert out.task_id == task.task_id
