"""Issue 31 item 6: a VideoTask is stored as its clips' own MP4 files plus ``.npy`` frames and
JSON naming ``video:VideoTask``, and rebuilt from them (failed tasks, replay) without a pickle."""

from __future__ import annotations

import json

import numpy as np
from curator.task_files import load_task, save_task
from curator_video import FixedStrideSplitStage, VideoTask


def test_video_task_round_trips_through_its_clip_files(tmp_path, load_video):
    task: VideoTask = FixedStrideSplitStage(clip_len_s=0.5).process(load_video("moving.mp4"))
    video = task.data
    assert len(video.clips) >= 2
    video.clips[0].encoded_data = b"\x00\x00\x00\x18ftypmp42 not really"  # bytes a clip carries
    video.clips[0].frames = np.zeros((2, 4, 4, 3), np.uint8)
    video.clips[0].scores = {"motion": 0.5}
    video.filter_clips([True] + [False] * (len(video.clips) - 1), by="MotionFilterStage")

    written = save_task(task, str(tmp_path / "v"), stage="Motion")
    mp4 = tmp_path / f"v.clip-{video.clips[0].uuid}.mp4"
    assert mp4.name in written and mp4.read_bytes() == video.clips[0].encoded_data
    doc = json.loads((tmp_path / "v.task.json").read_text())
    assert doc["task_class"] == "video:VideoTask" and doc["stage"] == "Motion"

    back = load_task(str(tmp_path / "v.task.json"))
    assert isinstance(back, VideoTask) and back.task_id == task.task_id
    assert back.data.input_path == video.input_path and back.data.metadata == video.metadata
    assert back.data.clips[0].span == video.clips[0].span
    assert back.data.clips[0].encoded_data == video.clips[0].encoded_data
    assert np.array_equal(back.data.clips[0].frames, video.clips[0].frames)
    assert back.data.clips[0].scores == {"motion": 0.5}
    assert [c.uuid for c in back.data.filtered_clips] == [c.uuid for c in video.filtered_clips]
    assert back.data.filtered_clips[0].filtered_by == "MotionFilterStage"
