"""Tiny generated videos shared by the video tests (64x48, 10 fps, a few seconds)."""

from __future__ import annotations

import pytest
from curator_video.synthetic import (
    moving_frames,
    scene_frames,
    static_frames,
    write_corrupt_video,
    write_video,
)

FPS = 10
SCENES = [14, 9, 17]          # frames per scene: cuts at frames 14 and 23
CUTS = [14, 23]


@pytest.fixture(scope="session")
def video_dir(tmp_path_factory) -> str:
    """A directory with a scene-cut video, a moving and a static video, and a corrupt file."""
    d = tmp_path_factory.mktemp("videos")
    write_video(str(d / "scenes.mp4"), scene_frames(SCENES), fps=FPS)
    write_video(str(d / "moving.mp4"), moving_frames(30), fps=FPS)
    write_video(str(d / "static.mp4"), static_frames(30), fps=FPS)
    write_corrupt_video(str(d / "corrupt.mp4"))
    (d / "notes.txt").write_text("not a video")
    return str(d)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> tuple[str, str]:
    """(CLIP model dir, aesthetic model dir) built with the image package's helpers."""
    testing = pytest.importorskip("curator_image.testing")
    d = tmp_path_factory.mktemp("models")
    clip = testing.make_tiny_clip_model(str(d / "clip"))
    aes = testing.make_tiny_aesthetic_model(str(d / "aesthetic"), testing.TINY_CLIP_EMBED_DIM)
    return clip, aes


@pytest.fixture
def load_video(video_dir):
    """``load_video("scenes.mp4")`` → a fresh VideoTask with metadata read from the file."""
    import os

    from curator import FileGroupTask, stable_id
    from curator_video import VideoMetadataStage

    def load(name: str):
        path = os.path.join(video_dir, name)
        task = FileGroupTask(task_id=f"video_{stable_id(path)}", dataset_name="video", data=[path])
        return VideoMetadataStage().process(task)[0]
    return load
