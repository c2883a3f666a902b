"""SceneCutSplitStage: one clip per shot, found by a pluggable scene detector."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from curator import ProcessingStage
from curator.errors import ConfigError
from curator.stages.lifecycle import ensure_setup

from curator_video._config import coerce_numbers
from curator_video.split.detectors import HistogramSceneDetector, SceneDetector
from curator_video.tasks import Clip, VideoTask

__all__ = ["SceneCutSplitStage", "DETECTORS", "decode_all_frames"]

DETECTORS: dict[str, type[SceneDetector]] = {"histogram": HistogramSceneDetector}
"""Detectors selectable by name (``detector="histogram"``); add yours or pass an instance."""


def decode_all_frames(stage: ProcessingStage, task: VideoTask, size: tuple[int, int],
                      batch_frames: int, pyav: bool = False
                      ) -> tuple[np.ndarray, float, int] | None:
    """The frames of the task's video (of its window, when it has one: see
    :func:`~curator_video.decode.task_window`) resized to ``size`` (width, height), its fps and
    the index of the first frame returned; read with decord (batched) or, with ``pyav``, PyAV
    (any size, bicubic). An undecodable video is rejected by ``stage`` (``None`` returned)."""
    import av  # noqa: F401 - a missing library fails the task, it is not a bad file
    import decord  # noqa: F401

    from curator_video.decode import (
        open_decord,
        read_all_frames_av,
        read_frames,
        task_window,
        window_frame_range,
    )

    video = task.data
    window = task_window(task)
    try:
        if pyav:
            frames, fps = read_all_frames_av(video.input_path, *size, window=window)
            first = window_frame_range(window, fps, 1 << 62)[0]
        else:
            reader = open_decord(video.input_path, *size)
            fps = float(reader.get_avg_fps())
            first, end = window_frame_range(window, fps, len(reader))
            frames = read_frames(reader, list(range(first, end)), batch_frames)
        fps = fps or video.metadata.fps
    except Exception as exc:
        stage.reject(task, "undecodable video", record={"path": video.input_path},
                     error=exc, source=video.input_path)
        return None
    return frames, fps, first


@dataclass
class SceneCutSplitStage(ProcessingStage[VideoTask, VideoTask]):
    """Splits each video at shot boundaries: decodes it downscaled with decord (batched
    ``get_batch`` reads), asks the detector for the frames that start a new shot, and makes one
    clip per shot. Shots longer than ``max_clip_length_s`` are cut into equal parts; shots
    shorter than ``min_clip_length_s`` are dropped. An undecodable video is rejected.

    A long video read as windows (``VideoReaderStage(window_s=...)``) gives the same clips as
    read whole: a window's task decodes its window with the detector's ``context_frames``
    before it, makes the clips of the shots that start in it, and reads past its end only
    until the last of those shots ends (a shot crossing a window's end is one clip, in the
    window where it starts).

    Args:
        detector: ``"histogram"`` (content-based, see ``threshold``) or a ``SceneDetector``
            instance (for learned cuts use ``TransNetV2ClipExtractionStage``).
        threshold: cut threshold for the histogram detector (0-1).
        min_clip_length_s: drop shots shorter than this.
        max_clip_length_s: split longer shots into parts no longer than this (``None``: never).
        decode_size: ``(width, height)`` frames are resized to before detection.
        batch_frames: frames per decord ``get_batch`` call.
    """

    detector: Any = "histogram"
    threshold: float = 0.35
    min_clip_length_s: float = 0.5
    max_clip_length_s: float | None = None
    decode_size: tuple[int, int] = (64, 48)
    batch_frames: int = 256
    name: str = "SceneCutSplitStage"
    modality: ClassVar[str] = "video"
    _detector: SceneDetector | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        coerce_numbers(self, "threshold", "min_clip_length_s", "max_clip_length_s")
        if isinstance(self.detector, str):
            if self.detector not in DETECTORS:
                raise ConfigError(f"{self.name}: unknown detector {self.detector!r}; use one of "
                                  f"{sorted(DETECTORS)} or pass a SceneDetector instance")
            if self.detector == "histogram":
                HistogramSceneDetector(threshold=self.threshold)  # validates threshold now
        elif not isinstance(self.detector, SceneDetector):
            raise TypeError(f"{self.name}: detector must be a name or a SceneDetector, got "
                            f"{type(self.detector).__name__}")
        if self.max_clip_length_s is not None and self.max_clip_length_s <= 0:
            raise ConfigError(f"{self.name}: max_clip_length_s must be > 0 or None")
        self.decode_size = tuple(self.decode_size)  # type: ignore[assignment]

    def inputs(self):
        return ["data"], ["metadata"]

    def outputs(self):
        return ["data"], ["clips"]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        if isinstance(self.detector, str):
            cls = DETECTORS[self.detector]
            det = cls(threshold=self.threshold) if cls is HistogramSceneDetector else cls()
        else:
            det = self.detector
        ensure_setup(det)
        self._detector = det

    def process(self, task: VideoTask) -> VideoTask | None:
        import av  # noqa: F401 - a missing library fails the task, it is not a bad file
        import decord  # noqa: F401

        from curator_video.decode import open_decord, task_window, window_frame_range

        video = task.data
        try:
            reader = open_decord(video.input_path, *self.decode_size)
            fps = float(reader.get_avg_fps())
            first, end = window_frame_range(task_window(task), fps, len(reader))
            fps = fps or video.metadata.fps
            bounds = self._shot_bounds(reader, fps, first, end)
        except Exception as exc:
            self.reject(task, "undecodable video", record={"path": video.input_path},
                        error=exc, source=video.input_path)
            return None
        clips = []
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            if (b - a) / fps >= self.min_clip_length_s - 1e-6:
                clips += [Clip.from_span(video.input_path, s, e)
                          for s, e in self._parts(a / fps, b / fps)]
        return task.with_clips(clips)

    def _shot_bounds(self, reader: Any, fps: float, first: int, end: int) -> list[int]:
        """``[s1, s2, ..., e]``: the first frames of the shots that start in frames
        ``[first, end)`` (a window of a long video, or all of it) and the end of the last one,
        read past the window until that shot ends: the window's shots of the whole video."""
        from curator_video.decode import read_frames

        total = len(reader)
        detector = self._detector
        context = getattr(detector, "context_frames", None)

        def cuts(lo: int, hi: int) -> list[int]:
            frames = read_frames(reader, list(range(lo, hi)), self.batch_frames)
            return [lo + c for c in detector.detect(frames, fps)]  # type: ignore[union-attr]

        if context is None:  # the detector may read any frame before: the whole video
            found = cuts(0, total)
            starts = [c for c in [0, *found] if first <= c < end]
            after = [c for c in found if c >= end]
            return [*starts, after[0] if after and starts else total]
        starts = [c for c in cuts(max(0, first - context), end) if c >= first]
        starts = [0, *starts] if first == 0 else starts
        if not starts or end >= total:
            return [*starts, total] if starts else []
        step = max(end - first, self.batch_frames)  # the last shot's end: read on
        pos = end
        while pos < total:
            hi = min(total, pos + step)
            later = [c for c in cuts(max(0, pos - context), hi) if c >= pos]
            if later:
                return [*starts, later[0]]
            pos = hi
        return [*starts, total]

    def _parts(self, start: float, end: float) -> list[tuple[float, float]]:
        if self.max_clip_length_s is None or end - start <= self.max_clip_length_s:
            return [(start, end)]
        n = int(-(-(end - start) // self.max_clip_length_s))
        step = (end - start) / n
        return [(start + i * step, start + (i + 1) * step) for i in range(n)]
