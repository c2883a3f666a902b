"""Generate the video example's data (if missing): small synthetic videos and tiny models.

    uv run python examples/video/prepare_data.py [--out examples/video/data]

Writes ``videos/`` (scene-cut, moving, static videos, an exact duplicate and one corrupt file)
and ``models/clip`` + ``models/aesthetic`` (tiny random-weight models built with the image
package's helpers; real runs point model_dir at real local weights instead).
"""

from __future__ import annotations

import argparse
import os

from curator_video.synthetic import (
    moving_frames,
    scene_frames,
    static_frames,
    write_corrupt_video,
    write_video,
)

HERE = os.path.dirname(os.path.abspath(__file__))


def prepare(out: str = os.path.join(HERE, "data")) -> dict[str, str]:
    """Create (once) the example videos and models under ``out``; returns their paths."""
    videos = os.path.join(out, "videos")
    os.makedirs(videos, exist_ok=True)
    wanted = {
        "scenes_a.mp4": lambda: scene_frames([20, 15, 25, 20], moving=True),
        "scenes_b.mp4": lambda: scene_frames([30, 30], moving=True, offset=2),
        "moving.mp4": lambda: moving_frames(60),
        "moving_copy.mp4": lambda: moving_frames(60),
        "static.mp4": lambda: static_frames(50),
    }
    for name, frames in wanted.items():
        path = os.path.join(videos, name)
        if not os.path.exists(path):
            write_video(path, frames(), fps=10)
    corrupt = os.path.join(videos, "corrupt.mp4")
    if not os.path.exists(corrupt):
        write_corrupt_video(corrupt)
    from curator_image.testing import (
        TINY_CLIP_EMBED_DIM,
        make_tiny_aesthetic_model,
        make_tiny_clip_model,
    )
    clip = make_tiny_clip_model(os.path.join(out, "models", "clip"))
    aesthetic = make_tiny_aesthetic_model(os.path.join(out, "models", "aesthetic"),
                                          TINY_CLIP_EMBED_DIM)
    return {"videos": videos, "clip": clip, "aesthetic": aesthetic}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "data"))
    paths = prepare(parser.parse_args().out)
    print("prepared the example's data and tiny models:")
    for name, path in paths.items():
        print(f"  {name:<10} {path}")
    print("next: uv run python examples/video/pipeline.py   or   "
          "uv run curator run examples/video/pipeline.yaml")
