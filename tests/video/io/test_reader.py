import json
import os

import pytest
from curator import EMPTY_TASK, Pipeline
from curator.testing import check_stage_contract
from curator_video import VideoListStage, VideoMetadataStage, VideoReaderStage, VideoTask


def test_listing_is_deterministic_sorted_and_filters_extensions(video_dir):
    stage = VideoListStage(video_dir)
    first = stage.process(EMPTY_TASK)
    again = VideoListStage(video_dir).process(EMPTY_TASK)
    assert [t.task_id for t in first] == [t.task_id for t in again]
    names = [os.path.basename(t.data[0]) for t in first]
    assert names == ["corrupt.mp4", "moving.mp4", "scenes.mp4", "static.mp4"]
    assert len(VideoListStage(video_dir, video_limit=2).process(EMPTY_TASK)) == 2


def test_fsspec_url_lists_the_same_videos(video_dir):
    local = VideoListStage(video_dir).process(EMPTY_TASK)
    url = VideoListStage(f"file://{video_dir}").process(EMPTY_TASK)
    assert len(url) == len(local)


def test_metadata_of_generated_video(video_dir):
    task = VideoListStage(os.path.join(video_dir, "scenes.mp4")).process(EMPTY_TASK)[0]
    (out,) = VideoMetadataStage().process(task)
    meta = out.data.metadata
    assert isinstance(out, VideoTask) and out.task_id == task.task_id
    assert (meta.width, meta.height, meta.codec) == (64, 48, "h264")
    assert meta.fps == pytest.approx(10.0)
    assert meta.duration == pytest.approx(4.0, abs=0.11)
    assert meta.num_frames == 40


def test_corrupt_file_is_rejected_with_its_error_and_the_run_goes_on(video_dir, tmp_path):
    rej = tmp_path / "rejected"
    result = Pipeline("read", stages=[VideoReaderStage(video_dir)]).run(rejected_dir=str(rej))
    paths = sorted(os.path.basename(t.data.input_path) for t in result)
    assert paths == ["moving.mp4", "scenes.mp4", "static.mp4"]
    assert result.rejected.counts == {"VideoMetadataStage": 1}
    (f,) = list((rej / "VideoMetadataStage").iterdir())
    rec = json.loads(f.read_text().splitlines()[0])
    assert rec["record"]["path"].endswith("corrupt.mp4") and rec["error"]


def test_config_errors_name_the_stage_and_parameter():
    with pytest.raises(ValueError, match="VideoListStage: input_video_path"):
        VideoReaderStage("")
    with pytest.raises(ValueError, match="video_limit"):
        VideoReaderStage("/x", video_limit=0)


def test_contract(video_dir):
    check_stage_contract(VideoReaderStage(video_dir))
    task = VideoListStage(video_dir).process(EMPTY_TASK)[1]
    check_stage_contract(VideoMetadataStage(), task)


def test_videos_on_an_fsspec_filesystem_are_read_split_and_decoded(video_dir):
    import fsspec
    from curator_video import ClipFrameExtractionStage, ClipTranscodingStage, SceneCutSplitStage

    fs = fsspec.filesystem("memory")
    fs.makedirs("/vids", exist_ok=True)
    fs.pipe("/vids/moving.mp4", open(os.path.join(video_dir, "moving.mp4"), "rb").read())
    stages = [VideoReaderStage("memory://vids"), SceneCutSplitStage(),
              ClipFrameExtractionStage(num_frames=2), ClipTranscodingStage()]
    (task,) = Pipeline("mem", stages=stages).run()
    assert task.data.input_path.startswith("memory://")
    (clip,) = task.data.clips
    assert clip.frames.shape == (2, 48, 64, 3) and clip.encoded_data
