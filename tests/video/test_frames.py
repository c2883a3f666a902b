import numpy as np
import pytest
from curator.testing import check_stage_contract
from curator_video import ClipFrameExtractionStage, FixedStrideSplitStage
from curator_video.frames import clip_frame_indices
from curator_video.synthetic import scene_frames
from curator_video.tasks import Clip, Video, VideoMetadata, VideoTask


def split(task, length=1.0):
    return FixedStrideSplitStage(length, min_clip_length_s=0.5).process(task)


def test_indices_by_target_fps_and_by_count():
    clip = Clip.from_span("v", 1.0, 2.0)
    assert clip_frame_indices(clip, 10, 30, target_fps=5, num_frames=None) == [10, 12, 14, 16, 18]
    assert clip_frame_indices(clip, 10, 30, target_fps=None, num_frames=3) == [10, 14, 19]
    assert clip_frame_indices(Clip.from_span("v", 2.9, 3.0), 10, 30, 1, None) == [29]


def test_frames_come_from_the_right_time_and_are_resized(load_video):
    task = split(load_video("scenes.mp4"), 2.0)
    task = ClipFrameExtractionStage(target_fps=2, target_res=(32, 24)).process(task)
    colours = scene_frames([14, 9, 17])
    for clip in task.data.clips:
        assert clip.frames.shape == (len(clip.frame_indices), 24, 32, 3)
        assert clip.frames.dtype == np.uint8
        for frame, idx in zip(clip.frames, clip.frame_indices, strict=True):
            # the corner pixel keeps the scene's solid colour (lossy codec: small error)
            assert np.abs(frame[0, 0].astype(int) - colours[idx][0, 0]).max() < 30
    assert task.data.clips[0].frame_indices == [0, 5, 10, 15]


def test_batched_reads_equal_single_reads(load_video):
    a = ClipFrameExtractionStage(num_frames=6, batch_frames=1).process(split(load_video("moving.mp4")))
    b = ClipFrameExtractionStage(num_frames=6, batch_frames=64).process(split(load_video("moving.mp4")))
    for ca, cb in zip(a.data.clips, b.data.clips, strict=True):
        assert ca.frames.shape[0] == 6
        np.testing.assert_array_equal(ca.frames, cb.frames)


def test_undecodable_video_is_rejected(video_dir):
    path = f"{video_dir}/corrupt.mp4"
    task = VideoTask("t", "d", Video(path, VideoMetadata(duration=1, fps=10),
                                     clips=[Clip.from_span(path, 0, 1)]))
    stage = ClipFrameExtractionStage()
    assert stage.process(task) is None
    assert [r.reason for r in stage.drain_rejected()] == ["undecodable video"]


@pytest.mark.parametrize("kwargs", [{"target_fps": 0}, {"num_frames": 0},
                                    {"target_res": (0, 5)}])
def test_config_errors(kwargs):
    with pytest.raises(ValueError, match="ClipFrameExtractionStage"):
        ClipFrameExtractionStage(**kwargs)


def test_contract(load_video):
    check_stage_contract(ClipFrameExtractionStage(), split(load_video("static.mp4")))
