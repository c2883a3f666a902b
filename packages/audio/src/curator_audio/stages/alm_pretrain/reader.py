"""ReadLongFormManifestStage: the pretraining pipeline's source."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from curator import ProcessingStage, Task, stable_id
from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.stages.alm_pretrain.utils import AUDIO_PATH_RESOLUTION_MODES, resolve_audio_path
from curator_audio.tasks import AudioBatch

__all__ = ["ReadLongFormManifestStage"]


@dataclass
class ReadLongFormManifestStage(ProcessingStage[Task, AudioBatch]):
    """Read a JSONL manifest of long-form recordings (each row: ``id``, the audio path,
    diarized ``segments``) into :class:`AudioBatch` tasks of ``records_per_task`` rows, the
    audio path re-anchored to ``audio_dir`` by ``audio_path_resolution`` (``"basename"``,
    ``"relative"``, ``"as_is"``).

    Every row needs a non-empty ``id`` unique in the manifest (snippet ids embed it). A line
    that is not JSON, has no or an empty ``id``, repeats an ``id``, or lacks the audio path goes
    to the rejected sink (``malformed_manifest_line``, ``missing_id``, ``duplicate_id``,
    ``missing_audio_filepath``); NeMo logs and skips them. In ``"basename"`` mode two rows whose
    paths share a file name would read the same audio: that is a ``ConfigError``, as in NeMo.
    Rows are read as they are needed (streaming); task ids come from the manifest path.
    """

    input_manifest: str = ""
    audio_dir: str = ""
    audio_filepath_key: str = "audio_filepath"
    audio_path_resolution: str = "basename"
    dataset_name: str = "long_form_audio"
    name: str = "ReadLongFormManifest"
    batch_size: int = 1
    records_per_task: int = 100
    modality: ClassVar[str] = "audio"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        if not self.input_manifest:
            raise ConfigError(f"{self.name}: input_manifest is required (a JSONL path)")
        if self.audio_path_resolution not in AUDIO_PATH_RESOLUTION_MODES:
            raise ConfigError(f"{self.name}: unknown audio_path_resolution "
                              f"{self.audio_path_resolution!r}; expected one of "
                              f"{AUDIO_PATH_RESOLUTION_MODES}")

    @property
    def is_source(self) -> bool:
        return True

    def num_workers(self) -> int | None:
        return 1

    def outputs(self) -> StageIO:
        return ["data"], [self.audio_filepath_key, "id", "segments"]

    def process(self, task: Task) -> list[AudioBatch]:
        return [b for chunk in self.process_stream(task) for b in chunk]

    def process_stream(self, task: Task) -> Iterator[list[AudioBatch]]:
        """Tasks as the manifest is read."""
        if not os.path.isfile(self.input_manifest):
            raise FileNotFoundError(f"{self.name}: manifest not found: {self.input_manifest}")
        chunk: list[dict[str, Any]] = []
        index = 0
        for record in self._records():
            chunk.append(record)
            if len(chunk) >= self.records_per_task:
                yield [self._batch(index, chunk)]
                chunk, index = [], index + 1
        if chunk:
            yield [self._batch(index, chunk)]

    def _batch(self, index: int, records: list[dict[str, Any]]) -> AudioBatch:
        return AudioBatch(task_id=f"longform_{stable_id(self.input_manifest)}_{index}",
                          dataset_name=self.dataset_name, data=records,
                          metadata={"source_files": [self.input_manifest]},
                          filepath_key=self.audio_filepath_key)

    def _records(self) -> Iterator[dict[str, Any]]:
        seen_ids: set[str] = set()
        seen_basenames: dict[str, str] = {}
        with open(self.input_manifest, encoding="utf-8") as fh:
            for lineno, raw in enumerate(fh, 1):
                line = raw.strip()
                if not line:
                    continue
                where = f"{self.input_manifest}:{lineno}"
                bad = {"line": line[:1000], "lineno": lineno}
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError as exc:
                    self.reject(None, "malformed_manifest_line", record=bad, error=exc,
                                source=where)
                    continue
                if not isinstance(entry, dict):
                    self.reject(None, "malformed_manifest_line", record=bad,
                                error="not a JSON object", source=where)
                    continue
                row_id = entry.get("id")
                if row_id is None or not str(row_id).strip():
                    self.reject(None, "missing_id", record=entry, error="missing or empty 'id'",
                                source=where)
                    continue
                row_id = entry["id"] = str(row_id)
                if row_id in seen_ids:
                    self.reject(None, "duplicate_id", record=entry,
                                error=f"id {row_id!r} already read", source=where)
                    continue
                path = entry.get(self.audio_filepath_key)
                if not path:
                    self.reject(None, "missing_audio_filepath", record=entry,
                                error=f"no {self.audio_filepath_key!r}", source=where)
                    continue
                seen_ids.add(row_id)
                if self.audio_path_resolution == "basename":
                    base = os.path.basename(str(path))
                    if base in seen_basenames:
                        raise ConfigError(
                            f"{self.name}: {where}: audio file name {base!r} of id {row_id!r} "
                            f"was already used by id {seen_basenames[base]!r}; both would read "
                            f"{os.path.join(self.audio_dir, base)}. Use "
                            f"audio_path_resolution='relative' (keeps sub-folders) or 'as_is'")
                    seen_basenames[base] = row_id
                entry[self.audio_filepath_key] = resolve_audio_path(
                    self.audio_dir, str(path), self.audio_path_resolution)
                yield entry
