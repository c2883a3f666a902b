"""Decoding helpers shared by the video stages (PyAV and decord are imported inside)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from curator_video.tasks import VideoMetadata

__all__ = ["read_metadata", "open_decord", "read_frames", "read_all_frames_av", "FrameStream",
           "video_windows", "task_window", "window_frame_range", "DEFAULT_WINDOW_S"]

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


class FrameStream:
    """The frames of ``path`` from frame ``first`` on, scaled to ``width`` x ``height``
    (bicubic, as ffmpeg's ``-s``) as ``(height, width, 3)`` uint8 RGB, decoded one at a time
    with PyAV (which, unlike decord, scales to odd sizes such as TransNetV2's 48x27), so a
    caller that reads to the end of a long video holds one frame at a time. ``fps``: the
    stream's rate. Frame indices count from the first frame when ``first`` is 0 and come from
    the timestamps otherwise (decoding starts at the key frame before ``first``). Use it as a
    context manager (it closes the file)."""

    def __init__(self, path: str, width: int, height: int, first: int = 0) -> None:
        import av
        import fsspec

        self.width, self.height, self.first = width, height, first
        self._file = fsspec.open(path, "rb").open()
        try:
            self._container = av.open(self._file)
            self._stream = self._container.streams.video[0]
        except Exception:
            self._file.close()
            raise
        stream = self._stream
        self.fps = float(stream.average_rate or stream.guessed_rate or 0)
        self.duration = _duration(self._container, stream)
        if first > 0 and self.fps > 0:
            self._container.seek(int(first / self.fps / stream.time_base), stream=stream,
                                 backward=True, any_frame=False)

    def window_range(self, window: tuple[float, float] | None) -> tuple[int, int | None]:
        """``[first, end)`` frame indices of ``window`` (see :func:`window_frame_range`);
        ``end`` is ``None`` for the last window (and without one): up to the last frame."""
        if window is None:
            return 0, None
        first = int(np.ceil(window[0] * self.fps - 1e-6))
        last = window[1] >= self.duration - 1e-6
        return first, None if last else int(np.ceil(window[1] * self.fps - 1e-6))

    def __iter__(self) -> Iterator[tuple[int, np.ndarray]]:
        """``(frame index, frame)`` pairs from frame ``first`` to the end."""
        stream = self._stream
        origin = stream.start_time or 0
        for k, f in enumerate(self._container.decode(stream)):
            if self.first > 0:
                k = int(round(float((f.pts - origin) * stream.time_base) * self.fps))
                if k < self.first:
                    continue
            yield k, f.to_ndarray(width=self.width, height=self.height, format="rgb24",
                                  interpolation="BICUBIC")

    def close(self) -> None:
        self._container.close()
        self._file.close()

    def __enter__(self) -> FrameStream:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_all_frames_av(path: str, width: int, height: int,
                       window: tuple[float, float] | None = None) -> tuple[np.ndarray, float]:
    """Every frame of ``path`` scaled to ``width`` x ``height`` (:class:`FrameStream`) as
    ``(N, height, width, 3)`` uint8 RGB, and the stream's fps. With ``window``, only the
    frames of :func:`window_frame_range` (decoding starts at the key frame before it)."""
    frames = []
    first, end = 0, None
    if window is not None:
        with FrameStream(path, width, height) as probe:
            first, end = probe.window_range(window)
    with FrameStream(path, width, height, first) as stream:
        fps = stream.fps
        for k, frame in stream:
            if end is not None and k >= end:
                break
            frames.append(frame)
    if not frames:
        raise ValueError(f"{path}: no frame could be decoded")
    return np.stack(frames), fps


def _duration(container: Any, stream: Any) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    return (container.duration or 0) / 1_000_000
