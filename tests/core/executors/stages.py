"""Tiny stages and a pipeline shared by the executor tests (and run as a job by test_resume)."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass

from curator import FileGroupTask, Pipeline, ProcessingStage, Task
from curator.io import atomic_write


def make_partitions(n: int, per: int = 3) -> list[Task]:
    """``n`` source partitions of ``per`` integer records each."""
    return [Task(f"part{i:03d}", "nums", list(range(i * per, (i + 1) * per))) for i in range(n)]


@dataclass
class Numbers(ProcessingStage):
    """Source stage: emits ``n`` tasks of ``per`` integers from the empty root task."""

    n: int = 6
    per: int = 3
    name: str = "Numbers"

    def process(self, task: Task) -> list[Task]:
        return make_partitions(self.n, self.per)


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

    With ``hang_after`` > 0 it stalls (sleeps until killed) on every partition numbered
    ``hang_after`` or more, so exactly the first ``hang_after`` partitions can finish (every
    executor hands out work in order): the test then kills the run mid-way.
    """

    out_dir: str = ""
    hang_after: int = 0
    name: str = "JsonWriter"

    def process(self, task: Task) -> FileGroupTask:
        while self.hang_after and int(task.partition.removeprefix("part")) >= self.hang_after:
            time.sleep(1)
        path = os.path.join(self.out_dir, f"{task.task_id}.jsonl")
        with atomic_write(path, "w") as fh:
            for x in task.data:
                fh.write(json.dumps({"id": task.task_id, "x": x}) + "\n")
        return FileGroupTask(task.task_id, task.dataset_name, [path], metadata=dict(task.metadata))


def read_records(out_dir: str) -> list[tuple[str, int]]:
    """Every record written under ``out_dir`` (duplicates kept, so tests can count them)."""
    recs = []
    for name in sorted(os.listdir(out_dir)):
        if name.endswith(".jsonl"):
            with open(os.path.join(out_dir, name)) as fh:
                recs += [(r["id"], r["x"]) for r in map(json.loads, fh)]
    return sorted(recs)


def resume_pipeline(out_dir: str, hang_after: int = 0) -> Pipeline:
    return Pipeline("resume", stages=[Square(), SplitInTwo(),
                                      JsonWriter(out_dir, hang_after)])


def make_executor(kind: str, address: str | None = None):
    if kind == "local":
        from curator import LocalExecutor

        return LocalExecutor(num_workers=2)
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    cls = RayDataExecutor if kind == "ray_data" else RayActorPoolExecutor
    return cls(address=address) if address else cls()


if __name__ == "__main__":  # a job for test_resume: kind out_dir checkpoint_dir n hang_after [addr]
    kind, out, ckpt, n, hang = sys.argv[1:6]
    addr = sys.argv[6] if len(sys.argv) > 6 else None
    result = resume_pipeline(out, int(hang)).run(
        make_executor(kind, addr), initial_tasks=make_partitions(int(n)), checkpoint_dir=ckpt,
        summary=False)
    print(json.dumps({"skipped": result.stats.stages[0].skipped, "outputs": len(result)}))
