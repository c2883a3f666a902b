"""ClipFrameExtractionStage: sample frames of every clip with decord."""

from __future__ import annotations

import enum
import logging
import threading
import uuid
import weakref
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from curator import ProcessingStage
from curator.errors import ConfigError

from curator_video._config import coerce_numbers
from curator_video.budget import DEFAULT_FRAME_BUDGET, FrameBudget
from curator_video.tasks import Clip, VideoTask

__all__ = ["ClipFrameExtractionStage", "clip_frame_indices", "BATCH_BYTES",
           "FrameExtractionPolicy", "FramePurpose"]

_log = logging.getLogger(__name__)


class FrameExtractionPolicy(enum.Enum):
    """Which frames of a clip to extract (NeMo Curator's enum): its ``first``, ``middle`` or
    ``last`` frame, or a ``sequence`` sampled at the target fps."""

    first = 0
    middle = 1
    last = 2
    sequence = 3


class FramePurpose(enum.Enum):
    """What frames are extracted for (NeMo Curator's enum); the value is the sampling rate in
    frames per second used when no ``target_fps`` is given."""

    AESTHETICS = 1
    EMBEDDINGS = 2

BATCH_BYTES = 32 * 2**20
"""The most decoded bytes one ``get_batch`` call returns (decord's buffer and its NumPy copy
exist together): 11 frames of 1280x720, 1 of 4K, ``batch_frames`` of small frames."""


_BUDGET_LOCK = threading.Lock()
_BUDGETS: weakref.WeakValueDictionary[str, FrameBudget] = weakref.WeakValueDictionary()


def clip_frame_indices(clip: Clip, fps: float, total: int, target_fps: float | None,
                       num_frames: int | None,
                       policy: FrameExtractionPolicy = FrameExtractionPolicy.sequence
                       ) -> list[int]:
    """Source frame indices to sample from ``clip``: ``num_frames`` evenly spaced, or one every
    ``1 / target_fps`` seconds (at least one frame); with a ``first``/``middle``/``last``
    ``policy``, that one frame."""
    first = min(int(round(clip.span[0] * fps)), total - 1)
    last = max(first, min(int(round(clip.span[1] * fps)) - 1, total - 1))
    single = {FrameExtractionPolicy.first: first, FrameExtractionPolicy.last: last,
              FrameExtractionPolicy.middle: (first + last) // 2}
    if policy in single:
        return [single[policy]]
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

    Memory: a worker decodes only while the frames the stage's other workers in its process
    still hold, plus its own, fit in ``frame_budget`` bytes (a task needing more runs alone), so
    frames in flight are bounded by bytes, not by the number of workers times the size of a
    task; the decoder is released and the C heap trimmed after every task.

    Args:
        target_fps: frames per second to sample (used when ``num_frames`` is ``None``;
            ``None``: from ``extract_purposes``, else 2). NeMo's one-element list is accepted;
            Curator keeps one frame set per clip, so several rates are a configuration error.
        num_frames: sample this many evenly spaced frames per clip instead.
        target_res: ``(width, height)`` to resize frames to (``None``: keep the source size).
        batch_frames: the most frames per ``get_batch`` call (fewer where they would hold more
            than 32 MiB).
        num_threads: decord decoding threads.
        frame_budget: bytes of decoded frames this stage's workers hold at once in one process
            (default 512 MiB; ``None``: no bound).
        extraction_policies: NeMo's :class:`FrameExtractionPolicy` (one of them):
            ``sequence`` (the default) or the ``first``/``middle``/``last`` frame of each clip.
        extract_purposes: NeMo's :class:`FramePurpose` values; they set ``target_fps`` when it
            is ``None`` (``AESTHETICS``: 1 fps, ``EMBEDDINGS``: 2 fps; several: the highest).
        verbose: log the frames extracted per video.
        num_cpus: NeMo's CPUs per worker: reserves them and decodes with as many threads.

    ``target_res=(-1, -1)`` (NeMo's "keep the source size") is the same as ``None``.
    """

    target_fps: float | list[float] | None = None
    num_frames: int | None = None
    target_res: tuple[int, int] | None = None
    batch_frames: int = 64
    num_threads: int = 1
    frame_budget: int | None = DEFAULT_FRAME_BUDGET
    extraction_policies: tuple[FrameExtractionPolicy, ...] = (FrameExtractionPolicy.sequence,)
    extract_purposes: tuple[FramePurpose, ...] | None = None
    verbose: bool = False
    num_cpus: int | None = None
    name: str = "ClipFrameExtractionStage"
    modality: ClassVar[str] = "video"
    # workers run copies of the stage (threads: deep copies; processes: unpickled): the copies
    # in one process share one budget, found by this key
    _budget_key: str = field(default_factory=lambda: uuid.uuid4().hex, init=False, repr=False,
                             compare=False)
    _budget: FrameBudget | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._nemo_parameters()
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
        if self.frame_budget is not None and self.frame_budget < 1:
            raise ConfigError(f"{self.name}: frame_budget must be > 0 bytes or None, got "
                              f"{self.frame_budget}")

    def _nemo_parameters(self) -> None:
        """Turns NeMo's parameters into this stage's own (one policy, one fps, a size)."""
        policies = tuple(FrameExtractionPolicy[p] if isinstance(p, str) else p
                         for p in self.extraction_policies)
        if len(policies) != 1:
            raise ConfigError(f"{self.name}: Curator keeps one frame set per clip: pass one "
                              f"extraction policy, got {policies}")
        self.extraction_policies = policies
        if isinstance(self.target_fps, list | tuple):
            if len(set(self.target_fps)) != 1:
                raise ConfigError(f"{self.name}: Curator keeps one frame set per clip: pass one "
                                  f"target_fps, got {list(self.target_fps)}")
            self.target_fps = self.target_fps[0]
        if self.target_fps is None:
            purposes = [FramePurpose[p] if isinstance(p, str) else p
                        for p in self.extract_purposes or ()]
            self.target_fps = float(max((p.value for p in purposes), default=2))
        if self.target_res is not None and tuple(self.target_res) == (-1, -1):
            self.target_res = None
        if self.num_cpus is not None:
            from curator.resources import Resources
            self.resources = Resources(cpus=float(self.num_cpus))
            self.num_threads = int(self.num_cpus)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_budget": None}  # found again by its key where it lands

    def budget(self) -> FrameBudget:
        """The :class:`FrameBudget` this stage's copies share in this process."""
        with _BUDGET_LOCK:
            if self._budget is None:
                self._budget = _BUDGETS.get(self._budget_key)
                if self._budget is None:
                    self._budget = FrameBudget(self.frame_budget or 2**62)
                    _BUDGETS[self._budget_key] = self._budget
            return self._budget

    def inputs(self):
        return ["data"], ["clips"]

    def outputs(self):
        return ["data"], ["clips", "frames"]

    def _frame_bytes(self, video: Any) -> int:
        w, h = self.target_res or (video.metadata.width, video.metadata.height)
        return max(1, w * h * 3)

    def process(self, task: VideoTask) -> VideoTask | None:
        from curator.heap import keep_big_blocks_mapped, trim_heap

        from curator_video.decode import open_decord, read_frames

        video = task.data
        if not video.clips:
            return task
        import decord  # noqa: F401 - a missing library fails the task, it is not a bad file

        keep_big_blocks_mapped()
        w, h = self.target_res or (-1, -1)
        size = self._frame_bytes(video)
        budget = self.budget()
        reader, ticket = None, None
        try:
            reader = open_decord(video.input_path, w, h, self.num_threads)
            total = len(reader)
            fps = float(reader.get_avg_fps()) or video.metadata.fps
            policy = self.extraction_policies[0]
            per_clip = [clip_frame_indices(c, fps, total, self.target_fps, self.num_frames,
                                           policy) for c in video.clips]
            wanted = sorted({i for idx in per_clip for i in idx})
            ticket = budget.acquire(len(wanted) * size)
            batch = max(1, min(self.batch_frames, BATCH_BYTES // size))
            frames = read_frames(reader, wanted, batch)
        except Exception as exc:
            if ticket is not None:
                budget.release(ticket)
            self.reject(task, "undecodable video", record={"path": video.input_path},
                        error=exc, source=video.input_path)
            return None
        finally:
            reader = None  # the decoder's threads and buffers go now, then the heap is trimmed
            trim_heap()
        pos: dict[int, Any] = {f: k for k, f in enumerate(wanted)}
        for clip, idx in zip(video.clips, per_clip, strict=True):
            clip.frame_indices = idx
            at = [pos[i] for i in idx]
            # a clip whose frames are consecutive in ``frames`` (clips that do not overlap)
            # gets a view of them rather than a copy, so the frames are held once
            contiguous = at == list(range(at[0], at[0] + len(at)))
            clip.frames = frames[at[0]:at[0] + len(at)] if contiguous else frames[at]
        budget.hold(ticket, [c.frames for c in video.clips])
        if self.verbose:
            _log.info("%s: %s: %d frames for %d clips", self.name, video.input_path, len(wanted),
                      len(video.clips))
        return task
