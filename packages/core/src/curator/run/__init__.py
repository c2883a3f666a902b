"""The run's record: context, tracker, rejected sink, stage calls and outcomes, statistics,
progress and result. Below the executors: every engine books its run here the same way."""

from curator.run.context import RunContext
from curator.run.outcome import Outcome, StageCall, book
from curator.run.result import OutputCollector, RunResult
from curator.run.sink import FailedTask, RejectedRecord, RejectedSink
from curator.run.stats import RunStats, StageStats
from curator.run.tracker import CheckpointStore, PartitionTracker

__all__ = ["RunContext", "RunResult", "OutputCollector", "StageCall", "Outcome", "book",
           "RejectedSink", "RejectedRecord", "FailedTask",
           "RunStats", "StageStats", "CheckpointStore", "PartitionTracker"]
