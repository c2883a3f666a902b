"""VideoTask: one video, its metadata and the clips cut from it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from curator import Task, stable_id

__all__ = ["VideoMetadata", "Clip", "Video", "VideoTask"]


@dataclass
class VideoMetadata:
    """What the container says about a video: duration (s), fps, resolution, codec, frames."""

    duration: float = 0.0
    fps: float = 0.0
    width: int = 0
    height: int = 0
    codec: str = ""
    num_frames: int = 0
    bit_rate: int = 0
    size_bytes: int = 0

    @property
    def resolution(self) -> tuple[int, int]:
        """``(width, height)`` in pixels."""
        return self.width, self.height


@dataclass
class Clip:
    """A time span of a video and what stages learnt about it.

    Attributes:
        uuid: deterministic id (from the source path and the span), used for file names.
        source_video: path of the video the clip comes from.
        span: ``(start_s, end_s)`` in seconds.
        frames: extracted frames ``(N, H, W, 3)`` uint8, or ``None`` before extraction.
        frame_indices: source frame index of each extracted frame.
        scores: named scores (``motion``, ``aesthetic`` …).
        embedding: the clip embedding (1-D float32), or ``None``.
        encoded_data: the clip encoded as MP4 bytes (``ClipTranscodingStage``), or ``None``.
        caption: the clip's caption (``CaptionGenerationStage``), ``""`` before captioning.
        filtered_by: name of the stage that filtered the clip out ("" if kept).
    """

    uuid: str
    source_video: str
    span: tuple[float, float]
    frames: Any = None
    frame_indices: list[int] = field(default_factory=list)
    scores: dict[str, float] = field(default_factory=dict)
    embedding: Any = None
    encoded_data: bytes | None = None
    caption: str = ""
    filtered_by: str = ""

    @classmethod
    def from_span(cls, source_video: str, start: float, end: float) -> Clip:
        """A clip of ``source_video`` from ``start`` to ``end`` seconds with a stable uuid."""
        start, end = round(float(start), 4), round(float(end), 4)
        return cls(uuid=stable_id(source_video, start, end), source_video=source_video,
                   span=(start, end))

    @property
    def duration(self) -> float:
        return self.span[1] - self.span[0]


@dataclass
class Video:
    """A video file, its metadata, its current clips and the clips filtered out."""

    input_path: str
    metadata: VideoMetadata = field(default_factory=VideoMetadata)
    clips: list[Clip] = field(default_factory=list)
    filtered_clips: list[Clip] = field(default_factory=list)

    @property
    def nbytes(self) -> int:
        """Bytes of the decoded frames and encoded clips held (what executors bound queues
        by; the source file is not counted)."""
        return sum(int(getattr(c.frames, "nbytes", 0) or 0) + len(c.encoded_data or b"")
                   for c in (*self.clips, *self.filtered_clips))

    def filter_clips(self, keep: list[bool], by: str) -> None:
        """Keep the clips where ``keep`` is true; move the others to ``filtered_clips``."""
        kept: list[Clip] = []
        for clip, k in zip(self.clips, keep, strict=True):
            if k:
                kept.append(clip)
            else:
                clip.filtered_by = by
                clip.frames = None
                self.filtered_clips.append(clip)
        self.clips = kept


@dataclass
class VideoTask(Task[Video]):
    """A task holding one :class:`Video`; ``num_items`` is its number of clips."""

    @property
    def num_items(self) -> int:
        return len(self.data.clips)

    def with_clips(self, clips: list[Clip]) -> VideoTask:
        """A new task (same id and metadata) holding a copy of this video with ``clips``.

        Splitters hand on this copy rather than changing their input: a reader's worker may
        still hold its input (the windows of a long video, until all are queued), and the
        frames later stages attach to the clips must not be kept alive through it."""
        video = replace(self.data, clips=list(clips),
                        filtered_clips=list(self.data.filtered_clips))
        return self.derive(video)  # type: ignore[return-value]

    def validate(self) -> bool:
        return isinstance(self.data, Video) and bool(self.data.input_path)

    def dump_data(self, files: Any) -> dict[str, Any]:
        """The video's metadata and clips as JSON; each clip's encoded MP4 bytes as its own
        file (``{stem}.clip-{uuid}.mp4``), frames and embeddings as ``.npy`` (see
        :mod:`curator.task_files`). The source video stays where ``input_path`` says."""
        from curator.task_files import dump_value

        def clip_state(clip: Clip) -> dict[str, Any]:
            state: dict[str, Any] = {}
            for f in fields(Clip):
                value = getattr(clip, f.name)
                if f.name == "encoded_data" and value is not None:
                    state[f.name] = files.put(f"clip-{clip.uuid}.mp4", bytes(value))
                else:
                    state[f.name] = dump_value(value, files)
            return state

        video = self.data
        return {"input_path": video.input_path,
                "metadata": dump_value(asdict(video.metadata), files),
                "clips": [clip_state(c) for c in video.clips],
                "filtered_clips": [clip_state(c) for c in video.filtered_clips]}

    @classmethod
    def load_data(cls, state: Any, files: Any) -> Video:
        from curator.task_files import load_value

        def clip(rec: dict[str, Any]) -> Clip:
            kwargs = {k: load_value(v, files) for k, v in rec.items() if k != "encoded_data"}
            if rec.get("encoded_data") is not None:
                kwargs["encoded_data"] = files.read(rec["encoded_data"])
            kwargs["span"] = tuple(kwargs.get("span") or (0.0, 0.0))
            return Clip(**kwargs)

        return Video(input_path=state["input_path"],
                     metadata=VideoMetadata(**load_value(state.get("metadata") or {}, files)),
                     clips=[clip(c) for c in state.get("clips") or []],
                     filtered_clips=[clip(c) for c in state.get("filtered_clips") or []])
