"""Audio-language-model training windows: ALMDataBuilderStage and ALMDataOverlapStage."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.stages.base import AudioRecordStage

__all__ = ["ALMDataBuilderStage", "ALMDataOverlapStage", "BuilderStats",
           "MIN_SEGMENTS_PER_WINDOW"]

MIN_SEGMENTS_PER_WINDOW = 2
_NO_SPEAKER = "no-speaker"


@dataclass
class BuilderStats:
    """Where an entry's segments went (counts and seconds lost per reason)."""

    total_segments: int = 0
    total_dur: float = 0.0
    swift_path: str = ""
    audio_sample_rate: int = 0
    lost_bw: int = 0
    dur_lost_bw: float = 0.0
    lost_sr: int = 0
    dur_lost_sr: float = 0.0
    lost_spk: int = 0
    dur_lost_spk: float = 0.0
    lost_win: int = 0
    dur_lost_win: float = 0.0
    lost_no_spkr: int = 0
    dur_lost_no_spkr: float = 0.0
    lost_next_seg_bm: int = 0
    dur_lost_next_seg_bm: float = 0.0
    lost_win_full_data: list = field(default_factory=list)


def _bandwidth(seg: dict[str, Any]) -> int:
    return (seg.get("metrics") or {}).get("bandwidth", 0)


def _speaker_seconds(segments: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in segments:
        if s.get("speaker"):
            out[s["speaker"]] = out.get(s["speaker"], 0.0) + s["end"] - s["start"]
    return out


def _cut_at(seg: dict[str, Any], end: float) -> dict[str, Any]:
    """``seg`` ending at its last word that ends by ``end`` (text from those words)."""
    words = [dict(w) for w in seg.get("words", []) if w["end"] <= end]
    return {**seg, "words": words, "text": " ".join(w["word"] for w in words if w.get("word")),
            "end": words[-1]["end"] if words else seg["start"]}


@dataclass
class ALMDataBuilderStage(AudioRecordStage):
    """Builds audio-language-model training windows from an entry's diarized ``segments``
    (``start``, ``end``, ``speaker``, ``metrics.bandwidth``, optional ``words``).

    From each segment of enough bandwidth a window grows over the following segments while
    their bandwidth is at least ``min_bandwidth``, there are at most ``max_speakers`` speakers
    and none is ``no-speaker``; it is kept when it lasts ``target_window_duration`` ±
    ``tolerance`` (a fraction), holds at least two segments and ``min_speakers`` to
    ``max_speakers`` speakers. With ``truncation`` (NeMo's default) the segment crossing the
    window's longest length is cut at its last word that still fits (a ``truncation_event``);
    without it the window ends before that segment. Entries below ``min_sample_rate``
    (``audio_sample_rate``) yield no window. Sets ``windows`` (``segments`` and the five largest
    ``speaker_durations``), ``stats`` (:class:`BuilderStats`: what was lost and why) and
    ``truncation_events``; ``drop_fields`` leave segments, ``drop_fields_top_level`` the entry.

    Args:
        target_window_duration: window length aimed at (s).
        tolerance: allowed deviation as a fraction of the target.
        min_bandwidth: lowest segment bandwidth (Hz).
        min_sample_rate: lowest entry sample rate (Hz).
        min_speakers, max_speakers: speakers per window.
        truncation: cut the segment that crosses the window's end at a word boundary.
        drop_fields, drop_fields_top_level: comma-separated fields to leave out.
    """

    target_window_duration: float = 120.0
    tolerance: float = 0.1
    min_bandwidth: int = 8000
    min_sample_rate: int = 16000
    min_speakers: int = 2
    max_speakers: int = 5
    truncation: bool = True
    drop_fields: str = "words"
    drop_fields_top_level: str = "words,segments"
    name: str = "alm_data_builder"
    reject_reason = "alm_builder_error"

    def __post_init__(self) -> None:
        if self.target_window_duration <= 0 or not 0 <= self.tolerance < 1:
            raise ConfigError(f"{self.name}: need target_window_duration > 0 and 0 <= tolerance "
                              f"< 1, got {self.target_window_duration}, {self.tolerance}")
        if not 0 < self.min_speakers <= self.max_speakers:
            raise ConfigError(f"{self.name}: need 0 < min_speakers <= max_speakers")
        slack = self.target_window_duration * self.tolerance
        self.min_duration = self.target_window_duration - slack
        self.max_duration = self.target_window_duration + slack
        self._drop = {f.strip() for f in self.drop_fields.split(",") if f.strip()}
        self._drop_top = {f.strip() for f in self.drop_fields_top_level.split(",") if f.strip()}

    def inputs(self) -> StageIO:
        return ["data"], ["segments"]

    def outputs(self) -> StageIO:
        return ["data"], ["windows", "stats", "truncation_events"]

    def _keep(self, seg: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in seg.items() if k not in self._drop}

    def _lost_window(self, stat: BuilderStats, segments: list[dict[str, Any]], start: int,
                     stop: int, window: list[dict[str, Any]]) -> None:
        seg = segments[start]
        stat.lost_win += 1
        stat.dur_lost_win += seg["end"] - seg["start"]
        nxt = segments[min(stop, len(segments) - 1)]
        if nxt.get("speaker", _NO_SPEAKER) == _NO_SPEAKER:
            stat.lost_no_spkr += 1
            stat.dur_lost_no_spkr += seg["end"] - seg["start"]
        elif _bandwidth(nxt) < self.min_bandwidth:
            stat.lost_next_seg_bm += 1
            stat.dur_lost_next_seg_bm += seg["end"] - seg["start"]
        stat.lost_win_full_data.append({
            "index": start, "window_segs": window, "next_seg": self._keep(nxt),
            "prev_seg": self._keep(segments[max(start - 1, 0)])})

    def _grow(self, segments: list[dict[str, Any]], start: int
              ) -> tuple[list[dict[str, Any]], float, int, int]:
        """The window starting at ``start``: (segments, end, index where it stopped, cuts)."""
        begin = segments[start]["start"]
        window: list[dict[str, Any]] = []
        end, idx, cuts = segments[start]["end"], start, 0
        for idx in range(start, len(segments)):
            seg = segments[idx]
            if _bandwidth(seg) < self.min_bandwidth:
                break
            if seg["end"] - begin > self.max_duration:
                limit = begin + self.max_duration
                if not self.truncation or seg["start"] >= limit:
                    break
                cuts += 1
                part = _cut_at(seg, limit)
                speakers = _speaker_seconds([*window, part])
                if len(speakers) <= self.max_speakers and _NO_SPEAKER not in speakers:
                    window.append(self._keep(part))
                    end = part["end"]
                break
            speakers = _speaker_seconds([*window, seg])
            if len(speakers) > self.max_speakers or _NO_SPEAKER in speakers:
                break
            end = seg["end"]
            window.append(self._keep(seg))
        return window, end, idx, cuts

    def process_record(self, entry: dict[str, Any]) -> dict[str, Any]:
        t0 = time.perf_counter()
        segments = entry.get("segments") or []
        stat = BuilderStats(total_segments=len(segments),
                            total_dur=sum(s["end"] - s["start"] for s in segments),
                            swift_path=entry.get("swift_audio_filepath", ""),
                            audio_sample_rate=entry.get("audio_sample_rate", 0))
        windows: list[dict[str, Any]] = []
        cuts_total = 0
        if stat.audio_sample_rate < self.min_sample_rate:
            stat.lost_sr, stat.dur_lost_sr = len(segments), stat.total_dur
            return {"audio_filepath": entry.get("audio_filepath"), "windows": [],
                    "stats": asdict(stat), "truncation_events": 0}
        for start, seg in enumerate(segments):
            if _bandwidth(seg) < self.min_bandwidth:
                stat.lost_bw += 1
                stat.dur_lost_bw += seg["end"] - seg["start"]
                continue
            window, end, stop, cuts = self._grow(segments, start)
            cuts_total += cuts
            if (not self.min_duration <= end - seg["start"] <= self.max_duration
                    or len(window) < MIN_SEGMENTS_PER_WINDOW
                    or any(_bandwidth(s) < self.min_bandwidth for s in window)):
                self._lost_window(stat, segments, start, stop, window)
                continue
            speakers = _speaker_seconds(window)
            if not self.min_speakers <= len(speakers) <= self.max_speakers \
                    or _NO_SPEAKER in speakers:
                stat.lost_spk += 1
                stat.dur_lost_spk += seg["end"] - seg["start"]
                continue
            top = sorted(speakers.values(), reverse=True)[:5]
            windows.append({"segments": window, "speaker_durations": top + [0.0] * (5 - len(top))})
        out = {k: v for k, v in entry.items() if k not in self._drop_top}
        out.update(windows=windows, stats=asdict(stat), truncation_events=cuts_total)
        self._log_metrics({"process_time": time.perf_counter() - t0,
                           "segments_processed": len(segments), "windows_created": len(windows)})
        return out


def _span(window: dict[str, Any]) -> tuple[float, float] | None:
    segs = window.get("segments") or []
    return (segs[-1]["end"], segs[0]["start"]) if segs else None


def _overlap_ratio(a: tuple[float, float], b: tuple[float, float]) -> float:
    (end_a, start_a), (end_b, start_b) = a, b
    shorter = min(end_a - start_a, end_b - start_b)
    return max(0.0, min(end_a, end_b) - max(start_a, start_b)) / shorter if shorter else 0.0


def _non_overlapping(spans: list[tuple[float, float]], threshold: float, target: float
                     ) -> list[tuple[float, float]]:
    """Of two windows overlapping by at least ``threshold`` of the shorter, the one closer to
    ``target`` seconds stays (the longer on a tie)."""
    order = sorted(spans, key=lambda s: (s[1], s[0]))
    removed: set[int] = set()
    for i, a in enumerate(order):
        if i in removed:
            continue
        for j in range(i + 1, len(order)):
            if j in removed:
                continue
            b = order[j]
            if b[1] >= a[0]:
                break
            if _overlap_ratio(a, b) < threshold:
                continue
            da, db = abs((a[0] - a[1]) - target), abs((b[0] - b[1]) - target)
            if da < db or (da == db and a[0] - a[1] >= b[0] - b[1]):
                removed.add(j)
            else:
                removed.add(i)
                break
    return [s for k, s in enumerate(order) if k not in removed]


@dataclass
class ALMDataOverlapStage(AudioRecordStage):
    """Removes overlapping windows built by :class:`ALMDataBuilderStage`: of two windows that
    overlap by at least ``overlap_percentage`` % of the shorter, the one closer to
    ``target_duration`` stays. Sets ``filtered_windows``, ``filtered`` (their ``(end, start)``
    spans), ``filtered_dur`` / ``filtered_dur_list``, the totals before filtering
    (``total_dur_window``, ``total_dur_list_window``, ``total_dur_list_window_timestamps``) and
    ``manifest_filepath`` / ``swift_filepath`` from ``stats``.

    Args:
        overlap_percentage: overlap (0-100, of the shorter window) that makes two windows clash.
        target_duration: window length preferred (s).
    """

    overlap_percentage: int = 0
    target_duration: float = 120.0
    name: str = "alm_data_overlap"
    reject_reason = "alm_overlap_error"

    def __post_init__(self) -> None:
        if not 0 <= self.overlap_percentage <= 100:
            raise ConfigError(f"{self.name}: overlap_percentage must be 0-100, got "
                              f"{self.overlap_percentage}")
        if self.target_duration <= 0:
            raise ConfigError(f"{self.name}: target_duration must be positive")

    def inputs(self) -> StageIO:
        return ["data"], ["windows"]

    def outputs(self) -> StageIO:
        return ["data"], ["filtered_windows", "filtered_dur"]

    def process_record(self, entry: dict[str, Any]) -> dict[str, Any]:
        windows = entry.get("windows") or []
        spans = [s for w in windows if (s := _span(w))]
        kept = _non_overlapping(spans, self.overlap_percentage / 100, self.target_duration)
        keep = {(round(e, 6), round(s, 6)) for e, s in kept}
        stats = entry.get("stats") if isinstance(entry.get("stats"), dict) else {}
        return {**entry,
                "total_dur_window": sum(e - s for e, s in spans),
                "total_dur_list_window": [e - s for e, s in spans],
                "total_dur_list_window_timestamps": spans,
                "filtered": kept,
                "filtered_windows": [w for w in windows if (s := _span(w))
                                     and (round(s[0], 6), round(s[1], 6)) in keep],
                "filtered_dur": sum(e - s for e, s in kept),
                "filtered_dur_list": [e - s for e, s in kept],
                "manifest_filepath": stats.get("manifest_path"),
                "swift_filepath": stats.get("swift_path")}
