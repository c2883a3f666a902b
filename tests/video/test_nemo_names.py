import curator_video
import pytest
from curator import Pipeline
from curator.migrate import migrate_source
from curator_video import (
    ClipFrameExtractionStage,
    FixedStrideSplitStage,
    FrameExtractionPolicy,
    FramePurpose,
    VideoReader,
    VideoReaderStage,
)


def test_video_reader_composite_takes_nemos_positional_parameters(video_dir):
    got = Pipeline("r", stages=[VideoReader(str(video_dir), 2, True)]).run()
    want = Pipeline("r", stages=[VideoReaderStage(str(video_dir), 2)]).run()
    assert sorted(t.data.input_path for t in got) == sorted(t.data.input_path for t in want)
    assert got and [s.name for s in VideoReader("x").decompose()] == [
        s.name for s in VideoReaderStage("x").decompose()]


def test_frame_extraction_nemo_parameters(load_video):
    task = FixedStrideSplitStage(1.0, min_clip_length_s=0.5).process(load_video("moving.mp4"))
    seq = ClipFrameExtractionStage(extraction_policies=(FrameExtractionPolicy.sequence,),
                                   extract_purposes=(FramePurpose.AESTHETICS,),
                                   target_res=(-1, -1), verbose=True, num_cpus=2)
    assert (seq.target_fps, seq.target_res, seq.num_threads) == (1.0, None, 2)
    assert ClipFrameExtractionStage(extract_purposes=[FramePurpose.EMBEDDINGS]).target_fps == 2.0
    assert ClipFrameExtractionStage(target_fps=[4]).target_fps == 4.0
    middle = ClipFrameExtractionStage(extraction_policies=(FrameExtractionPolicy.middle,))
    out = middle.process(task)
    assert all(len(c.frames) == 1 for c in out.data.clips)
    assert out.data.clips[0].frame_indices == [4]  # frames 0-9 of a 10 fps video's first second
    with pytest.raises(ValueError, match="one frame set per clip"):
        ClipFrameExtractionStage(target_fps=[1, 2])
    with pytest.raises(ValueError, match="one frame set per clip"):
        ClipFrameExtractionStage(extraction_policies=(FrameExtractionPolicy.first,
                                                      FrameExtractionPolicy.last))


def test_nemo_doc_imports_migrate():
    src = ("from nemo_curator.utils.decoder_utils import FrameExtractionPolicy, FramePurpose\n"
           "from nemo_curator.stages.video.io.video_reader import VideoReader\n")
    res = migrate_source(src, "s.py")
    assert not res.unmapped
    assert "nemo_curator" not in res.text
    namespace: dict = {}
    exec(res.text, namespace)
    assert namespace["FramePurpose"] is curator_video.FramePurpose
    assert namespace["VideoReader"] is curator_video.VideoReader
    res = migrate_source("from nemo_curator.stages.video.filtering.motion_filter import "
                         "MotionVectorDecodeStage\n", "s.py")
    assert "ClipFrameExtractionStage before MotionFilterStage" in res.unmapped[0].reason


def test_model_interface_is_abstract_and_migrates():
    from curator_video.models.base import ModelInterface

    class Incomplete(ModelInterface):
        def setup(self) -> None: ...

    with pytest.raises(TypeError):
        Incomplete()

    class Mine(Incomplete):
        model_id_names = ["example/my-model"]

    assert Mine().model_id_names == ["example/my-model"]
    res = migrate_source("from nemo_curator.models.base import ModelInterface\n", "s.py")
    assert res.text == "from curator_video.models.base import ModelInterface\n"
