"""Segment planning before any audio is read: drop empty and overlapping segments, pack
segments into snippets, drop snippets whose text repeats itself."""

from __future__ import annotations

import heapq
import logging
import os
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.stages.alm_pretrain.utils import PLAN_DATA_KEY, counters, segment_text
from curator_audio.stages.base import AudioRecordStage

__all__ = ["OverlapFilterStage", "SnippetCutPlannerStage", "SnippetRepetitionFilterStage",
           "filter_empty_segments", "find_overlapping_indices", "plan_snippets",
           "relativize_segments", "MAX_FILTERED_TEXT_EXAMPLES"]

logger = logging.getLogger(__name__)
MAX_FILTERED_TEXT_EXAMPLES = 1000


def _checked_segments(record: dict[str, Any]) -> list[dict[str, Any]]:
    segments = record.get("segments") or []
    if not isinstance(segments, list):
        raise ValueError(f"'segments' is a {type(segments).__name__}, not a list")
    for i, seg in enumerate(segments):
        if not isinstance(seg, dict):
            raise ValueError(f"segment {i} is not an object")
        for key in ("start", "end"):
            if not isinstance(seg.get(key), int | float) or isinstance(seg.get(key), bool):
                raise ValueError(f"segment {i} has no numeric {key!r}: {seg.get(key)!r}")
        if seg["end"] < seg["start"]:
            raise ValueError(f"segment {i} ends ({seg['end']}) before it starts "
                             f"({seg['start']})")
    return list(segments)


def filter_empty_segments(segments: list[dict]) -> tuple[list[dict], int]:
    """``(kept, dropped)``: segments with text or words, in order, and how many had neither."""
    kept = [s for s in segments if segment_text(s) or s.get("words")]
    return kept, len(segments) - len(kept)


def find_overlapping_indices(segments: list[dict], min_overlap_sec: float) -> set[int]:
    """Indices of segments sharing at least ``min_overlap_sec`` with another, or containing /
    contained by another (both of a pair), by a sweep over start-sorted segments."""
    if len(segments) < 2:
        return set()
    order = sorted(range(len(segments)), key=lambda i: (segments[i]["start"], segments[i]["end"]))
    bad: set[int] = set()
    active: list[tuple[float, float, int]] = []  # (end, start, index), smallest end first
    for k in order:
        s, e = segments[k]["start"], segments[k]["end"]
        while active and active[0][0] <= s:
            heapq.heappop(active)
        for ej, sj, j in active:
            if sj >= e:
                continue
            contains = (s <= sj and e >= ej) or (sj <= s and ej >= e)
            if min(e, ej) - max(s, sj) >= min_overlap_sec or contains:
                bad.update((k, j))
        heapq.heappush(active, (e, s, k))
    return bad


def plan_snippets(segments: list[dict], max_duration_sec: float, min_duration_sec: float,
                  max_segment_gap_in_snippet: float) -> tuple[list[dict], dict[str, int]]:
    """Greedy packing of start-sorted, non-overlapping segments into snippets
    (``{"start", "end", "segments"}``): a snippet grows while its span stays within
    ``max_duration_sec`` and the silence before the next segment is at most
    ``max_segment_gap_in_snippet``. Candidates too long, too short or without text are counted
    in ``{"too_long", "too_short", "no_text"}`` and left out."""
    drops = {"too_long": 0, "too_short": 0, "no_text": 0}
    candidates: list[dict] = []
    for seg in segments:
        cur = candidates[-1] if candidates else None
        if (cur is not None and seg["end"] - cur["start"] <= max_duration_sec
                and seg["start"] - cur["end"] <= max_segment_gap_in_snippet):
            cur["end"] = seg["end"]
            cur["segments"].append(seg)
        else:
            candidates.append({"start": seg["start"], "end": seg["end"], "segments": [seg]})
    snippets = []
    for cand in candidates:
        span = cand["end"] - cand["start"]
        if span > max_duration_sec:
            drops["too_long"] += 1
        elif span < min_duration_sec:
            drops["too_short"] += 1
        elif not " ".join(segment_text(s) for s in cand["segments"]).strip():
            drops["no_text"] += 1
        else:
            snippets.append(cand)
    return snippets, drops


def relativize_segments(segments: list[dict], snippet_start: float, snippet_end: float
                        ) -> list[dict]:
    """Copies of ``segments`` (and their ``words``) with times shifted to the snippet's start
    and clamped to ``[0, snippet duration]`` (diarization jitters by a few ms)."""
    duration = max(0.0, snippet_end - snippet_start)

    def shift(t: float) -> float:
        return min(duration, max(0.0, t - snippet_start))

    out = []
    for seg in segments:
        new = dict(seg, start=shift(seg["start"]), end=shift(seg["end"]))
        if seg.get("words"):
            new["words"] = [{**w, **{k: shift(w[k]) for k in ("start", "end") if k in w}}
                            for w in seg["words"]]
        out.append(new)
    return out


@dataclass
class OverlapFilterStage(AudioRecordStage):
    """Drop each record's segments that have neither text nor words, then every segment that
    overlaps another by at least ``min_overlap_sec`` or contains / is contained by one (both of
    the pair). Counters (``original_seg_count``, ``original_seg_duration``, ``dropped_empty``,
    ``dropped_overlap``, ``kept_after_filter_count``) go to the record's ``_pretrain_long_form``.
    A record whose ``segments`` are malformed (no numeric ``start``/``end``, ending before they
    start) goes to the rejected sink (``invalid_segments``)."""

    min_overlap_sec: float = 0.5
    name: str = "OverlapFilter"
    batch_size: int = 1
    reject_reason: ClassVar[str] = "invalid_segments"

    def inputs(self) -> StageIO:
        return ["data"], ["segments"]

    def outputs(self) -> StageIO:
        return ["data"], ["segments"]

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        segments = _checked_segments(record)
        span = (max(s["end"] for s in segments) - min(s["start"] for s in segments)
                if segments else 0.0)
        kept, dropped_empty = filter_empty_segments(segments)
        kept.sort(key=lambda s: (s["start"], s["end"]))
        bad = find_overlapping_indices(kept, self.min_overlap_sec)
        out = {**record, "segments": [s for i, s in enumerate(kept) if i not in bad]}
        out["_pretrain_long_form"] = dict(record.get("_pretrain_long_form") or {})
        counters(out).update(original_seg_count=len(segments), original_seg_duration=float(span),
                             dropped_empty=dropped_empty, dropped_overlap=len(bad),
                             kept_after_filter_count=len(out["segments"]))
        return out


@dataclass
class SnippetCutPlannerStage(AudioRecordStage):
    """Plan each record's snippet cuts (no audio read) into ``_snippet_plan``: a list of
    ``{"start", "end", "segments"}`` in source seconds (see :func:`plan_snippets`). Counts of
    candidates left out go to ``_pretrain_long_form`` (``dropped_too_long``,
    ``dropped_too_short``, ``dropped_no_text``, ``planned_snippets``). Run after
    :class:`OverlapFilterStage` (segments sorted, non-overlapping); malformed ``segments`` are
    rejected (``invalid_segments``)."""

    max_duration_sec: float = 600.0
    min_duration_sec: float = 0.5
    max_segment_gap_in_snippet: float = 30.0
    name: str = "SnippetCutPlanner"
    batch_size: int = 1
    reject_reason: ClassVar[str] = "invalid_segments"

    def __post_init__(self) -> None:
        if self.max_duration_sec <= 0:
            raise ConfigError("max_duration_sec must be > 0")
        if self.min_duration_sec < 0:
            raise ConfigError("min_duration_sec must be >= 0")
        if self.min_duration_sec > self.max_duration_sec:
            raise ConfigError("min_duration_sec must be <= max_duration_sec")
        if self.max_segment_gap_in_snippet < 0:
            raise ConfigError("max_segment_gap_in_snippet must be >= 0")

    def inputs(self) -> StageIO:
        return ["data"], ["segments"]

    def outputs(self) -> StageIO:
        return ["data"], [PLAN_DATA_KEY]

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        snippets, drops = plan_snippets(_checked_segments(record), self.max_duration_sec,
                                        self.min_duration_sec, self.max_segment_gap_in_snippet)
        out = {**record, PLAN_DATA_KEY: snippets,
               "_pretrain_long_form": dict(record.get("_pretrain_long_form") or {})}
        counters(out).update(dropped_too_long=drops["too_long"],
                             dropped_too_short=drops["too_short"],
                             dropped_no_text=drops["no_text"], planned_snippets=len(snippets))
        if not snippets:
            logger.warning("%s: %s planned no snippets (left out: %s)", self.name,
                           record.get("id"), drops)
        return out


def _count_ngrams(token_ids: list[int], n: int) -> Counter[tuple[int, ...]]:
    if n <= 0 or len(token_ids) < n:
        return Counter()
    return Counter(tuple(token_ids[i:i + n]) for i in range(len(token_ids) - n + 1))


@dataclass
class SnippetRepetitionFilterStage(AudioRecordStage):
    """Drop planned snippets whose joined segment text repeats a token n-gram: tokenised by the
    fast tokenizer in the local directory ``tokenizer_path``, a snippet is dropped when any
    ``ngram_n``-gram of token ids occurs more than ``ngram_max_count`` times (a degenerate ASR
    transcript). Counts and up to 1000 dropped texts go to ``_pretrain_long_form``
    (``dropped_repetition``, ``kept_after_repetition_filter``, ``planned_snippets``,
    ``filtered_repetition_texts``). Nothing is downloaded: a ``tokenizer_path`` that is not a
    local directory is a ``ConfigError`` (``cache_dir`` / ``hf_token`` are accepted for NeMo's
    signature)."""

    tokenizer_path: str = ""
    ngram_n: int = 10
    ngram_max_count: int = 3
    cache_dir: str | None = None
    hf_token: str | None = None
    name: str = "SnippetRepetitionFilter"
    batch_size: int = 1
    reject_reason: ClassVar[str] = "invalid_snippet_plan"

    def __post_init__(self) -> None:
        if self.ngram_n < 1:
            raise ConfigError("ngram_n must be >= 1")
        if self.ngram_max_count < 1:
            raise ConfigError("ngram_max_count must be >= 1")
        if not self.tokenizer_path:
            raise ConfigError(f"{self.name}: tokenizer_path is required (a local directory "
                              f"holding a Hugging Face fast tokenizer)")
        self._tokenizer: Any = None

    def inputs(self) -> StageIO:
        return ["data"], [PLAN_DATA_KEY]

    def outputs(self) -> StageIO:
        return ["data"], [PLAN_DATA_KEY]

    def setup(self, worker_metadata: Any = None) -> None:
        if not os.path.isdir(self.tokenizer_path):
            raise ConfigError(
                f"{self.name}: tokenizer_path {self.tokenizer_path!r} is not a local directory. "
                f"Curator does not download at run time: save the tokenizer once "
                f"(AutoTokenizer.from_pretrained(repo).save_pretrained(dir)) and pass dir")
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(self.tokenizer_path, use_fast=True)
        if not getattr(tok, "is_fast", False):
            raise ConfigError(f"{self.name}: the tokenizer in {self.tokenizer_path} is not a "
                              f"fast tokenizer (tokenizer.json); save one with use_fast=True")
        self._tokenizer = tok

    def _repetitive(self, text: str) -> bool:
        if not text:
            return False
        ids = list(self._tokenizer(text, add_special_tokens=False)["input_ids"])
        counts = _count_ngrams(ids, self.ngram_n)
        return any(c > self.ngram_max_count for c in counts.values())

    def process_record(self, record: dict[str, Any]) -> dict[str, Any]:
        if self._tokenizer is None:
            self.setup()
        plan = record.get(PLAN_DATA_KEY) or []
        kept, dropped = [], []
        for snippet in plan:
            text = " ".join(segment_text(s) for s in snippet["segments"]).strip()
            (dropped if self._repetitive(text) else kept).append((snippet, text))
        out = {**record, PLAN_DATA_KEY: [s for s, _ in kept],
               "_pretrain_long_form": dict(record.get("_pretrain_long_form") or {})}
        counters(out).update(
            dropped_repetition=len(dropped), kept_after_repetition_filter=len(kept),
            planned_snippets=len(kept),
            filtered_repetition_texts=[t for _, t in dropped][:MAX_FILTERED_TEXT_EXAMPLES])
        for snippet, text in dropped:
            logger.warning("%s: %s: dropping repetitive snippet [%.2f, %.2f]: %s", self.name,
                           record.get("id"), snippet["start"], snippet["end"], text[:200])
        return out
