"""SegmentExtractionStage: write the segments a pipeline kept as audio files."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

from curator import Resources
from curator.errors import ConfigError
from curator.io import atomic_write, get_fs, join_path
from curator.stages.base import StageIO

from curator_audio.decode import AudioDecodeError, open_audio
from curator_audio.stages.base import public_record
from curator_audio.stages.common import AudioInputError
from curator_audio.stages.preprocessing import SOUNDFILE_FORMATS, _RejectingStage
from curator_audio.tasks import AudioBatch

__all__ = ["SegmentExtractionStage"]


@dataclass
class SegmentExtractionStage(_RejectingStage):
    """Reads each row's span (``original_file``, ``original_start_ms``, ``original_end_ms``, as
    :class:`TimestampMapperStage` writes them) from its source at the source's own rate and
    channels and writes it to ``output_dir`` atomically; the path goes into ``extracted_path``.

    File names are ``{source stem}_segment_{start_ms}-{end_ms}.{output_format}`` (with
    ``_speaker_{n}`` after the stem when the row has a ``speaker_id``): they come from the span,
    so a re-run or another worker writes the same name, never a second copy (NeMo numbers
    segments in the order one worker meets them). A row without a span, or whose source cannot be
    read, is rejected with its reason.

    Args:
        output_dir: directory for the segment files.
        output_format: ``wav``, ``flac`` or ``ogg``.
    """

    output_dir: str = ""
    output_format: str = "wav"
    name: str = "SegmentExtraction"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))
    reject_reason = "extraction_error"

    def __post_init__(self) -> None:
        if not self.output_dir:
            raise ConfigError(f"{self.name}: output_dir is required")
        if self.output_format not in SOUNDFILE_FORMATS:
            raise ConfigError(f"{self.name}: output_format must be one of "
                              f"{sorted(SOUNDFILE_FORMATS)}, got {self.output_format!r}")

    def inputs(self) -> StageIO:
        return ["data"], ["original_file"]

    def outputs(self) -> StageIO:
        return ["data"], ["extracted_path"]

    def process(self, task: AudioBatch) -> AudioBatch:
        """Rows of one source are read from one open file (each span by a seek; only the span's
        frames are read, so a long source is never held whole)."""
        by_source: dict[str, list[int]] = {}
        for i, row in enumerate(task.data):
            by_source.setdefault(str(row.get("original_file", "")), []).append(i)
        results: dict[int, dict[str, Any]] = {}
        for source, rows in by_source.items():
            with contextlib.ExitStack() as stack:
                try:
                    opened: Any = _open_source(source, stack) if source else None
                except AudioInputError as exc:
                    opened = exc
                for i in rows:
                    row = task.data[i]
                    try:
                        if isinstance(opened, AudioInputError):
                            raise opened
                        results[i] = self._write(row, opened)
                    except AudioInputError as exc:
                        self.reject(task, exc.reason, record=public_record(row), error=str(exc),
                                    source=source)
                    except Exception as exc:
                        self.reject(task, self.reject_reason, record=public_record(row),
                                    error=exc, source=source)
        return task.derive([results[i] for i in sorted(results)])

    def process_record(self, row: dict[str, Any]) -> dict[str, Any]:
        source = row.get("original_file")
        with contextlib.ExitStack() as stack:
            return self._write(row, _open_source(str(source), stack) if source else None)

    def _write(self, row: dict[str, Any], opened: tuple[Any, int] | None) -> dict[str, Any]:
        import soundfile as sf

        source = row.get("original_file")
        start, end = row.get("original_start_ms"), row.get("original_end_ms")
        if not source or opened is None or start is None or end is None \
                or int(end) <= int(start):
            raise AudioInputError("no_timing", f"need original_file and original_start_ms < "
                                  f"original_end_ms, got {source!r} [{start}, {end})")
        start, end = int(start), int(end)
        fh, sr = opened
        first, last = start * sr // 1000, end * sr // 1000
        if last > fh.frames:
            raise AudioInputError("span_outside_audio", f"{source}: [{start}, {end}) ms ends "
                                  f"after the audio ({fh.frames / sr:.3f} s)")
        fh.seek(first)
        audio = fh.read(frames=last - first, dtype="float32", always_2d=True)
        stem = os.path.splitext(os.path.basename(str(source)))[0]
        speaker = row.get("speaker_id")
        label = f"_speaker_{str(speaker).rsplit('_', 1)[-1]}" if speaker else ""
        target = join_path(self.output_dir,
                           f"{stem}{label}_segment_{start}-{end}.{self.output_format}")
        fs, local = get_fs(target)
        fs.makedirs(local.rsplit("/", 1)[0], exist_ok=True)
        with atomic_write(target, "wb") as out:
            sf.write(out, audio[:, 0] if audio.shape[1] == 1 else audio, sr,
                     format=self.output_format.upper(),
                     subtype=SOUNDFILE_FORMATS[self.output_format])
        return {**row, "extracted_path": target}


def _open_source(path: str, stack: contextlib.ExitStack) -> tuple[Any, int]:
    """The source opened for seeking (soundfile over its byte stream, closed with ``stack``)
    and its rate."""
    try:
        fh = stack.enter_context(open_audio(path))
    except AudioDecodeError as exc:
        raise AudioInputError("undecodable_audio", str(exc)) from exc
    except FileNotFoundError as exc:
        raise AudioInputError("undecodable_audio", f"{path}: file not found") from exc
    except Exception as exc:
        raise AudioInputError("undecodable_audio", f"{path}: {type(exc).__name__}: {exc}") from exc
    return fh, fh.samplerate
