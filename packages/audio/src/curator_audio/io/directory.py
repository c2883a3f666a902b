"""AudioDirectoryReader: builds a manifest from a directory of audio files."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from curator import ProcessingStage, Task, stable_id
from curator.errors import ConfigError
from curator.io import expand_paths
from curator.stages.base import StageIO

from curator_audio.decode import SUPPORTED_EXTENSIONS, AudioDecodeError, audio_info
from curator_audio.tasks import AudioBatch

__all__ = ["AudioDirectoryReader"]


@dataclass
class AudioDirectoryReader(ProcessingStage[Task, AudioBatch]):
    """Lists audio files under ``path`` and makes manifest records of them (a source stage).

    Each record has ``audio_filepath``, ``duration`` (from the file header) and ``text`` (the
    contents of a sibling ``.txt`` file when ``read_text`` and one exists, else ``""``). Files are
    sorted and cut into tasks of ``files_per_task`` with deterministic ids; a file whose header
    cannot be read goes to the rejected sink.

    Args:
        path: directory, glob or list of them (any fsspec path).
        extensions: audio file suffixes to include.
        files_per_task: files per task.
        read_text: read transcripts from ``<name>.txt`` beside each audio file.
    """

    path: str | list[str] = ""
    path_params: ClassVar[tuple[str, ...]] = ("path",)  # resolved on the driver
    extensions: list[str] = field(default_factory=lambda: list(SUPPORTED_EXTENSIONS))
    files_per_task: int = 100
    read_text: bool = True
    name: str = "AudioDirectoryReader"
    modality: ClassVar[str] = "audio"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError(f"{self.name}: path (a directory of audio files) is required")
        if not isinstance(self.files_per_task, int) or self.files_per_task < 1:
            raise ConfigError(f"{self.name}: files_per_task must be an int >= 1")

    @property
    def is_source(self) -> bool:
        return True

    def outputs(self) -> StageIO:
        return ["data"], ["audio_filepath", "duration", "text"]

    def process(self, task: Task) -> list[AudioBatch]:
        return [batch for chunk in self.process_stream(task) for batch in chunk]

    def process_stream(self, task: Task) -> Iterator[list[AudioBatch]]:
        """The batches one at a time: a file's header is read only when the executor asks for
        its batch, so a huge directory is never held as records."""
        files = expand_paths(self.path, extensions=[e.lower() for e in self.extensions]
                             + [e.upper() for e in self.extensions])
        for i in range(0, len(files), self.files_per_task):
            chunk = files[i:i + self.files_per_task]
            records = [r for r in (self._record(f) for f in chunk) if r is not None]
            if records:
                yield [AudioBatch(task_id=f"audiodir_{stable_id(*chunk)}", dataset_name="audio",
                                  data=records, metadata={"source_files": chunk})]

    def _record(self, path: str) -> dict | None:
        try:
            duration = audio_info(path)["duration"]
        except AudioDecodeError as exc:
            self.reject(None, "unreadable_audio", record={"audio_filepath": path}, error=exc,
                        source=path)
            return None
        return {"audio_filepath": path, "duration": duration, "text": self._text(path)}

    def _text(self, path: str) -> str:
        if not self.read_text:
            return ""
        import fsspec

        txt = path.rsplit(".", 1)[0] + ".txt"
        fs, _, (p,) = fsspec.get_fs_token_paths(txt)
        if not fs.exists(p):
            return ""
        with fs.open(p, "rt", encoding="utf-8") as fh:
            return fh.read().strip()
