"""LocalExecutor bounds the data buffered between two stages by bytes, not only by task count:
with big tasks a producer stays a few tasks ahead of a slow consumer whatever ``queue_size``."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np
from curator import LocalExecutor, Pipeline, ProcessingStage, Task
from curator.executors.local import task_nbytes

ITEM = 2 * 2**20


@dataclass
class Counter:
    made: int = 0
    consumed: int = 0
    ahead: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


COUNTS = Counter()


@dataclass
class Make(ProcessingStage[Task, Task]):
    name: str = "make"

    def process(self, task: Task) -> Task:
        with COUNTS.lock:
            COUNTS.made += 1
        return Task(task.task_id, "d", np.ones(ITEM, dtype=np.uint8))


@dataclass
class Slow(ProcessingStage[Task, Task]):
    name: str = "slow"

    def process(self, task: Task) -> Task:
        time.sleep(0.03)
        with COUNTS.lock:
            COUNTS.consumed += 1
            COUNTS.ahead = max(COUNTS.ahead, COUNTS.made - COUNTS.consumed)
        return Task(task.task_id, "d", int(task.data.sum()))


def _max_ahead(**config) -> int:
    global COUNTS
    COUNTS = Counter()
    out = Pipeline("q", stages=[Make(), Slow()]).run(
        LocalExecutor(fuse_stages=False, num_workers=1, queue_size=100, **config),
        initial_tasks=[Task(f"t{i}", "d", i) for i in range(30)], summary=False)
    assert sorted(t.data for t in out) == [ITEM] * 30  # nothing lost
    return COUNTS.ahead


def test_queue_bounded_by_bytes_in_flight() -> None:
    assert task_nbytes(Task("a", "d", np.ones(ITEM, dtype=np.uint8))) == ITEM
    assert task_nbytes(Task("a", "d", [1, 2])) == 0  # no nbytes: bounded by count only
    assert _max_ahead(queue_bytes=int(2.5 * ITEM)) <= 5  # 2 queued, 1 waiting, 1 in each stage
    assert _max_ahead(queue_bytes=1000 * ITEM) > 10  # the count bound alone lets it run ahead
