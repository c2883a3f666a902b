"""ScoreBucketer: labels each document high / medium / low from a numeric score column."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow.compute as pc
from curator import ProcessingStage
from curator.errors import ConfigError

from curator_text.tasks import DocumentBatch

__all__ = ["ScoreBucketer"]


@dataclass
class ScoreBucketer(ProcessingStage[DocumentBatch, DocumentBatch]):
    """Writes ``bucket_field`` = "high" (score ≥ ``high``), "medium" (≥ ``low``) or "low".

    Parameters:
        score_field: the numeric score column (e.g. from ``Score`` or a fastText filter).
        high, low: the bucket bounds (``low <= high``).
        bucket_field: the output column (default ``"quality_bucket"``).
    """

    score_field: str = "score"
    high: float = 0.8
    low: float = 0.5
    bucket_field: str = "quality_bucket"
    name: str = "ScoreBucketer"
    modality = "text"

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ConfigError(f"{self.name}: low ({self.low}) must be <= high ({self.high})")

    def inputs(self):
        return ["data"], [self.score_field]

    def outputs(self):
        return ["data"], [self.bucket_field]

    def process(self, task: DocumentBatch) -> DocumentBatch:
        table = task.to_pyarrow()
        s = table[self.score_field]
        bucket = pc.if_else(pc.greater_equal(s, self.high), "high",
                            pc.if_else(pc.greater_equal(s, self.low), "medium", "low"))
        bucket = pc.fill_null(bucket, "low")
        if self.bucket_field in table.column_names:
            table = table.drop_columns([self.bucket_field])
        return task.derive(table.append_column(self.bucket_field, bucket))
