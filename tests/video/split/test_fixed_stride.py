import pytest
from curator.testing import check_stage_contract
from curator_video import FixedStrideSplitStage
from curator_video.split.fixed_stride import fixed_stride_spans


def test_spans_with_stride_and_min_length():
    assert fixed_stride_spans(10, 4, 4, 1) == [(0, 4), (4, 8), (8, 10)]
    assert fixed_stride_spans(10, 4, 4, 2.5) == [(0, 4), (4, 8)]
    assert fixed_stride_spans(5, 2, 1, 2) == [(0, 2), (1, 3), (2, 4), (3, 5)]
    assert fixed_stride_spans(1, 4, 4, 2) == []


def test_stage_makes_clips_covering_the_video(load_video):
    task = FixedStrideSplitStage(clip_len_s=1.5, min_clip_length_s=0.5).process(
        load_video("moving.mp4"))
    spans = [c.span for c in task.data.clips]
    assert spans == [(0.0, 1.5), (1.5, 3.0)]
    assert len({c.uuid for c in task.data.clips}) == 2
    limited = FixedStrideSplitStage(1.0, limit_clips=1).process(load_video("moving.mp4"))
    assert len(limited.data.clips) == 1


@pytest.mark.parametrize("kwargs, param", [({"clip_len_s": 0}, "clip_len_s"),
                                           ({"clip_stride_s": -1}, "clip_stride_s"),
                                           ({"min_clip_length_s": 20}, "min_clip_length_s")])
def test_config_errors(kwargs, param):
    with pytest.raises(ValueError, match=f"FixedStrideSplitStage: {param}"):
        FixedStrideSplitStage(**kwargs)


def test_contract(load_video):
    check_stage_contract(FixedStrideSplitStage(1.0), load_video("static.mp4"))


def test_hands_on_a_copy_and_leaves_its_input_alone(load_video):
    # a reader's worker may still hold its input (a long video's windows): the frames later
    # stages attach to the clips must not reach it
    task = load_video("moving.mp4")
    out = FixedStrideSplitStage(clip_len_s=1.5).process(task)
    assert out is not task and out.data is not task.data
    assert task.data.clips == [] and len(out.data.clips) == 2
    assert (out.task_id, out.metadata, out.data.metadata) == \
        (task.task_id, task.metadata, task.data.metadata)
