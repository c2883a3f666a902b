"""What a run needs beyond its stages: sinks, checkpoint, retry policy, statistics."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from curator.run.sink import RejectedSink
from curator.run.tracker import CheckpointStore, PartitionTracker
from curator.tasks import Task

__all__ = ["RunContext", "env_flag"]


def env_flag(name: str) -> bool | None:
    raw = os.environ.get(name)
    return None if raw is None else raw.strip().lower() in ("1", "true", "yes", "on")


@dataclass
class RunContext:
    """What a run needs beyond its stages: sinks, checkpoint, retry policy, statistics.

    Parameters:
        pipeline_name: shown in progress and the summary.
        rejected_dir: where rejected records and failed tasks are written (JSONL); ``None``
            keeps them in memory on the result and warns in the summary.
        checkpoint_dir: enables resumable runs (finished source partitions are skipped).
        max_retries: how many times a failing task is retried before it is rejected.
        progress: print live progress (default: when stderr is a terminal, or CURATOR_PROGRESS=1).
        summary: print the summary table at the end (default: on, CURATOR_SUMMARY=0 turns off).
    """

    pipeline_name: str = "pipeline"
    rejected_dir: str | None = None
    checkpoint_dir: str | None = None
    max_retries: int = 1
    progress: bool | None = None
    progress_interval: float = 5.0
    summary: bool | None = None
    sink: RejectedSink = field(init=False)
    checkpoint: CheckpointStore | None = field(init=False)
    #: partitions an earlier run finished, dropped by :meth:`skip_done` (the summary's "resumed")
    skipped_partitions: set[str] = field(init=False, default_factory=set)
    _tracker: PartitionTracker | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.sink = RejectedSink(self.rejected_dir)
        self.checkpoint = CheckpointStore(self.checkpoint_dir) if self.checkpoint_dir else None
        if self.progress is None:
            flag = env_flag("CURATOR_PROGRESS")
            self.progress = flag if flag is not None else sys.stderr.isatty()
        if self.summary is None:
            flag = env_flag("CURATOR_SUMMARY")
            self.summary = True if flag is None else flag

    def tracker(self, n_stages: int, count: bool = False) -> PartitionTracker:
        """The run's partition tracker (it marks partitions done in the checkpoint, if any;
        ``count``: it counts them even without one)."""
        self._tracker = PartitionTracker(self.checkpoint, n_stages, count)
        return self._tracker

    def skip_done(self, tasks: list[Task]) -> tuple[list[Task], int]:
        """Drop source tasks whose partition an earlier run finished."""
        if self.checkpoint is None:
            return tasks, 0
        for size in {t.metadata.get("block_size") for t in tasks}:
            self.checkpoint.check_block_size(size)
        done = self.checkpoint.done()
        kept = []
        for t in tasks:
            key = CheckpointStore.key(t.partition or t.task_id)
            if key in done:
                self.skipped_partitions.add(key)
            else:
                kept.append(t)
        return kept, len(tasks) - len(kept)
