import numpy as np
from curator_video import FixedStrideSplitStage, MotionFilterStage
from curator_video.filters.motion import per_patch_min_256
from curator_video.synthetic import moving_frames


def _half_static(n: int = 6) -> np.ndarray:
    """512 px wide: the left 256 px move, the right 256 px never change."""
    frames = np.full((n, 256, 512, 3), 30, np.uint8)
    frames[:, :, :256] = moving_frames(n, width=256, height=256, speed=8)
    return frames


def test_per_patch_min_is_the_least_moving_patch():
    from curator_video.filters.motion import _frame_difference_map
    grid = _frame_difference_map(_half_static())
    assert grid.mean() > 0.001
    assert per_patch_min_256(grid) == 0.0
    assert per_patch_min_256(_frame_difference_map(moving_frames(6))) > 0  # one patch


def test_nemo_parameters_filter_a_clip_with_a_frozen_patch(load_video):
    task = FixedStrideSplitStage(1.0, min_clip_length_s=0.5).process(load_video("moving.mp4"))
    for clip in task.data.clips:
        clip.frames = _half_static()
    stage = MotionFilterStage(score_only=False, global_mean_threshold=0.001,
                              per_patch_min_256_threshold=0.000001, motion_filter_batch_size=64,
                              num_gpus_per_worker=0.5, verbose=True)
    n = len(task.data.clips)
    out = stage.process(task)
    assert out.data.clips == [] and len(out.data.filtered_clips) == n
    assert out.data.filtered_clips[0].scores["motion_per_patch_min_256"] == 0.0
    task = FixedStrideSplitStage(1.0, min_clip_length_s=0.5).process(load_video("moving.mp4"))
    for clip in task.data.clips:
        clip.frames = _half_static()
    kept = MotionFilterStage(global_mean_threshold=0.001, per_patch_min_256_threshold=0).process(task)
    assert len(kept.data.clips) == n
