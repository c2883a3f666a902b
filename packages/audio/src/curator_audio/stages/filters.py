"""PreserveByValueStage: keep records by a comparison on a numeric field."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import ClassVar

from curator.stages.base import StageIO

from curator_audio.stages.base import AudioRecordStage, public_record
from curator_audio.tasks import AudioBatch

__all__ = ["PreserveByValueStage", "OPERATORS"]

OPERATORS = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
             "gt": operator.gt, "ge": operator.ge}


@dataclass
class PreserveByValueStage(AudioRecordStage):
    """Keeps the records for which ``record[input_value_key] <operator> target_value`` holds
    (e.g. ``wer le 30``, ``duration lt 20``) and drops the others. A record without the field,
    or with a non-numeric value, goes to the rejected sink.

    Args:
        input_value_key: the numeric field to compare.
        target_value: the value to compare with.
        operator: one of ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge``.
    """

    input_value_key: str = ""
    target_value: float = 0.0
    operator: str = "eq"
    name: str = "PreserveByValueStage"
    kind: ClassVar[str] = "filter"
    reject_reason = "missing_value"

    def __post_init__(self) -> None:
        if not self.input_value_key:
            raise ValueError(f"{self.name}: input_value_key is required")
        if self.operator not in OPERATORS:
            raise ValueError(f"{self.name}: operator must be one of {sorted(OPERATORS)}, "
                             f"got {self.operator!r}")
        if isinstance(self.target_value, bool) or not isinstance(self.target_value, int | float):
            raise ValueError(f"{self.name}: target_value must be a number, "
                             f"got {self.target_value!r}")

    def inputs(self) -> StageIO:
        return ["data"], [self.input_value_key]

    def process(self, task: AudioBatch) -> AudioBatch:
        keep, op = [], OPERATORS[self.operator]
        for record in task.data:
            value = record.get(self.input_value_key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.reject(task, self.reject_reason, record=public_record(record),
                            error=f"{self.input_value_key}={value!r} is not a number",
                            source=str(record.get(self.filepath_key, "")))
            elif op(value, self.target_value):
                keep.append(record)
        return task.derive(keep)
