"""Decoding helpers shared by the video stages (PyAV and decord are imported inside)."""

from __future__ import annotations

from typing import Any

import numpy as np

from curator_video.tasks import VideoMetadata

__all__ = ["read_metadata", "open_decord", "read_frames", "read_all_frames_av", "video_windows",
           "task_window", "window_frame_range", "DEFAULT_WINDOW_S"]

DEFAULT_WINDOW_S = 60.0
"""A video longer than this is read as windows of this many seconds, one task each."""


def video_windows(duration: float, window_s: float | None) -> list[tuple[float, float]]:
    """``[start_s, end_s)`` windows of ``window_s`` covering ``duration`` (the last one ends at
    ``duration``); ``[]`` when the video fits in one window (it is read whole, as one task)."""
    if window_s is None or duration <= window_s + 1e-6:
        return []
    n = int(np.ceil(duration / window_s - 1e-9))
    return [(round(i * window_s, 4), round(min((i + 1) * window_s, duration), 4))
            for i in range(n)]


def task_window(task: Any) -> tuple[float, float] | None:
    """The ``[start_s, end_s)`` part of its video a task covers (``metadata["window"]``, set by
    ``VideoMetadataStage`` on long videos), or ``None`` for the whole video."""
    window = task.metadata.get("window")
    return (float(window[0]), float(window[1])) if window else None


def window_frame_range(window: tuple[float, float] | None, fps: float, total: int
                       ) -> tuple[int, int]:
    """``[first, end)`` indices of the frames whose time ``k / fps`` lies in ``window`` (the
    last window runs to the last frame); ``(0, total)`` without a window."""
    if window is None:
        return 0, total
    first = min(total, int(np.ceil(window[0] * fps - 1e-6)))
    last = window[1] >= total / fps - 1e-6
    end = total if last else min(total, int(np.ceil(window[1] * fps - 1e-6)))
    return first, end


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
            duration = _duration(container, stream)
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
    out = None
    for i in range(0, len(indices), chunk):  # filled in place: no second copy of all frames
        part = reader.get_batch(indices[i:i + chunk]).asnumpy()
        if out is None:
            out = np.empty((len(indices), *part.shape[1:]), part.dtype)
        out[i:i + len(part)] = part
    return out


def read_all_frames_av(path: str, width: int, height: int,
                       window: tuple[float, float] | None = None) -> tuple[np.ndarray, float]:
    """Every frame of ``path`` scaled to ``width`` x ``height`` (bicubic, as ffmpeg's ``-s``)
    as ``(N, height, width, 3)`` uint8 RGB, and the stream's fps; decoded with PyAV, which
    (unlike decord) scales to odd sizes such as TransNetV2's 48x27. With ``window``, only the
    frames of :func:`window_frame_range` (decoding starts at the key frame before it)."""
    import av
    import fsspec

    frames = []
    with fsspec.open(path, "rb") as fh:
        with av.open(fh) as container:
            stream = container.streams.video[0]
            fps = float(stream.average_rate or stream.guessed_rate or 0)
            first, end = 0, None
            if window is not None:
                first = int(np.ceil(window[0] * fps - 1e-6))
                end = None if window[1] >= _duration(container, stream) - 1e-6 else \
                    int(np.ceil(window[1] * fps - 1e-6))
                if first > 0:
                    container.seek(int(window[0] / stream.time_base), stream=stream,
                                   backward=True, any_frame=False)
            origin = stream.start_time or 0
            for k, f in enumerate(container.decode(stream)):
                if window is not None:
                    k = int(round(float((f.pts - origin) * stream.time_base) * fps))
                    if k < first:
                        continue
                    if end is not None and k >= end:
                        break
                frames.append(f.to_ndarray(width=width, height=height, format="rgb24",
                                           interpolation="BICUBIC"))
    if not frames:
        raise ValueError(f"{path}: no frame could be decoded")
    return np.stack(frames), fps


def _duration(container: Any, stream: Any) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    return (container.duration or 0) / 1_000_000
