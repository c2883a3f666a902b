"""What a source stage books after its last chunk (a bad record at the very end of its input,
a closing counter) reaches the rejected sink and the statistics on every executor: the driver
runs every source through one function (``invoke_source``), which drains the stage once more
when its stream ends."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from curator import LocalExecutor, Pipeline, ProcessingStage, Task
from curator.stages.file_partitioning import FilePartitioningStage

from tests.core.executors.stages import make_partitions


@dataclass
class TrailingBadRecord(ProcessingStage):
    """A source that yields its partitions in chunks, then finds one bad record (and counts
    what it read) after the last chunk, as a reader does at the end of its file."""

    n: int = 4
    chunk: int = 2
    empty: bool = False
    name: str = "TrailingBadRecord"

    @property
    def is_source(self) -> bool:
        return True

    def process(self, task: Task) -> list[Task]:
        return [t for chunk in self.process_stream(task) for t in chunk]

    def process_stream(self, task: Task) -> Iterator[list[Task]]:
        parts = [] if self.empty else make_partitions(self.n)
        for k in range(0, len(parts), self.chunk):
            yield parts[k:k + self.chunk]
        self.reject(None, "malformed tail", record={"line": "{"}, source="input:99")
        self.publish_counts("lines", {"read": 3 * len(parts) + 1})


@dataclass
class Passthrough(ProcessingStage):
    name: str = "Passthrough"

    def process(self, task: Task) -> Task:
        return task


@dataclass
class RejectsEmptyFiles(FilePartitioningStage):
    """A partitioner that rejects an empty file instead of handing it on."""

    name: str = "RejectsEmptyFiles"

    def tasks_for(self, group, size):
        if size == 0:
            self.reject(None, "empty file", record={"path": group[0]}, source=group[0])
            return
        yield from super().tasks_for(group, size)


@pytest.mark.parametrize("fuse", [False, "process"])
def test_rejection_after_the_last_chunk_is_kept(fuse):
    result = Pipeline("tail", stages=[TrailingBadRecord(), Passthrough()]).run(
        LocalExecutor(num_workers=1, fuse_stages=fuse), summary=False)
    assert sorted(t.task_id for t in result) == [f"part{i:03d}" for i in range(4)]
    assert result.rejected.counts == {"TrailingBadRecord": 1}
    [rec] = result.rejected.records
    assert (rec.reason, rec.source) == ("malformed tail", "input:99")
    source = result.stats.stages[0]
    assert source.rejected_by_reason == {"malformed tail": 1}
    assert source.counters["lines"] == {"read": 13}
    assert (source.tasks_in, source.tasks_out) == (1, 4)
    assert result.ok


def test_a_stream_with_nothing_but_a_rejection():
    result = Pipeline("only_bad", stages=[TrailingBadRecord(empty=True), Passthrough()]).run(
        LocalExecutor(num_workers=1), summary=False)
    assert list(result) == [] and result.rejected.counts == {"TrailingBadRecord": 1}


def test_file_partitioning_rejection_of_the_last_file_is_kept(tmp_path):
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("x\n")
    (tmp_path / "z.txt").write_text("")  # listed last
    for chunk in (1, 2, 1024):  # the last file alone, after a full chunk, in the only chunk
        stage = RejectsEmptyFiles(file_paths=str(tmp_path))
        stage.stream_chunk = chunk
        result = Pipeline("files", stages=[stage, Passthrough()]).run(
            LocalExecutor(num_workers=1), summary=False)
        assert len(result) == 3
        [rec] = result.rejected.records
        assert rec.reason == "empty file" and rec.source.endswith("z.txt")
        assert result.stats.stages[0].counters["input_bytes"]["listing_done"] == 1
