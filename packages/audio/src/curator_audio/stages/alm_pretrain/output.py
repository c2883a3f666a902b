"""Snippet extraction and the pretraining outputs: audio tar shards, manifest and metrics
shards, each written whole per task (deterministic names: a re-run replaces, never appends)."""

from __future__ import annotations

import io
import json
import tarfile
from dataclasses import dataclass
from typing import Any, ClassVar

from curator import ProcessingStage
from curator.errors import ConfigError
from curator.io import atomic_write
from curator.stages.base import StageIO

from curator_audio.decode import AudioDecodeError, load_audio
from curator_audio.stages.alm_pretrain.planning import relativize_segments
from curator_audio.stages.alm_pretrain.utils import (
    PLAN_DATA_KEY,
    PRETRAIN_META_KEY,
    make_snippet_id,
    segment_text,
)
from curator_audio.stages.base import public_record
from curator_audio.tasks import AudioBatch

__all__ = ["SnippetExtractionStage", "SnippetManifestWriterStage",
           "PretrainMetricsAggregatorStage", "shard_path"]

_SUBTYPES = {"wav": "PCM_16", "flac": "PCM_16", "ogg": "VORBIS"}


def shard_path(output_path: str, task_id: str, ext: str) -> str:
    """``<output_path>.shard-<task_id>.<ext>``: one task's part of an output."""
    return f"{output_path}.shard-{task_id}.{ext}"


def _is_stub(record: dict[str, Any]) -> bool:
    return record.get("snippet_id") is None


class _PretrainStage(ProcessingStage[AudioBatch, AudioBatch]):
    modality: ClassVar[str] = "audio"


@dataclass
class SnippetExtractionStage(_PretrainStage):
    """Cut each record's planned snippets (``_snippet_plan``) out of its source audio, mix to
    mono, resample to ``target_sample_rate`` and store each as ``<snippet_id>.<output_format>``
    in the task's tar shard ``<output_audio_tar_path>.shard-<task_id>.tar`` (written whole,
    replaced on a re-run). One output record per snippet: the source row's fields (less
    ``alignment`` and the plan), ``snippet_id``, the tar member name as the audio path,
    ``duration``, ``segments`` relative to the snippet, ``text`` joined from them. A record that
    planned no snippet becomes one stub (``snippet_id`` None) so the metrics still count it.
    ``dry_run=True`` reads and writes no audio (planned durations). A source whose audio cannot
    be read goes to the rejected sink (``undecodable_audio``); NeMo emits a stub."""

    output_dir: str = ""
    output_audio_tar_path: str = ""
    target_sample_rate: int = 16000
    output_format: str = "flac"
    audio_filepath_key: str = "audio_filepath"
    dry_run: bool = False
    name: str = "SnippetExtraction"
    batch_size: int = 1

    def __post_init__(self) -> None:
        if self.output_format not in _SUBTYPES:
            raise ConfigError(f"output_format must be one of {sorted(_SUBTYPES)}, got "
                              f"{self.output_format!r}")
        if self.target_sample_rate <= 0:
            raise ConfigError("target_sample_rate must be > 0")
        if not self.output_audio_tar_path and not self.dry_run:
            raise ConfigError(f"{self.name}: output_audio_tar_path is required")

    def inputs(self) -> StageIO:
        return ["data"], [self.audio_filepath_key, PLAN_DATA_KEY]

    def outputs(self) -> StageIO:
        return ["data"], [self.audio_filepath_key, "snippet_id", "duration", "segments"]

    def process(self, task: AudioBatch) -> AudioBatch:
        out: list[dict[str, Any]] = []
        members: list[tuple[str, bytes]] = []
        for record in task.data:
            plan = record.get(PLAN_DATA_KEY) or []
            original_id = str(record.get("id") or task.task_id)
            snippets: list[dict[str, Any]] = []
            try:
                for snippet in plan:
                    snippets.append(self._one(record, snippet, original_id, members))
            except (AudioDecodeError, FileNotFoundError, OSError) as exc:
                self.reject(task, "undecodable_audio", record=public_record(record), error=exc,
                            source=str(record.get(self.audio_filepath_key, "")))
                continue
            out.extend(snippets or [self._stub(record)])
        if members:
            with atomic_write(shard_path(self.output_audio_tar_path, task.task_id, "tar")) as fh:
                with tarfile.open(fileobj=fh, mode="w") as tar:
                    for name, payload in members:
                        info = tarfile.TarInfo(name=name)
                        info.size = len(payload)
                        tar.addfile(info, io.BytesIO(payload))
        return task.derive(out)

    def _one(self, record: dict[str, Any], snippet: dict[str, Any], original_id: str,
             members: list[tuple[str, bytes]]) -> dict[str, Any]:
        start, end = float(snippet["start"]), float(snippet["end"])
        snippet_id = make_snippet_id(original_id, start, end)
        member = f"{snippet_id}.{self.output_format}"
        duration = end - start
        if not self.dry_run:
            import soundfile as sf

            wave, _ = load_audio(str(record[self.audio_filepath_key]), offset=start,
                                 duration=end - start, target_sr=self.target_sample_rate)
            buf = io.BytesIO()
            sf.write(buf, wave, self.target_sample_rate, format=self.output_format.upper(),
                     subtype=_SUBTYPES[self.output_format])
            members.append((member, buf.getvalue()))
            duration = len(wave) / float(self.target_sample_rate)
        new = {k: v for k, v in record.items()
               if k not in ("alignment", PLAN_DATA_KEY, "audio_size", "resampled_audio_filepath")}
        new.update(snippet_id=snippet_id, duration=duration)
        new[self.audio_filepath_key] = member
        for key in ("actual_duration", "proposed_duration"):
            if key in new:
                new[key] = duration
        if "audio_sample_rate" in new:
            new["audio_sample_rate"] = self.target_sample_rate
        if "audio_num_channels" in new:
            new["audio_num_channels"] = 1
        if "swift_audio_filepath" in new:
            new["swift_audio_filepath"] = ""
        new["segments"] = relativize_segments(snippet["segments"], start, end)
        if "text" in new:
            new["text"] = " ".join(segment_text(s) for s in snippet["segments"]).strip()
        if PRETRAIN_META_KEY in record:
            new[PRETRAIN_META_KEY] = json.loads(json.dumps(record[PRETRAIN_META_KEY]))
        return new

    def _stub(self, record: dict[str, Any]) -> dict[str, Any]:
        stub = {"id": record.get("id"), "snippet_id": None, self.audio_filepath_key: None,
                "duration": 0.0, "segments": []}
        if PRETRAIN_META_KEY in record:
            stub[PRETRAIN_META_KEY] = record[PRETRAIN_META_KEY]
        return stub


@dataclass
class SnippetManifestWriterStage(_PretrainStage):
    """Write each task's snippet records (stubs left out, and the ``_pretrain_long_form``
    counters) as JSONL to ``<output_path>.shard-<task_id>.jsonl``, whole, replaced on a re-run;
    the task passes on unchanged for :class:`PretrainMetricsAggregatorStage`."""

    output_path: str = ""
    name: str = "SnippetManifestWriter"
    batch_size: int = 1

    def __post_init__(self) -> None:
        if not self.output_path:
            raise ConfigError(f"{self.name}: output_path is required")

    def process(self, task: AudioBatch) -> AudioBatch:
        rows = [{k: v for k, v in public_record(r).items() if k != PRETRAIN_META_KEY}
                for r in task.data if not _is_stub(r)]
        with atomic_write(shard_path(self.output_path, task.task_id, "jsonl"), "w",
                          encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        return task


@dataclass
class PretrainMetricsAggregatorStage(_PretrainStage):
    """Write one metrics line per record of each task to ``<output_path>.shard-<task_id>.jsonl``
    (whole, replaced on a re-run), NeMo's schema: ``id``, ``in_segments``,
    ``in_duration_sec``, ``dropped`` (``empty``, ``overlap``, ``too_long``, ``too_short``,
    ``no_text``, ``repetition``), ``is_stub``, ``out_segments``, ``out_duration_sec``, and on
    the first line of an ``id`` in the task ``filtered_texts``."""

    output_path: str = ""
    name: str = "PretrainMetricsAggregator"
    batch_size: int = 1

    def __post_init__(self) -> None:
        if not self.output_path:
            raise ConfigError(f"{self.name}: output_path is required")

    def process(self, task: AudioBatch) -> AudioBatch:
        seen: set[str] = set()
        lines = []
        for record in task.data:
            original_id = str(record.get("id") or "")
            if not original_id:
                continue
            meta = record.get(PRETRAIN_META_KEY) or {}
            stub = _is_stub(record)
            line: dict[str, Any] = {
                "id": original_id,
                "in_segments": int(meta.get("original_seg_count", 0)),
                "in_duration_sec": float(meta.get("original_seg_duration", 0.0)),
                "dropped": {k: int(meta.get(f"dropped_{k}", 0)) for k in
                            ("empty", "overlap", "too_long", "too_short", "no_text",
                             "repetition")},
                "is_stub": stub,
                "out_segments": 0 if stub else len(record.get("segments") or []),
                "out_duration_sec": 0.0 if stub else float(record.get("duration", 0.0)),
            }
            if original_id not in seen:
                seen.add(original_id)
                line["filtered_texts"] = list(meta.get("filtered_repetition_texts") or [])
            lines.append(line)
        with atomic_write(shard_path(self.output_path, task.task_id, "jsonl"), "w",
                          encoding="utf-8") as fh:
            for line in lines:
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        return task
