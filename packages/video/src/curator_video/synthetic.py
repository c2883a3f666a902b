"""Generate small synthetic videos with PyAV (for tests, examples and benchmarks).

Everything here is deterministic: the same arguments produce the same frames.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["write_video", "scene_frames", "moving_frames", "static_frames", "write_corrupt_video"]

_COLOURS = [(220, 30, 30), (30, 200, 40), (40, 60, 230), (230, 220, 40), (200, 40, 210),
            (40, 210, 210), (250, 250, 250), (20, 20, 20)]


def scene_frames(scene_lengths: Sequence[int], width: int = 64, height: int = 48,
                 moving: bool = False, offset: int = 0) -> np.ndarray:
    """Frames of solid-colour scenes (with a small static pattern), ``scene_lengths[i]`` frames
    each; scene ``i`` starts at frame ``sum(scene_lengths[:i])`` (the known cut). ``moving``
    adds a small grey square moving across every scene; ``offset`` shifts the colour palette."""
    out = []
    for i, n in enumerate(scene_lengths):
        frame = np.empty((height, width, 3), np.uint8)
        frame[:] = _COLOURS[(i + offset) % len(_COLOURS)]
        frame[height // 4: height // 2, width // 4: width // 2] = \
            _COLOURS[(i + offset + 3) % len(_COLOURS)]
        out.extend([frame] * n)
    frames = np.stack(out)
    if moving:
        side = max(2, height // 8)
        frames = frames.copy()
        for k in range(len(frames)):
            x = (k * 2) % (width - side)
            frames[k, height - 2 * side: height - side, x:x + side] = 128
    return frames


def moving_frames(n: int, width: int = 64, height: int = 48, speed: int = 3) -> np.ndarray:
    """A white square moving ``speed`` pixels per frame over a dark background."""
    frames = np.full((n, height, width, 3), 30, np.uint8)
    side = max(4, height // 3)
    for i in range(n):
        x = (i * speed) % (width - side)
        y = (i * speed // 2) % (height - side)
        frames[i, y:y + side, x:x + side] = 240
    return frames


def static_frames(n: int, width: int = 64, height: int = 48) -> np.ndarray:
    """The same frame (a static pattern) ``n`` times."""
    return np.repeat(moving_frames(1, width, height), n, axis=0)


def write_video(path: str, frames: np.ndarray, fps: int = 10, codec: str = "libx264",
                crf: int = 18) -> str:
    """Encode ``frames`` ``(N, H, W, 3)`` uint8 into ``path`` (MP4) with PyAV; returns ``path``."""
    import av

    n, h, w, _ = frames.shape
    with av.open(path, mode="w") as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        if codec == "libx264":
            stream.options = {"crf": str(crf), "preset": "ultrafast", "g": str(fps)}
        for frame in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def write_corrupt_video(path: str, size: int = 2048, seed: int = 0) -> str:
    """Write random bytes under a video file name (a file no decoder can read)."""
    with open(path, "wb") as fh:
        fh.write(np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes())
    return path
