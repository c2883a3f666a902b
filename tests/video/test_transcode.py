import io

import pytest
from curator.testing import check_stage_contract
from curator_video import ClipTranscodingStage, FixedStrideSplitStage
from curator_video.tasks import Clip, Video, VideoMetadata, VideoTask


def probe(data: bytes):
    import av
    with av.open(io.BytesIO(data)) as c:
        s = c.streams.video[0]
        frames = sum(1 for _ in c.decode(s))
        return s.codec_context.name, s.codec_context.width, s.codec_context.height, frames


def test_clips_are_cut_and_encoded_with_chosen_codec_and_size(load_video):
    task = FixedStrideSplitStage(2.0, clip_stride_s=1.0, min_clip_length_s=0.5).process(
        load_video("moving.mp4"))
    task = ClipTranscodingStage(target_res=(32, 24), bit_rate=200_000).process(task)
    got = [probe(c.encoded_data) for c in task.data.clips]
    # overlapping clips 0-2 s and 1-3 s at 10 fps: each gets its 20 frames
    assert [c.span for c in task.data.clips] == [(0, 2), (1, 3)]
    assert got == [("h264", 32, 24, 20), ("h264", 32, 24, 20)]


def test_other_encoder(load_video):
    task = FixedStrideSplitStage(1.5).process(load_video("static.mp4"))
    task = ClipTranscodingStage(encoder="mpeg4").process(task)
    assert {probe(c.encoded_data)[:3] for c in task.data.clips} == {("mpeg4", 64, 48)}


def test_unreadable_video_is_rejected(video_dir):
    path = f"{video_dir}/corrupt.mp4"
    task = VideoTask("t", "d", Video(path, VideoMetadata(duration=1, fps=10),
                                     clips=[Clip.from_span(path, 0, 1)]))
    stage = ClipTranscodingStage()
    assert stage.process(task) is None
    assert stage.drain_rejected()[0].reason == "transcoding failed"


def test_config_errors():
    with pytest.raises(ValueError, match="ClipTranscodingStage: target_res"):
        ClipTranscodingStage(target_res=(1, 1))
    with pytest.raises(RuntimeError, match="encoder"):
        ClipTranscodingStage(encoder="no-such-codec").setup()


def test_contract(load_video):
    check_stage_contract(ClipTranscodingStage(), FixedStrideSplitStage(1.0).process(
        load_video("moving.mp4")))
