"""Decoding helpers shared by the video stages (PyAV and decord are imported inside)."""

from __future__ import annotations

from typing import Any

import numpy as np

from curator_video.tasks import VideoMetadata

__all__ = ["read_metadata", "open_decord", "read_frames", "read_all_frames_av"]


def read_metadata(path: str) -> VideoMetadata:
    """Probe ``path`` with PyAV; raises ``ValueError`` when it holds no decodable video stream."""
    import av
    import fsspec

    with fsspec.open(path, "rb") as fh:
        with av.open(fh) as container:
            if not container.streams.video:
                raise ValueError(f"{path}: no video stream")
            stream = container.streams.video[0]
            ctx = stream.codec_context
            fps = float(stream.average_rate or stream.guessed_rate or 0)
            if stream.duration is not None and stream.time_base is not None:
                duration = float(stream.duration * stream.time_base)
            elif container.duration is not None:
                duration = container.duration / 1_000_000
            else:
                duration = 0.0
            frames = stream.frames or int(round(duration * fps))
            # decode one frame: a header that parses but whose data does not is still corrupt
            if next(container.decode(stream), None) is None:
                raise ValueError(f"{path}: no frame could be decoded")
            meta = VideoMetadata(duration=duration, fps=fps, width=ctx.width, height=ctx.height,
                                 codec=ctx.name, num_frames=frames,
                                 bit_rate=int(ctx.bit_rate or container.bit_rate or 0),
                                 size_bytes=int(container.size or 0))
    if meta.fps <= 0 or meta.duration <= 0 or meta.width <= 0:
        raise ValueError(f"{path}: unusable metadata (fps={meta.fps}, duration={meta.duration}, "
                         f"width={meta.width})")
    return meta


def open_decord(path: str, width: int = -1, height: int = -1, num_threads: int = 1) -> Any:
    """A ``decord.VideoReader`` on ``path`` (a local path or any fsspec URL), resized on decode
    when ``width``/``height`` are given."""
    import decord

    if "://" in path and not path.startswith("file://"):
        import io

        import fsspec
        with fsspec.open(path, "rb") as fh:
            src: Any = io.BytesIO(fh.read())
    else:
        src = path.removeprefix("file://")
    return decord.VideoReader(src, ctx=decord.cpu(0), width=width, height=height,
                              num_threads=num_threads)


def read_frames(reader: Any, indices: list[int], chunk: int = 64) -> np.ndarray:
    """Frames at ``indices`` as ``(N, H, W, 3)`` uint8, read with ``get_batch`` in chunks."""
    if not indices:
        return np.zeros((0, 0, 0, 3), np.uint8)
    parts = [reader.get_batch(indices[i:i + chunk]).asnumpy()
             for i in range(0, len(indices), chunk)]
    return np.concatenate(parts)


def read_all_frames_av(path: str, width: int, height: int) -> tuple[np.ndarray, float]:
    """Every frame of ``path`` scaled to ``width`` x ``height`` (bicubic, as ffmpeg's ``-s``)
    as ``(N, height, width, 3)`` uint8 RGB, and the stream's fps; decoded with PyAV, which
    (unlike decord) scales to odd sizes such as TransNetV2's 48x27."""
    import av
    import fsspec

    with fsspec.open(path, "rb") as fh:
        with av.open(fh) as container:
            stream = container.streams.video[0]
            fps = float(stream.average_rate or stream.guessed_rate or 0)
            frames = [f.to_ndarray(width=width, height=height, format="rgb24",
                                   interpolation="BICUBIC") for f in container.decode(stream)]
    if not frames:
        raise ValueError(f"{path}: no frame could be decoded")
    return np.stack(frames), fps
