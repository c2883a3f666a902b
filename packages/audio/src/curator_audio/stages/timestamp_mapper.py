"""TimestampMapperStage: the output boundary of the audio filter pipeline (positions in the
original file, a fixed set of fields)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from curator import Resources
from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.stages.common import AudioInputError
from curator_audio.stages.preprocessing import _RejectingStage

__all__ = ["TimestampMapperStage", "DEFAULT_PASSTHROUGH_KEYS", "NEVER_PASS_KEYS",
           "translate_to_original"]

NEVER_PASS_KEYS = frozenset({"waveform", "audio", "audio_data", "audio_array", "segments",
                             "segment_mappings"})
DEFAULT_PASSTHROUGH_KEYS = ("speaker_id", "num_speakers", "speaking_duration", "sample_rate",
                            "utmos_mos", "sigmos_noise", "sigmos_ovrl", "sigmos_sig",
                            "sigmos_col", "sigmos_disc", "sigmos_loud", "sigmos_reverb",
                            "band_prediction")


def translate_to_original(mappings: list[dict[str, Any]], concat_start_ms: int,
                          concat_end_ms: int) -> list[dict[str, Any]]:
    """The pieces of the original files that the concatenated range
    ``[concat_start_ms, concat_end_ms)`` covers (one per mapping it overlaps)."""
    out = []
    for m in mappings:
        lo, hi = max(concat_start_ms, m["concat_start_ms"]), min(concat_end_ms,
                                                                 m["concat_end_ms"])
        if hi <= lo:
            continue
        out.append({"original_file": m["original_file"],
                    "original_start_ms": m["original_start_ms"] + lo - m["concat_start_ms"],
                    "original_end_ms": m["original_start_ms"] + hi - m["concat_start_ms"],
                    "duration_ms": hi - lo})
    return out


@dataclass
class TimestampMapperStage(_RejectingStage):
    """Turns each record into the output row of the audio filter pipeline: ``original_file``,
    ``original_start_ms``, ``original_end_ms``, ``duration_ms``, ``duration`` (s), plus the
    ``passthrough_keys`` present (the quality scores by default). Never passed on: waveforms,
    ``segments``, ``segment_mappings``.

    Timing comes, in order, from ``segment_mappings`` (a segment of concatenated audio mapped
    back to its source: one that straddles two source segments is rejected,
    ``spans_concat_boundary``, as NeMo drops it), from ``start_ms``/``end_ms`` (VAD segments),
    from ``diar_segments`` (adds ``speaking_duration``), else the whole ``duration``. A record
    with no usable timing is rejected (``no_timing``) instead of NeMo's zero-length row.

    Args:
        passthrough_keys: fields copied to the output (``None``: the quality and speaker keys).
    """

    passthrough_keys: list[str] | None = None
    name: str = "TimestampMapper"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))
    reject_reason = "timestamp_error"

    def __post_init__(self) -> None:
        if self.passthrough_keys is None:
            self.passthrough_keys = list(DEFAULT_PASSTHROUGH_KEYS)
        blocked = sorted(set(self.passthrough_keys) & NEVER_PASS_KEYS)
        if blocked:
            raise ConfigError(f"{self.name}: passthrough_keys {blocked} are never written "
                              f"(audio arrays and nesting); remove them")

    def inputs(self) -> StageIO:
        return ["data"], []

    def outputs(self) -> StageIO:
        return ["data"], ["original_file", "original_start_ms", "original_end_ms",
                          "duration_ms", "duration"]

    def _passthrough(self, item: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        for key in self.passthrough_keys or ():
            if key in item and item[key] is not None and key not in result:
                result[key] = item[key]
        return result

    def process_record(self, item: dict[str, Any]) -> dict[str, Any]:
        original = item.get("original_file", item.get(self.filepath_key, "unknown"))
        mappings = item.get("segment_mappings")
        start, end = item.get("start_ms"), item.get("end_ms")
        if mappings:
            if start is None or end is None or end <= start:
                raise AudioInputError("no_timing", f"invalid range start_ms={start}, "
                                      f"end_ms={end} on concatenated audio")
            pieces = translate_to_original(mappings, int(start), int(end))
            if len(pieces) > 1:
                raise AudioInputError("spans_concat_boundary",
                                      f"[{start}, {end}) ms of the concatenated audio covers "
                                      f"{len(pieces)} source segments")
            if not pieces:
                raise AudioInputError("no_timing", f"[{start}, {end}) ms overlaps no mapping")
            p = pieces[0]
            return self._passthrough(item, {**p, "duration": p["duration_ms"] / 1000.0})
        result: dict[str, Any] = {"original_file": original}
        if start is not None and end is not None and end > start:
            result.update(original_start_ms=int(start), original_end_ms=int(end),
                          duration_ms=int(end - start), duration=(end - start) / 1000.0)
            return self._passthrough(item, result)
        diar = item.get("diar_segments")
        if diar:
            diar = sorted(diar, key=lambda s: s[0])
            first, last = diar[0][0], diar[-1][1]
            result.update(original_start_ms=int(first * 1000), original_end_ms=int(last * 1000),
                          duration_ms=int((last - first) * 1000), duration=last - first,
                          speaking_duration=round(sum(e - s for s, e in diar), 3),
                          diar_segments=[[round(s, 3), round(e, 3)] for s, e in diar])
            return self._passthrough(item, result)
        dur = item.get("duration")
        if dur is None or float(dur) <= 0:
            raise AudioInputError("no_timing", f"{original}: no start_ms/end_ms, "
                                  f"diar_segments or positive duration")
        ms = int(float(dur) * 1000)
        result.update(original_start_ms=0, original_end_ms=ms, duration_ms=ms,
                      duration=float(dur))
        return self._passthrough(item, result)


