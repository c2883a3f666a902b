"""Tiny stages and a pipeline shared by the executor tests (and run as a job by test_resume)."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from curator import FileGroupTask, Pipeline, ProcessingStage, Task
from curator.io import atomic_write

from tests.core.executors.fullfs import FullDiskFile


def make_partitions(n: int, per: int = 3, big: tuple[int, ...] = ()) -> list[Task]:
    """``n`` source partitions of ``per`` integer records each (4 times as many for the
    partition numbers in ``big``)."""
    return [Task(f"part{i:03d}", "nums", list(range(i * per, i * per + per * (4 if i in big else 1))))
            for i in range(n)]


@dataclass
class Numbers(ProcessingStage):
    """Source stage: emits ``n`` tasks of ``per`` integers from the empty root task."""

    n: int = 6
    per: int = 3
    name: str = "Numbers"

    def process(self, task: Task) -> list[Task]:
        return make_partitions(self.n, self.per)


@dataclass
class StreamedNumbers(Numbers):
    """``Numbers`` listed in chunks of ``chunk`` (``process_stream``). ``yielded`` gets the time
    each chunk is handed on; with ``before_last`` set, the last chunk waits (10 s at most) for
    that event."""

    chunk: int = 2
    name: str = "StreamedNumbers"
    yielded: ClassVar[list[float]] = []
    before_last: ClassVar[threading.Event | None] = None

    @property
    def is_source(self) -> bool:
        return True

    def process_stream(self, task: Task) -> Iterator[list[Task]]:
        parts = make_partitions(self.n, self.per)
        for k in range(0, len(parts), self.chunk):
            if k + self.chunk >= len(parts) and self.before_last is not None:
                self.before_last.wait(10)
            StreamedNumbers.yielded.append(time.time())
            yield parts[k:k + self.chunk]


@dataclass
class Stamp(ProcessingStage):
    """Notes when each task ran (``metadata["ran_at"]``) and sets ``Stamp.ran``."""

    name: str = "Stamp"
    ran: ClassVar[threading.Event] = threading.Event()

    def process(self, task: Task) -> Task:
        Stamp.ran.set()
        task.metadata["ran_at"] = time.time()
        return task


@dataclass
class Square(ProcessingStage):
    """Stateless 1:1 stage: squares every record."""

    name: str = "Square"

    def process(self, task: Task) -> Task:
        return task.derive([x * x for x in task.data])


@dataclass
class SplitInTwo(ProcessingStage):
    """1:n stage with setup(): splits a task in two halves (ids suffixed _0, _1)."""

    name: str = "SplitInTwo"

    def setup(self, worker_metadata=None) -> None:
        self.ready = True

    def process(self, task: Task) -> list[Task]:
        assert self.ready, "setup() did not run"
        half = len(task.data) // 2
        return [task.derive(task.data[:half], suffix=0), task.derive(task.data[half:], suffix=1)]


@dataclass
class DieOnce(ProcessingStage):
    """Kills its worker process (``os._exit``) the first time it sees ``victim``; a marker file
    in ``marker_dir`` says the first attempt happened."""

    marker_dir: str = ""
    victim: str = "part001"
    name: str = "DieOnce"
    worker_mode: str = "process"

    def process(self, task: Task) -> Task:
        if task.task_id.startswith(self.victim):
            marker = os.path.join(self.marker_dir, f"died-{task.task_id}")
            if not os.path.exists(marker):
                open(marker, "w").close()
                os._exit(3)
        return task


@dataclass
class RaiseOn(ProcessingStage):
    """Raises on every attempt for ``victim`` (it must end in the rejected sink)."""

    victim: str = "part002"
    name: str = "RaiseOn"

    def process(self, task: Task) -> Task:
        if task.task_id.startswith(self.victim):
            raise RuntimeError(f"cannot handle {task.task_id}")
        return task


@dataclass
class JsonWriter(ProcessingStage):
    """Writes each task's records to ``{out_dir}/{task_id}.jsonl`` atomically.

    With ``hang_after`` > 0 only the first ``hang_after`` partitions to reach the writer are
    written; it stalls (sleeps until killed) on every other one, whatever order the executor
    hands them out in (Ray's schedulers promise none): the test then kills the run mid-way. With
    ``full_after`` > 0 the disk is "full" for files over that many bytes: their write raises
    ``OSError(ENOSPC)`` (see :mod:`tests.core.executors.fullfs`).
    """

    out_dir: str = ""
    hang_after: int = 0
    full_after: int = 0
    hang_on: str = ""
    name: str = "JsonWriter"

    def process(self, task: Task) -> FileGroupTask:
        while (self.hang_after and not self._claim(task.partition)
               or task.task_id == self.hang_on):
            time.sleep(1)
        path = os.path.join(self.out_dir, f"{task.task_id}.jsonl")
        with atomic_write(path, "w") as raw:
            fh = FullDiskFile(raw, self.full_after) if self.full_after else raw
            for x in task.data:
                fh.write(json.dumps({"id": task.task_id, "x": x}) + "\n")
        return FileGroupTask(task.task_id, task.dataset_name, [path], metadata=dict(task.metadata))

    def _claim(self, partition: str) -> bool:
        """Whether ``partition`` is one of the first ``hang_after`` to get here (claims are
        lines of a file beside ``out_dir``, under a lock shared by threads and processes)."""
        with open(f"{self.out_dir}.claims", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            fh.seek(0)
            claimed = fh.read().split()
            if partition not in claimed and len(claimed) < self.hang_after:
                fh.write(partition + "\n")
                claimed.append(partition)
            return partition in claimed


def read_records(out_dir: str) -> list[tuple[str, int]]:
    """Every record written under ``out_dir`` (duplicates kept, so tests can count them)."""
    recs = []
    for name in sorted(os.listdir(out_dir)):
        if name.endswith(".jsonl"):
            with open(os.path.join(out_dir, name)) as fh:
                recs += [(r["id"], r["x"]) for r in map(json.loads, fh)]
    return sorted(recs)


def resume_pipeline(out_dir: str, hang_after: int = 0, full_after: int = 0,
                    hang_on: str = "") -> Pipeline:
    return Pipeline("resume", stages=[Square(), SplitInTwo(),
                                      JsonWriter(out_dir, hang_after, full_after, hang_on)])


def expected_records(parts: list[Task]) -> list[tuple[str, int]]:
    """What :func:`resume_pipeline` writes for ``parts`` (sorted, each record once)."""
    out = []
    for t in parts:
        half = len(t.data) // 2
        out += [(f"{t.task_id}_{0 if k < half else 1}", x * x) for k, x in enumerate(t.data)]
    return sorted(out)


def make_executor(kind: str, address: str | None = None):
    if kind.startswith("local"):  # local, local_fused_thread, local_fused_process
        from curator import LocalExecutor

        fuse = kind.rsplit("_", 1)[1] if kind.startswith("local_fused") else False
        return LocalExecutor(num_workers=2, fuse_stages=fuse)
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    cls = RayDataExecutor if kind == "ray_data" else RayActorPoolExecutor
    return cls(address=address) if address else cls()


if __name__ == "__main__":  # a job for test_resume; argument: a JSON object of options
    from curator import LocalExecutor

    opts = json.loads(sys.argv[1])
    parts = make_partitions(opts["n"], big=tuple(opts.get("big", ())))
    executor = make_executor(opts["kind"], opts.get("address"))
    if opts["kind"] == "local" and opts.get("hang_after"):
        # stalled writes hold their worker: with a writer per task, early partitions that
        # arrive after later ones (two workers upstream) still find a free writer
        executor = LocalExecutor(num_workers={"Square": 2, "SplitInTwo": 2,
                                              "JsonWriter": 2 * opts["n"]})
    result = resume_pipeline(opts["out"], opts.get("hang_after", 0), opts.get("full_after", 0),
                             opts.get("hang_on", "")).run(
        executor, initial_tasks=parts,
        checkpoint_dir=opts["ckpt"], rejected_dir=opts.get("rejected"), summary=False,
        raise_on_failure=False)
    print(json.dumps({"skipped": result.stats.stages[0].skipped, "outputs": len(result),
                      "ok": result.ok, "failed": sorted(f.task_id for f in result.failed)}))
