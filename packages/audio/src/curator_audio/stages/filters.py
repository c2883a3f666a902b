"""PreserveByValueStage: keep records by a comparison on a numeric field."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

from curator.errors import ConfigError
from curator.stages.base import StageIO
from curator.stages.filter import FilterStage

from curator_audio.stages.base import AudioRecordStage, public_record
from curator_audio.tasks import AudioBatch

__all__ = ["AudioFilterStage", "PreserveByValueStage", "OPERATORS"]

OPERATORS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
             "gt": operator.gt, "ge": operator.ge}


class AudioFilterStage(FilterStage[AudioBatch], AudioRecordStage):
    """Core's filter contract (:class:`curator.stages.filter.FilterStage`) over the records of an
    :class:`AudioBatch`: leaf classes implement ``score_items`` and ``keep``; removed records go
    to the rejected sink (kind ``"filtered"``, without their waveform) with ``split=True``."""

    def items(self, task: AudioBatch) -> list[dict[str, Any]]:
        return task.data

    def with_kept(self, task: AudioBatch, mask: list[bool]) -> AudioBatch:
        return task.derive([r for r, k in zip(task.data, mask, strict=True) if k])

    def item_record(self, item: dict[str, Any]) -> dict[str, Any]:
        return public_record(item)


@dataclass
class PreserveByValueStage(AudioFilterStage):
    """Keeps the records for which ``record[input_value_key] <operator> target_value`` holds
    (e.g. ``wer le 30``, ``duration lt 20``) and drops the others (``split=True``: sends them to
    the rejected sink, kind ``"filtered"``). A record without the field, or with a non-numeric
    value, goes to the rejected sink as ``missing_value``.

    Args:
        input_value_key: the numeric field to compare.
        target_value: the value to compare with.
        operator: one of ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge``.
        split: send removed records to the rejected sink instead of dropping them.
    """

    input_value_key: str = ""
    target_value: float = 0.0
    operator: str = "eq"
    split: bool = False
    name: str = "PreserveByValueStage"
    reject_reason = "missing_value"

    def __post_init__(self) -> None:
        if not self.input_value_key:
            raise ConfigError(f"{self.name}: input_value_key is required")
        if self.operator not in OPERATORS:
            raise ConfigError(f"{self.name}: operator must be one of {sorted(OPERATORS)}, "
                              f"got {self.operator!r}")
        if isinstance(self.target_value, bool) or not isinstance(self.target_value, int | float):
            raise ConfigError(f"{self.name}: target_value must be a number, "
                              f"got {self.target_value!r}")

    def inputs(self) -> StageIO:
        return ["data"], [self.input_value_key]

    def score_items(self, task: AudioBatch, items: list[dict[str, Any]]) -> list[float | None]:
        scores: list[float | None] = []
        for record in items:
            value = record.get(self.input_value_key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.reject(task, self.reject_reason, record=public_record(record),
                            error=f"{self.input_value_key}={value!r} is not a number",
                            source=str(record.get(self.filepath_key, "")))
                value = None
            scores.append(value)
        return scores

    def keep(self, score: float) -> bool:
        return bool(OPERATORS[self.operator](score, self.target_value))
