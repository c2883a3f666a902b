"""A long video is read as windows (one task each) so the stages after the reader decode and
hold one window at a time: the windows give the same clips, frames and encoded bytes as the
whole video, and a video no longer than a window is read exactly as before."""

from __future__ import annotations

import os

import numpy as np
import pytest
from curator import FileGroupTask, LocalExecutor, Pipeline, ProcessingStage, stable_id
from curator.stages.lifecycle import ensure_setup
from curator_video import (
    ClipTranscodingStage,
    ClipWriterStage,
    FixedStrideSplitStage,
    SceneCutSplitStage,
    VideoMetadataStage,
    VideoReaderStage,
)
from curator_video.decode import read_all_frames_av, video_windows
from curator_video.split.scene import decode_all_frames
from curator_video.synthetic import scene_frames, write_video
from curator_video.tasks import VideoTask

FPS = 10
SCENE = 25  # frames per scene: 2.5 s, so 5 s windows start at cuts


@pytest.fixture(scope="module")
def long_video(tmp_path_factory) -> str:
    """12 s at 10 fps (key frame every second), a cut every 2.5 s, a moving square."""
    d = tmp_path_factory.mktemp("long")
    return write_video(str(d / "long.mp4"), scene_frames([SCENE] * 4 + [20], moving=True),
                       fps=FPS)


def _tasks(path: str, window_s: float | None) -> list:
    task = FileGroupTask(task_id=f"video_{stable_id(path)}", dataset_name="video", data=[path])
    return VideoMetadataStage(window_s=window_s).process(task)


def test_windows_depend_on_duration_alone() -> None:
    assert video_windows(12.0, 5.0) == [(0.0, 5.0), (5.0, 10.0), (10.0, 12.0)]
    assert video_windows(10.0, 5.0) == [(0.0, 5.0), (5.0, 10.0)]
    assert video_windows(5.0, 5.0) == [] and video_windows(100.0, None) == []


def test_long_video_becomes_one_task_per_window(long_video) -> None:
    whole = _tasks(long_video, None)
    assert _tasks(long_video, 60.0)[0].task_id == whole[0].task_id  # default: as before
    assert "window" not in _tasks(long_video, 60.0)[0].metadata
    parts = _tasks(long_video, 5.0)
    assert [t.metadata["window"] for t in parts] == [[0.0, 5.0], [5.0, 10.0], [10.0, 12.0]]
    assert [t.task_id for t in parts] == [f"{whole[0].task_id}_w{k:05d}" for k in range(3)]
    assert [t.task_id for t in _tasks(long_video, 5.0)] == [t.task_id for t in parts]


def test_fixed_stride_clips_and_encoded_bytes_same_as_whole(long_video) -> None:
    split = FixedStrideSplitStage(clip_len_s=2.0, clip_stride_s=1.5, min_clip_length_s=0.5)
    encode = ensure_setup(ClipTranscodingStage(target_res=(32, 24)))
    (whole,) = [encode.process(split.process(t)) for t in _tasks(long_video, None)]
    parts = [encode.process(split.process(t)) for t in _tasks(long_video, 5.0)]
    assert [len(p.data.clips) for p in parts] == [4, 3, 1]
    got = [(c.uuid, c.span, c.encoded_data) for p in parts for c in p.data.clips]
    assert got == [(c.uuid, c.span, c.encoded_data) for c in whole.data.clips]


def test_scene_cut_windows_decode_only_their_frames(long_video) -> None:
    stage = ensure_setup(SceneCutSplitStage(min_clip_length_s=0.0))
    (whole,) = [stage.process(t) for t in _tasks(long_video, None)]
    parts = _tasks(long_video, 5.0)
    decoded = [decode_all_frames(stage, t, (64, 48), 16) for t in parts]
    assert [(len(f), first) for f, _, first in decoded] == [(50, 0), (50, 50), (20, 100)]
    all_frames = decode_all_frames(stage, _tasks(long_video, None)[0], (64, 48), 16)[0]
    assert np.array_equal(np.concatenate([f for f, _, _ in decoded]), all_frames)
    spans = [c.span for t in parts for c in stage.process(t).data.clips]
    assert spans == [c.span for c in whole.data.clips]  # windows start at cuts here
    assert len(spans) == 5


def test_pyav_window_decoding_matches_whole(long_video) -> None:
    whole, fps = read_all_frames_av(long_video, 48, 27)
    parts = [read_all_frames_av(long_video, 48, 27, window=w)[0]
             for w in video_windows(12.0, 4.0)]
    assert fps == FPS and [len(p) for p in parts] == [40, 40, 40]
    assert np.array_equal(np.concatenate(parts), whole)


class _LoggingTranscoder(ClipTranscodingStage):
    """Logs when clip encoders are opened and closed."""

    def _open(self, w, h, fps):
        self.events.append("open")
        return super()._open(w, h, fps)

    def _finish(self, clip, outs, path):
        self.events.append("close")
        ClipTranscodingStage._finish(clip, outs, path)


def test_transcoder_closes_each_clip_when_it_ends(long_video) -> None:
    stage = ensure_setup(_LoggingTranscoder(target_res=(32, 24)))
    stage.events = []
    (task,) = _tasks(long_video, None)
    task = stage.process(FixedStrideSplitStage(clip_len_s=1.0).process(task))
    assert len(task.data.clips) == 12 and all(c.encoded_data for c in task.data.clips)
    # one encoder open at a time for back-to-back clips (not all 12 held to the end)
    assert stage.events == ["open", "close"] * 12


def test_pipeline_writes_the_same_clips_with_windows(long_video, tmp_path) -> None:
    def run(window_s, out):
        stages = [VideoReaderStage(input_video_path=os.path.dirname(long_video),
                                   window_s=window_s),
                  FixedStrideSplitStage(clip_len_s=3.0),
                  ClipTranscodingStage(target_res=(32, 24)),
                  ClipWriterStage(output_path=str(out), metadata_format="json")]
        result = Pipeline("windows", stages=stages).run(executor=LocalExecutor(cpus=2))
        assert result.ok
        clips = out / "clips"
        return {n: (clips / n).read_bytes() for n in sorted(os.listdir(clips))}

    whole = run(None, tmp_path / "whole")
    assert len(whole) == 4
    assert run(5.0, tmp_path / "windows") == whole


_EVENTS: list[str] = []


class _Log(ProcessingStage[VideoTask, VideoTask]):
    """Records that it saw a task (workers run copies: the record is module-wide)."""

    def __init__(self, mark: str) -> None:
        self.mark, self.name = mark, f"Log{mark}"

    def process(self, task: VideoTask) -> VideoTask:
        _EVENTS.append(self.mark)
        return task


def test_windows_reach_the_next_stages_one_at_a_time(long_video) -> None:
    # the reader's metadata stage is its own group: its windows cross a bounded queue, so the
    # stages after it take one window through all of them before the next (fused with them,
    # every window was split, decoded and held before the first one was written)
    _EVENTS.clear()
    stages = [VideoReaderStage(input_video_path=os.path.dirname(long_video), window_s=1.0),
              _Log("a"), _Log("b")]
    assert Pipeline("one-by-one", stages=stages).run(executor=LocalExecutor(cpus=1)).ok
    assert _EVENTS == ["a", "b"] * 12
