"""JSONL manifest reading and writing (NeMo convention: one JSON object per line)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from curator import FileGroupTask, ProcessingStage, Task, stable_id
from curator.errors import ConfigError
from curator.io import atomic_write, expand_paths, get_fs, join_path, register_storage_options
from curator.output_dir import DEFAULT_MODE, ManagedOutput, SaveMode, check_mode
from curator.stages.base import StageIO

from curator_audio.stages.base import public_record
from curator_audio.tasks import AudioBatch

__all__ = ["ManifestReader", "ManifestWriterStage"]


def _resolve(audio_path: str, manifest_path: str) -> str:
    if "://" in audio_path or audio_path.startswith("/"):
        return audio_path
    base = manifest_path.rsplit("/", 1)[0] if "/" in manifest_path else "."
    return join_path(base, audio_path)


@dataclass
class ManifestReader(ProcessingStage[Task, AudioBatch]):
    """Reads JSONL manifests into :class:`AudioBatch` tasks (a source stage).

    Each manifest is cut into tasks of ``records_per_task`` valid records; task ids derive from the
    manifest path and the chunk number, so they are the same on every run. A line that is not a
    JSON object, or lacks ``filepath_key``, goes to the rejected sink with its file and line.

    Args:
        file_paths: manifest file(s), directory or glob (any fsspec path).
        records_per_task: records per task.
        filepath_key: the audio path field (NeMo: ``audio_filepath``).
        resolve_relative_paths: make relative audio paths relative to the manifest's folder.
        manifest_path: NeMo's name for ``file_paths`` (either may be given, not both).
        file_extensions: what a directory or glob is filtered by (NeMo's default).
        storage_options: fsspec options for remote manifests (S3 credentials, endpoint).
    """

    file_paths: str | list[str] = ""
    path_params: ClassVar[tuple[str, ...]] = ("file_paths",)  # resolved on the driver
    records_per_task: int = 1000
    filepath_key: str = "audio_filepath"
    resolve_relative_paths: bool = True
    name: str = "ManifestReader"
    manifest_path: str | list[str] = ""
    file_extensions: list[str] = field(default_factory=lambda: [".jsonl", ".json"])
    storage_options: dict[str, Any] | None = None
    modality: ClassVar[str] = "audio"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        if self.manifest_path:
            if self.file_paths and self.file_paths != self.manifest_path:
                raise ConfigError(f"{self.name}: give file_paths or NeMo's manifest_path, not "
                                  f"both ({self.file_paths!r} vs {self.manifest_path!r})")
            self.file_paths = self.manifest_path
        if self.storage_options:
            register_storage_options(self.file_paths, self.storage_options)
        if not self.file_paths:
            raise ConfigError(f"{self.name}: file_paths is required (a manifest path, directory "
                              f"or glob)")
        if not isinstance(self.records_per_task, int) or self.records_per_task < 1:
            raise ConfigError(f"{self.name}: records_per_task must be an int >= 1, "
                              f"got {self.records_per_task!r}")

    @property
    def is_source(self) -> bool:
        return True

    def outputs(self) -> StageIO:
        return ["data"], ["*"]

    def process(self, task: Task) -> list[AudioBatch]:
        return [batch for chunk in self.process_stream(task) for batch in chunk]

    def process_stream(self, task: Task) -> Iterator[list[AudioBatch]]:
        """The batches one at a time as the manifests are read, so a long manifest is never
        held whole (executors hand each on before the next is read)."""
        for path in expand_paths(self.file_paths, extensions=self.file_extensions):
            for batch in self._read(path):
                yield [batch]

    def _read(self, path: str) -> Iterator[AudioBatch]:
        fs, p = get_fs(path)
        recs: list[dict[str, Any]] = []
        index = 0
        with fs.open(p, "rt", encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                if len(recs) >= self.records_per_task:
                    yield self._batch(path, index, recs)
                    recs, index = [], index + 1
                record = self._parse(line, path, lineno)
                if record is not None:
                    recs.append(record)
        if recs:
            yield self._batch(path, index, recs)

    def _batch(self, path: str, index: int, recs: list[dict[str, Any]]) -> AudioBatch:
        return AudioBatch(task_id=f"manifest_{stable_id(path)}_{index}", dataset_name=path,
                          data=recs, metadata={"source_files": [path]},
                          filepath_key=self.filepath_key)

    def _parse(self, line: str, path: str, lineno: int) -> dict[str, Any] | None:
        where = f"{path}:{lineno}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            self.reject(None, "malformed_manifest_line", record={"line": line[:1000],
                        "lineno": lineno}, error=exc, source=where)
            return None
        if not isinstance(record, dict) or self.filepath_key not in record:
            self.reject(None, "missing_audio_filepath", record={"line": line[:1000],
                        "lineno": lineno}, error=f"no {self.filepath_key!r} field", source=where)
            return None
        if self.resolve_relative_paths:
            record[self.filepath_key] = _resolve(str(record[self.filepath_key]), path)
        return record


@dataclass
class ManifestWriterStage(ManagedOutput, ProcessingStage[AudioBatch, FileGroupTask]):
    """Writes each :class:`AudioBatch` to ``{path}/{task_id}.jsonl`` atomically.

    Decoded waveforms are left out; every other field is written. A re-run overwrites the same
    files. Returns a :class:`curator.FileGroupTask` listing the file written.

    Args:
        path: output directory (any fsspec path).
        drop_fields: extra fields to leave out of the manifest.
        mode: NeMo Curator's save modes: ``"ignore"`` (default: write into the directory,
            replacing same-named files), ``"overwrite"`` (first delete the files earlier
            Curator runs wrote there; other files stay), ``"append"`` (keep earlier files) or
            ``"error"`` (refuse a directory holding other files); see
            :mod:`curator.output_dir`.
    """

    path: str = ""
    drop_fields: list[str] = field(default_factory=list)
    mode: SaveMode = DEFAULT_MODE
    name: str = "ManifestWriterStage"
    modality: ClassVar[str] = "audio"
    kind: ClassVar[str] = "writer"

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError(f"{self.name}: path (output directory) is required")
        check_mode(self.mode, self.name)

    def inputs(self) -> StageIO:
        return ["data"], []

    def process(self, task: AudioBatch) -> FileGroupTask:
        target = self.output_file(f"{task.task_id}.jsonl")
        drop = set(self.drop_fields)
        with atomic_write(target, "wt", encoding="utf-8") as fh:
            for record in task.data:
                rec = {k: v for k, v in public_record(record).items() if k not in drop}
                fh.write(json.dumps(rec, ensure_ascii=False, default=_json_default) + "\n")
        return FileGroupTask(task_id=task.task_id, dataset_name=task.dataset_name, data=[target],
                             metadata={**task.metadata, "num_records": len(task.data)})


def _json_default(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)
