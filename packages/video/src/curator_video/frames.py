"""ClipFrameExtractionStage: sample frames of every clip with decord."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from curator import ProcessingStage
from curator.errors import ConfigError

from curator_video._config import coerce_numbers
from curator_video.tasks import Clip, VideoTask

__all__ = ["ClipFrameExtractionStage", "clip_frame_indices"]


def clip_frame_indices(clip: Clip, fps: float, total: int, target_fps: float | None,
                       num_frames: int | None) -> list[int]:
    """Source frame indices to sample from ``clip``: ``num_frames`` evenly spaced, or one every
    ``1 / target_fps`` seconds (at least one frame)."""
    first = min(int(round(clip.span[0] * fps)), total - 1)
    last = max(first, min(int(round(clip.span[1] * fps)) - 1, total - 1))
    if num_frames is not None:
        idx = np.linspace(first, last, num_frames)
    else:
        step = fps / float(target_fps)  # type: ignore[arg-type]
        idx = np.arange(first, last + 1e-6, step)
    return sorted({int(round(i)) for i in idx}) or [first]


@dataclass
class ClipFrameExtractionStage(ProcessingStage[VideoTask, VideoTask]):
    """Decodes frames of every clip with decord (one ``VideoReader`` per video, frames of all
    clips read together with batched ``get_batch`` calls, resized on decode) and stores them in
    ``clip.frames`` ``(N, H, W, 3)`` uint8. An undecodable video is rejected.

    Args:
        target_fps: frames per second to sample (used when ``num_frames`` is ``None``).
        num_frames: sample this many evenly spaced frames per clip instead.
        target_res: ``(width, height)`` to resize frames to (``None``: keep the source size).
        batch_frames: frames per ``get_batch`` call.
        num_threads: decord decoding threads.
    """

    target_fps: float | None = 2.0
    num_frames: int | None = None
    target_res: tuple[int, int] | None = None
    batch_frames: int = 64
    num_threads: int = 1
    name: str = "ClipFrameExtractionStage"
    modality: ClassVar[str] = "video"

    def __post_init__(self) -> None:
        coerce_numbers(self, "target_fps")
        if self.num_frames is None and (self.target_fps is None or self.target_fps <= 0):
            raise ConfigError(f"{self.name}: set target_fps > 0 or num_frames >= 1")
        if self.num_frames is not None and self.num_frames < 1:
            raise ConfigError(f"{self.name}: num_frames must be >= 1, got {self.num_frames}")
        if self.target_res is not None:
            if len(self.target_res) != 2 or min(self.target_res) < 1:
                raise ConfigError(f"{self.name}: target_res must be (width, height), got "
                                  f"{self.target_res}")
            self.target_res = (int(self.target_res[0]), int(self.target_res[1]))

    def inputs(self):
        return ["data"], ["clips"]

    def outputs(self):
        return ["data"], ["clips", "frames"]

    def process(self, task: VideoTask) -> VideoTask | None:
        from curator_video.decode import open_decord, read_frames

        video = task.data
        if not video.clips:
            return task
        import decord  # noqa: F401 - a missing library fails the task, it is not a bad file

        w, h = self.target_res or (-1, -1)
        try:
            reader = open_decord(video.input_path, w, h, self.num_threads)
            total = len(reader)
            fps = float(reader.get_avg_fps()) or video.metadata.fps
            per_clip = [clip_frame_indices(c, fps, total, self.target_fps, self.num_frames)
                        for c in video.clips]
            wanted = sorted({i for idx in per_clip for i in idx})
            frames = read_frames(reader, wanted, self.batch_frames)
        except Exception as exc:
            self.reject(task, "undecodable video", record={"path": video.input_path},
                        error=exc, source=video.input_path)
            return None
        pos: dict[int, Any] = {f: k for k, f in enumerate(wanted)}
        for clip, idx in zip(video.clips, per_clip, strict=True):
            clip.frame_indices = idx
            at = [pos[i] for i in idx]
            # a clip whose frames are consecutive in ``frames`` (clips that do not overlap)
            # gets a view of them rather than a copy, so the frames are held once
            contiguous = at == list(range(at[0], at[0] + len(at)))
            clip.frames = frames[at[0]:at[0] + len(at)] if contiguous else frames[at]
        return task
