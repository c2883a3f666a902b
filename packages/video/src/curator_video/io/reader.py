"""VideoReaderStage: list video files, then read each one's metadata."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import ClassVar

from curator import (
    CompositeStage,
    EmptyTask,
    FileGroupTask,
    ProcessingStage,
    Resources,
    stable_id,
)
from curator.errors import ConfigError
from curator.stages.file_partitioning import FilePartitioningStage

from curator_video._config import coerce_numbers
from curator_video.decode import DEFAULT_WINDOW_S
from curator_video.tasks import Video, VideoTask

__all__ = ["VideoReaderStage", "VideoReader", "VideoListStage", "VideoMetadataStage",
           "VIDEO_EXTENSIONS"]

_log = logging.getLogger(__name__)

VIDEO_EXTENSIONS = (".mp4", ".mov", ".mkv", ".avi", ".webm", ".m4v", ".mpg", ".mpeg", ".ts")


@dataclass(init=False)
class VideoListStage(FilePartitioningStage):
    """Lists the video files under ``input_video_path`` (a directory, glob or fsspec URL), one
    task per video with a deterministic id from its path.

    Args:
        input_video_path: directory, glob, URL or list of them.
        video_limit: keep only the first N videos (sorted by path); ``None`` for all.
        extensions: file name endings counted as videos.
    """

    input_video_path: str | list[str] = ""
    video_limit: int | None = None
    extensions: tuple[str, ...] = VIDEO_EXTENSIONS
    name: str = "VideoListStage"
    modality: ClassVar[str] = "video"

    def __init__(self, input_video_path: str | list[str] = "", video_limit: int | None = None,
                 extensions: tuple[str, ...] = VIDEO_EXTENSIONS,
                 name: str = "VideoListStage") -> None:
        self.input_video_path = input_video_path
        self.video_limit = video_limit
        self.extensions = tuple(extensions)
        self.name = name
        self.blocksize = None
        self.dataset_name = ""
        self.__post_init__()

    def __post_init__(self) -> None:
        if not self.input_video_path:
            raise ConfigError(f"{self.name}: input_video_path is required (a directory, glob or URL)")
        if self.video_limit is not None and self.video_limit < 1:
            raise ConfigError(f"{self.name}: video_limit must be >= 1 or None, got {self.video_limit}")
        self.file_paths = self.input_video_path
        self.file_extensions = list(self.extensions)
        self.files_per_partition = 1
        super().__post_init__()

    def process(self, task: EmptyTask) -> list[FileGroupTask]:
        tasks = super().process(task)
        tasks = [t for t in tasks if t.data[0].lower().endswith(self.extensions)]
        return tasks if self.video_limit is None else tasks[: self.video_limit]

    def task_id_for(self, group: list[str]) -> str:
        return f"video_{stable_id(group[0])}"

    def dataset_name_for(self, group: list[str]) -> str:
        return "video"


@dataclass
class VideoMetadataStage(ProcessingStage[FileGroupTask, VideoTask]):
    """Reads each listed video's metadata (duration, fps, resolution, codec) with PyAV; a
    corrupt or unsupported file goes to the rejected sink with its error.

    A video longer than ``window_s`` seconds becomes one task per window of ``window_s``
    seconds (``metadata["window"] = [start_s, end_s]``, ids ``{video id}_w{index:05d}``), so
    the stages after it decode and hold one window at a time; ``None`` keeps every video
    whole. Windows depend on the file alone.

    It asks for half a core (it reads headers and one frame), so executors never fuse it with
    the stages after it: a video's windows then reach them one by one through the bounded
    queue between the two, instead of all being split, decoded and held by one worker."""

    window_s: float | None = DEFAULT_WINDOW_S
    name: str = "VideoMetadataStage"
    resources: Resources = field(default_factory=lambda: Resources(cpus=0.5))
    modality: ClassVar[str] = "video"

    def __post_init__(self) -> None:
        coerce_numbers(self, "window_s")
        if self.window_s is not None and self.window_s <= 0:
            raise ConfigError(f"{self.name}: window_s must be > 0 seconds or None (whole "
                              f"videos), got {self.window_s}")

    def inputs(self):
        return ["data"], []

    def outputs(self):
        return ["data"], ["metadata"]

    def process(self, task: FileGroupTask) -> list[VideoTask]:
        import av  # noqa: F401 - a missing library fails the task, it is not a bad file

        from curator_video.decode import read_metadata, video_windows

        out = []
        for i, path in enumerate(task.data):
            try:
                meta = read_metadata(path)
            except Exception as exc:
                self.reject(task, "unreadable video", record={"path": path}, error=exc,
                            source=path)
                continue
            suffix = None if len(task.data) == 1 else i
            video_task = task.derive(Video(input_path=path, metadata=meta), suffix=suffix,
                                     cls=VideoTask)
            windows = video_windows(meta.duration, self.window_s)
            if not windows:
                out.append(video_task)
            for k, window in enumerate(windows):
                part = video_task.derive(Video(input_path=path, metadata=meta),
                                         suffix=f"w{k:05d}")
                part.metadata["window"] = list(window)
                out.append(part)
        return out


@dataclass
class VideoReaderStage(CompositeStage[EmptyTask, VideoTask]):
    """Reads videos: lists the files under ``input_video_path`` (directory, glob or fsspec URL)
    and reads each one's metadata; corrupt or unsupported files are rejected with their error.
    A video longer than ``window_s`` is handed on as one task per window of ``window_s``
    seconds, so memory does not grow with the video's length; the splitters give the same
    clips as from the whole video (a shot crossing a window's edge is one clip).

    Args:
        input_video_path: directory, glob, URL or list of them.
        video_limit: keep only the first N videos (sorted by path); ``None`` for all.
        extensions: file name endings counted as videos.
        window_s: seconds per task of a longer video (``None``: each video is one task).
    """

    input_video_path: str | list[str] = ""
    video_limit: int | None = None
    extensions: tuple[str, ...] = field(default=VIDEO_EXTENSIONS)
    window_s: float | None = DEFAULT_WINDOW_S
    name: str = "VideoReaderStage"
    modality: ClassVar[str] = "video"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        self.extensions = tuple(self.extensions)
        self.decompose()  # validates the parameters now, before any data is read

    @property
    def is_source(self) -> bool:
        return True

    def decompose(self) -> list[ProcessingStage]:
        return [VideoListStage(self.input_video_path, self.video_limit, self.extensions),
                VideoMetadataStage(window_s=self.window_s)]


@dataclass
class VideoReader(CompositeStage[EmptyTask, VideoTask]):
    """NeMo Curator's composite video reader, ``VideoReader(input_video_path, video_limit,
    verbose)``: the same stages as :class:`VideoReaderStage` (list the videos, read each one's
    metadata, windows of long videos), with NeMo's parameter order.

    Args:
        input_video_path: directory, glob, URL or list of them.
        video_limit: keep only the first N videos (sorted by path); ``None`` for all.
        verbose: log the stages the reader runs.
        extensions: file name endings counted as videos.
        window_s: seconds per task of a longer video (``None``: each video is one task).
    """

    input_video_path: str | list[str] = ""
    video_limit: int | None = None
    verbose: bool = False
    extensions: tuple[str, ...] = field(default=VIDEO_EXTENSIONS)
    window_s: float | None = DEFAULT_WINDOW_S
    name: str = "VideoReader"
    modality: ClassVar[str] = "video"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        self.extensions = tuple(self.extensions)
        self.decompose()  # validates the parameters now, before any data is read

    @property
    def is_source(self) -> bool:
        return True

    def decompose(self) -> list[ProcessingStage]:
        stages = VideoReaderStage(self.input_video_path, self.video_limit, self.extensions,
                                  self.window_s).decompose()
        if self.verbose:
            _log.info("%s: %s over %r (video_limit=%s)", self.name,
                      " -> ".join(s.name for s in stages), self.input_video_path,
                      self.video_limit)
        return stages
