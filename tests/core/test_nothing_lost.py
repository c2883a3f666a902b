"""Issue 13 (items 2-4): a failed task is kept whole and can be replayed; a run with failed
tasks is not ok (and can raise); rejected-sink entries never overwrite each other."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import pyarrow as pa
import pytest
from curator import Pipeline, ProcessingStage, Task
from curator.pipeline import PipelineFailedError

from tests.core.executors.stages import Square, make_partitions


@dataclass
class FailWhile(ProcessingStage):
    """Raises for ``victim`` while the file ``broken`` exists (deleting it "fixes the bug")."""

    broken: str = ""
    victim: str = "part001"
    name: str = "FailWhile"

    def process(self, task: Task) -> Task:
        if task.task_id == self.victim and os.path.exists(self.broken):
            raise OSError(28, "No space left on device")
        return task.derive([x + 1 for x in task.data])


@dataclass
class RejectTwoThenRaise(ProcessingStage):
    """Rejects two records of ``victim``, then raises (every attempt)."""

    victim: str = "part001"
    name: str = "RejectTwoThenRaise"

    def process(self, task: Task) -> Task:
        if task.task_id == self.victim:
            self.reject(task, "too short", record={"x": task.data[0]})
            self.reject(task, "too long", record={"x": task.data[1]})
            raise RuntimeError("and then it broke")
        return task


@dataclass
class DropOdd(ProcessingStage):
    """Rejects odd records by design (like a filter in split mode); never fails."""

    name: str = "DropOdd"

    def process(self, task: Task) -> Task:
        for x in task.data:
            if x % 2:
                self.reject(task, "odd", record={"x": x}, kind="filtered")
        return task.derive([x for x in task.data if x % 2 == 0])


def _entries(folder) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_a_stage_that_rejects_then_raises_leaves_every_entry_on_disk(tmp_path):
    # before: the failed-task entry overwrote the 2 records (1 entry on disk, 3 counted)
    rej = tmp_path / "rej"
    result = Pipeline("p", stages=[RejectTwoThenRaise()]).run(
        initial_tasks=make_partitions(3), rejected_dir=str(rej), max_retries=1, summary=False,
        raise_on_failure=False)
    assert result.rejected.counts == {"RejectTwoThenRaise": 3}
    on_disk = [json.loads(line) for f in sorted(rej.rglob("*.jsonl"))
               for line in f.read_text().splitlines()]
    assert len(on_disk) == 3  # as many entries on disk as counted
    assert sorted(e["reason"] for e in on_disk) == ["task failed after retries", "too long",
                                                    "too short"]
    assert _entries(rej) == ["RejectTwoThenRaise/part001.failed.jsonl",
                             "RejectTwoThenRaise/part001.failed.task.json",
                             "RejectTwoThenRaise/part001.jsonl"]


def test_records_rejected_by_design_leave_the_run_ok(tmp_path):
    result = Pipeline("p", stages=[DropOdd()]).run(
        initial_tasks=make_partitions(2), rejected_dir=str(tmp_path), summary=False,
        raise_on_failure=True)
    assert result.ok and result.failed == [] and result.rejected.total == 3


def test_failed_run_is_not_ok_and_can_raise_naming_the_task(tmp_path):
    broken = tmp_path / "broken"
    broken.touch()
    stages = [Square(), FailWhile(str(broken))]
    result = Pipeline("p", stages=stages).run(initial_tasks=make_partitions(3), summary=False,
                                              raise_on_failure=False)
    assert not result.ok and [(f.stage, f.task_id) for f in result.failed] == [
        ("FailWhile", "part001")]
    assert "No space left on device" in result.failed[0].error
    with pytest.raises(PipelineFailedError, match=r"(?s)1 task\(s\) failed.*FailWhile/part001") as exc:
        Pipeline("p", stages=stages).run(initial_tasks=make_partitions(3), summary=False)
    assert [f.task_id for f in exc.value.failed] == ["part001"]
    assert exc.value.result.ok is False and len(exc.value.result) == 2  # the others went on


def test_failed_task_is_replayed_from_the_stage_where_it_failed(tmp_path):
    rej, broken = tmp_path / "rej", tmp_path / "broken"
    broken.touch()
    pipe = Pipeline("p", stages=[Square(), FailWhile(str(broken))])
    first = pipe.run(initial_tasks=make_partitions(3), rejected_dir=str(rej), summary=False,
                     raise_on_failure=False)
    assert not first.ok and sorted(t.task_id for t in first) == ["part000", "part002"]

    again = pipe.replay(str(rej), summary=False,
                        raise_on_failure=False)  # still broken: fails again, entry kept
    assert not again.ok and len(again) == 0
    assert _entries(rej) == ["FailWhile/part001.failed.jsonl", "FailWhile/part001.failed.task.json"]

    broken.unlink()  # the cause is fixed
    replayed = pipe.replay(str(rej), summary=False, raise_on_failure=False)
    assert replayed.ok and [t.task_id for t in replayed] == ["part001"]
    # squared once (Square is not redone), then +1 by the stage where it failed
    assert replayed[0].data == [x * x + 1 for x in (3, 4, 5)]
    assert replayed.stats.stages[0].tasks_in == 0 and replayed.stats.stages[1].tasks_in == 1
    assert _entries(rej) == [".replayed/FailWhile/part001.failed.jsonl",
                             ".replayed/FailWhile/part001.failed.task.json"]
    assert pipe.replay(str(rej), summary=False,
                       raise_on_failure=False) == []  # nothing left to replay


def test_tabular_task_is_kept_as_parquet_and_replayed_from_memory_too(tmp_path):
    table = pa.table({"text": ["a", "bb", "ccc"], "n": [1, 2, 3]})

    @dataclass
    class Explode(ProcessingStage):
        broken: str = ""
        name: str = "Explode"

        def process(self, task: Task) -> Task:
            if os.path.exists(self.broken):
                raise ValueError("boom")
            return task.derive(task.data.append_column("ok", pa.array([True] * len(task.data))))

    broken = tmp_path / "broken"
    broken.touch()
    rej = tmp_path / "rej"
    pipe = Pipeline("t", stages=[Explode(str(broken))])
    tasks = [Task("doc0", "ds", table, metadata={"source_files": ["in.jsonl"]})]
    first = pipe.run(initial_tasks=tasks, rejected_dir=str(rej), summary=False,
                     raise_on_failure=False)
    assert not first.ok
    import pyarrow.parquet as pq

    assert pq.read_table(rej / "Explode" / "doc0.failed.parquet").equals(table)  # data whole
    in_memory = pipe.run(initial_tasks=tasks, summary=False,
                         raise_on_failure=False)  # no rejected_dir: kept in memory
    assert in_memory.failed[0].task.data.equals(table)

    broken.unlink()
    from_disk = pipe.replay(str(rej), summary=False, raise_on_failure=False)
    from_memory = pipe.replay(in_memory, summary=False, raise_on_failure=False)
    for result in (from_disk, from_memory):
        assert result.ok and result[0].data.column("ok").to_pylist() == [True] * 3
        assert result[0].metadata["source_files"] == ["in.jsonl"]


def test_sink_entries_for_the_same_stage_and_task_never_overwrite(tmp_path):
    from curator.run.sink import RejectedRecord, RejectedSink

    sink = RejectedSink(str(tmp_path))
    rec = RejectedRecord("S", "bad", task_id="t")
    sink.add("S", "t", [rec])
    sink.add("S", "t", [rec, rec])  # e.g. records of two tasks that share an id
    sink.add_failed(RejectedRecord("S", "failed", task_id="t", kind="task"), Task("t", "d", [1]))
    sink.add_failed(RejectedRecord("S", "failed", task_id="t", kind="task"), Task("t", "d", [2]))
    assert _entries(tmp_path) == ["S/t.2.failed.jsonl", "S/t.2.failed.task.json", "S/t.2.jsonl",
                                  "S/t.failed.jsonl", "S/t.failed.task.json", "S/t.jsonl"]
    lines = sum(len(f.read_text().splitlines()) for f in tmp_path.rglob("*.jsonl"))
    assert lines == sink.total == 5
