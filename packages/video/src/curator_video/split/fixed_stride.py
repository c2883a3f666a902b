"""FixedStrideSplitStage: clips of a fixed length every ``stride`` seconds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from curator import ProcessingStage
from curator.errors import ConfigError

from curator_video._config import coerce_numbers
from curator_video.decode import task_window
from curator_video.tasks import Clip, VideoTask

__all__ = ["FixedStrideSplitStage", "fixed_stride_spans"]


def fixed_stride_spans(duration: float, clip_len_s: float, clip_stride_s: float,
                       min_clip_length_s: float) -> list[tuple[float, float]]:
    """``(start, end)`` spans of ``clip_len_s`` every ``clip_stride_s`` over ``duration``; the
    last (shorter) span is kept only if it lasts at least ``min_clip_length_s``."""
    spans = []
    start = 0.0
    while start < duration - 1e-6:
        end = min(start + clip_len_s, duration)
        if end - start >= min_clip_length_s - 1e-6:
            spans.append((start, end))
        if end >= duration:
            break
        start += clip_stride_s
    return spans


@dataclass
class FixedStrideSplitStage(ProcessingStage[VideoTask, VideoTask]):
    """Splits each video into clips of ``clip_len_s`` seconds starting every ``clip_stride_s``
    seconds (overlapping when the stride is shorter than the length). A task holding a window
    of a long video (see ``VideoReaderStage``) gets the clips that start in its window: the
    same clips as the whole video, spread over its windows.

    Args:
        clip_len_s: clip length in seconds.
        clip_stride_s: seconds between clip starts (``None``: equal to ``clip_len_s``).
        min_clip_length_s: a trailing clip shorter than this is dropped (``None``:
            ``min(2.0, clip_len_s)``).
        limit_clips: keep at most this many clips per video (``None``: all).
    """

    clip_len_s: float = 10.0
    clip_stride_s: float | None = None
    min_clip_length_s: float | None = None
    limit_clips: int | None = None
    name: str = "FixedStrideSplitStage"
    modality: ClassVar[str] = "video"

    def __post_init__(self) -> None:
        coerce_numbers(self, "clip_len_s", "clip_stride_s", "min_clip_length_s")
        if self.clip_len_s <= 0:
            raise ConfigError(f"{self.name}: clip_len_s must be > 0, got {self.clip_len_s}")
        if self.clip_stride_s is None:
            self.clip_stride_s = self.clip_len_s
        if self.clip_stride_s <= 0:
            raise ConfigError(f"{self.name}: clip_stride_s must be > 0, got {self.clip_stride_s}")
        if self.min_clip_length_s is None:
            self.min_clip_length_s = min(2.0, self.clip_len_s)
        if not 0 <= self.min_clip_length_s <= self.clip_len_s:
            raise ConfigError(f"{self.name}: min_clip_length_s must be in [0, clip_len_s], got "
                              f"{self.min_clip_length_s}")

    def inputs(self):
        return ["data"], ["metadata"]

    def outputs(self):
        return ["data"], ["clips"]

    def process(self, task: VideoTask) -> VideoTask:
        video = task.data
        spans = fixed_stride_spans(video.metadata.duration, self.clip_len_s,
                                   float(self.clip_stride_s), float(self.min_clip_length_s))
        if self.limit_clips is not None:
            spans = spans[: self.limit_clips]
        window = task_window(task)
        if window is not None:  # the clips starting in this task's window of a long video
            spans = [(s, e) for s, e in spans if window[0] - 1e-6 <= s < window[1] - 1e-6]
        return task.with_clips([Clip.from_span(video.input_path, s, e) for s, e in spans])


FixedStrideExtractorStage = FixedStrideSplitStage  # NeMo Curator's name
