"""Tiny stages for the report tests: a source, a stage that rejects by reason, one that fails."""

from __future__ import annotations

from dataclasses import dataclass

from curator import ProcessingStage, Task
from curator.run.stats import ScoreSketch

from tests.core.executors.stages import make_partitions


@dataclass
class Parts(ProcessingStage):
    """Source: ``n`` partitions of 4 integers."""

    n: int = 5
    name: str = "Parts"

    def process(self, task: Task) -> list[Task]:
        return make_partitions(self.n, 4)


@dataclass
class DropByReason(ProcessingStage):
    """Rejects odd numbers ("odd") and multiples of 10 ("round"); keeps the rest."""

    name: str = "DropByReason"

    def drain_histograms(self) -> dict[str, ScoreSketch]:
        """Publishes the numbers it saw as the score "value" (threshold 10 marked)."""
        sketch, self._sketch = getattr(self, "_sketch", None), None
        return {"value": sketch} if sketch is not None else {}

    def process(self, task: Task) -> Task:
        if getattr(self, "_sketch", None) is None:
            self._sketch = ScoreSketch(thresholds=[10])
        self._sketch.add(task.data)
        keep = []
        for x in task.data:
            if x % 2:
                self.reject(task, "odd", record={"x": x}, kind="filtered")
            elif x % 10 == 0:
                self.reject(task, "round", record={"x": x}, kind="filtered")
            else:
                keep.append(x)
        return task.derive(keep)


@dataclass
class FailOn(ProcessingStage):
    """Raises for the task ``victim`` (every attempt)."""

    victim: str = "part002"
    name: str = "FailOn"

    def process(self, task: Task) -> Task:
        if task.task_id == self.victim:
            raise RuntimeError("disk on fire")
        return task


@dataclass
class CountParity(ProcessingStage):
    """Publishes the counter ``parity`` ({"even": n, "odd": m}) of every task; with
    ``fail_first`` it publishes, then raises, on its first attempt at each task (the retry must
    not count twice)."""

    fail_first: bool = False
    name: str = "CountParity"

    def process(self, task: Task) -> Task:
        odd = sum(x % 2 for x in task.data)
        self.publish_counts("parity", {"even": len(task.data) - odd, "odd": odd})
        seen = self.__dict__.setdefault("_seen", set())
        if self.fail_first and task.task_id not in seen:
            seen.add(task.task_id)
            raise RuntimeError("first attempt fails after counting")
        return task


@dataclass
class Hog(ProcessingStage):
    """Touches ``mb`` MiB of memory for every task (in a worker process of its own)."""

    mb: int = 256
    name: str = "Hog"
    worker_mode: str = "process"

    def setup(self, worker_metadata=None) -> None:  # an actor of its own on Ray
        self.ready = True

    def process(self, task: Task) -> Task:
        block = b"\x01" * (self.mb << 20)
        assert block[-1] == 1
        del block
        return task


@dataclass
class Cheap(ProcessingStage):
    """Passes tasks on (in a worker process of its own)."""

    name: str = "Cheap"
    worker_mode: str = "process"

    def setup(self, worker_metadata=None) -> None:  # an actor of its own on Ray
        self.ready = True

    def process(self, task: Task) -> Task:
        return task


@dataclass
class FileLines(ProcessingStage):
    """Reads the files of a partition: one task of their line lengths."""

    name: str = "FileLines"

    def process(self, task: Task) -> Task:
        lines = [len(line) for path in task.data for line in open(path)]
        return Task(task_id=task.task_id, dataset_name=task.dataset_name, data=lines)


@dataclass
class ReadNumbers(ProcessingStage):
    """Reads a partition's text files of one integer per line; a line that is not an integer is
    rejected as ``"malformed line at PATH:LINE"`` (a reason that names its place)."""

    name: str = "ReadNumbersFromTextFilesWithAVeryLongStageName"

    def process(self, task: Task) -> Task:
        numbers = []
        for path in task.data:
            for n, line in enumerate(open(path), 1):
                try:
                    numbers.append(int(line))
                except ValueError:
                    self.reject(task, f"malformed line at {path}:{n}", record={"line": line})
        return Task(task_id=task.task_id, dataset_name=task.dataset_name, data=numbers)


@dataclass
class WriteNumbers(ProcessingStage):
    """Writes each task's numbers to ``out_dir/<task id>.txt``; outputs one file per task."""

    out_dir: str = ""
    name: str = "WriteNumbers"

    def process(self, task: Task) -> Task:
        import os

        from curator import FileGroupTask

        path = os.path.join(self.out_dir, f"{task.task_id}.txt")
        with open(path, "w") as fh:
            fh.writelines(f"{x}\n" for x in task.data)
        return FileGroupTask(task_id=task.task_id, dataset_name=task.dataset_name, data=[path])
