"""SegmentExtractionStage: write the segments a pipeline kept as audio files."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from curator import Resources
from curator.errors import ConfigError
from curator.io import atomic_write, get_fs, join_path
from curator.stages.base import StageIO

from curator_audio.decode import AudioDecodeError, load_audio
from curator_audio.stages.common import AudioInputError
from curator_audio.stages.preprocessing import SOUNDFILE_FORMATS, _RejectingStage

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

    def process_record(self, row: dict[str, Any]) -> dict[str, Any]:
        import soundfile as sf

        source = row.get("original_file")
        start, end = row.get("original_start_ms"), row.get("original_end_ms")
        if not source or start is None or end is None or int(end) <= int(start):
            raise AudioInputError("no_timing", f"need original_file and original_start_ms < "
                                  f"original_end_ms, got {source!r} [{start}, {end})")
        start, end = int(start), int(end)
        try:
            audio, sr = load_audio(str(source), offset=start / 1000.0,
                                   duration=(end - start) / 1000.0, mono=False)
        except (AudioDecodeError, FileNotFoundError) as exc:
            raise AudioInputError("undecodable_audio", str(exc)) from exc
        stem = os.path.splitext(os.path.basename(str(source)))[0]
        speaker = row.get("speaker_id")
        label = f"_speaker_{str(speaker).rsplit('_', 1)[-1]}" if speaker else ""
        target = join_path(self.output_dir,
                           f"{stem}{label}_segment_{start}-{end}.{self.output_format}")
        fs, local = get_fs(target)
        fs.makedirs(local.rsplit("/", 1)[0], exist_ok=True)
        with atomic_write(target, "wb") as fh:
            sf.write(fh, audio[:, 0] if audio.shape[1] == 1 else audio, sr,
                     format=self.output_format.upper(),
                     subtype=SOUNDFILE_FORMATS[self.output_format])
        return {**row, "extracted_path": target}
