import numpy as np
import pytest
from curator import Pipeline
from curator.testing import check_stage_contract
from curator_video import (
    ClipFrameExtractionStage,
    FixedStrideSplitStage,
    MotionFilterStage,
    VideoReaderStage,
)
from curator_video.filters.motion import frame_difference_score, optical_flow_score
from curator_video.synthetic import moving_frames, static_frames


def test_scores_separate_moving_from_static_frames():
    for score in (frame_difference_score, optical_flow_score):
        assert score(static_frames(8)) == 0.0
        assert score(moving_frames(8)) > 0.01


def test_optical_flow_is_roughly_the_shape_speed():
    slow, fast = optical_flow_score(moving_frames(8, speed=1)), optical_flow_score(moving_frames(8, speed=2))
    assert fast > slow > 0


@pytest.mark.parametrize("method, threshold", [("frame_diff", 0.005), ("optical_flow", 0.02)])
def test_pipeline_keeps_moving_clips_and_drops_static_ones(video_dir, method, threshold):
    stages = [VideoReaderStage([f"{video_dir}/moving.mp4", f"{video_dir}/static.mp4"]),
              FixedStrideSplitStage(1.0, min_clip_length_s=0.5),
              ClipFrameExtractionStage(target_fps=5),
              MotionFilterStage(method=method, global_mean_threshold=threshold)]
    result = Pipeline("motion", stages=stages).run()
    by_name = {t.data.input_path.rsplit("/", 1)[-1]: t.data for t in result}
    assert len(by_name["moving.mp4"].clips) == 3
    assert by_name["static.mp4"].clips == []
    assert [c.filtered_by for c in by_name["static.mp4"].filtered_clips] == ["MotionFilterStage"] * 3
    assert all(c.scores["motion"] >= threshold for c in by_name["moving.mp4"].clips)


def test_score_only_keeps_everything(load_video):
    task = FixedStrideSplitStage(1.0, min_clip_length_s=0.5).process(load_video("static.mp4"))
    task = ClipFrameExtractionStage(target_fps=5).process(task)
    task = MotionFilterStage(score_only=True).process(task)
    assert len(task.data.clips) == 3 and all("motion" in c.scores for c in task.data.clips)


def test_missing_frames_is_a_clear_error(load_video):
    task = FixedStrideSplitStage(1.0, min_clip_length_s=0.5).process(load_video("static.mp4"))
    with pytest.raises(ValueError, match="run ClipFrameExtractionStage"):
        MotionFilterStage().process(task)


def test_config_errors():
    with pytest.raises(ValueError, match="MotionFilterStage: method"):
        MotionFilterStage(method="magic")


def test_contract(load_video):
    task = ClipFrameExtractionStage(num_frames=3).process(
        FixedStrideSplitStage(1.0).process(load_video("moving.mp4")))
    (out,) = check_stage_contract(MotionFilterStage(), task)
    assert np.all([c.scores["motion"] > 0 for c in out.data.clips])


def test_numbers_from_yaml_strings_are_coerced_and_bad_ones_named():
    assert MotionFilterStage(global_mean_threshold="1e-3").global_mean_threshold == 0.001
    with pytest.raises(ValueError, match="MotionFilterStage: parameter 'global_mean_threshold' "
                                         "expects float, got 'high'"):
        MotionFilterStage(global_mean_threshold="high")


def test_pipeline_without_frame_extraction_fails_at_build(video_dir):
    stages = [VideoReaderStage(video_dir), FixedStrideSplitStage(1.0), MotionFilterStage()]
    with pytest.raises(Exception, match="frames"):
        Pipeline("bad", stages=stages).build()
