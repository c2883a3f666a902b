"""Keys, path resolution and snippet ids shared by the pretraining stages."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["PRETRAIN_META_KEY", "PLAN_DATA_KEY", "AUDIO_PATH_RESOLUTION_MODES",
           "make_snippet_id", "resolve_audio_path", "segment_text", "counters"]

PRETRAIN_META_KEY = "_pretrain_long_form"  # a record's counters (NeMo: task metadata)
PLAN_DATA_KEY = "_snippet_plan"
AUDIO_PATH_RESOLUTION_MODES = ("basename", "relative", "as_is")


def segment_text(segment: dict[str, Any]) -> str:
    """The segment's ``text``, stripped ("" when absent)."""
    return str(segment.get("text") or "").strip()


def counters(record: dict[str, Any]) -> dict[str, Any]:
    """The record's counter dict, created on first use."""
    return record.setdefault(PRETRAIN_META_KEY, {})


def resolve_audio_path(audio_dir: str, value: str, mode: str = "basename") -> str:
    """``audio_dir/basename(value)`` (``basename``), ``audio_dir/value`` (``relative``) or
    ``value`` (``as_is``)."""
    if mode == "basename":
        return os.path.join(audio_dir, os.path.basename(value))
    if mode == "relative":
        return os.path.join(audio_dir, value)
    if mode == "as_is":
        return value
    raise ValueError(f"unknown audio_path_resolution {mode!r}; expected one of "
                     f"{AUDIO_PATH_RESOLUTION_MODES}")


def make_snippet_id(original_id: str, start_sec: float, end_sec: float) -> str:
    """``<id>-<start>-<end>`` with millisecond times written ``12_345``; ``.``, ``/`` and ``\\``
    in the id become ``_`` so ``<snippet_id>.<ext>`` is one WebDataset key at a tar's root."""
    safe = str(original_id)
    for ch in (".", "/", "\\"):
        safe = safe.replace(ch, "_")
    return f"{safe}-{start_sec:.3f}-{end_sec:.3f}".replace(".", "_")
