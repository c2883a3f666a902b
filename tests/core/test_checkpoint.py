from __future__ import annotations

from curator import Pipeline, ProcessingStage, Task
from curator.checkpoint import CheckpointStore, PartitionTracker


def test_checkpoint_store_marks_and_reloads(tmp_path):
    store = CheckpointStore(str(tmp_path))
    assert store.done() == set() and not store.is_done("p1")
    store.mark_done("p1")
    store.mark_done("s3://bucket/file 1.jsonl")
    assert store.is_done("p1") and store.is_done("s3://bucket/file 1.jsonl")
    again = CheckpointStore(str(tmp_path))  # a later run sees them
    assert again.is_done("p1") and again.is_done("s3://bucket/file 1.jsonl")
    assert not again.is_done("p2")
    assert CheckpointStore.key("s3://a") != CheckpointStore.key("s3:/a")
    assert not [p for p in (tmp_path / "done").iterdir() if ".tmp-" in p.name]


def test_partition_tracker_fires_when_all_descendants_finish():
    done = []
    tr = PartitionTracker(done.append)
    tr.started("p", 2)
    tr.started("q")
    tr.started(None)
    tr.finished("p")
    assert done == [] and tr.in_flight == 2
    tr.finished("q")
    tr.finished("p")
    tr.finished(None)
    assert done == ["q", "p"] and tr.in_flight == 0


class Split(ProcessingStage):
    def process(self, task):
        return [task.derive([x], suffix=x) for x in task.data]


class Record(ProcessingStage):
    seen: list = []

    def __deepcopy__(self, memo):
        return self

    def process(self, task):
        Record.seen.append(task.task_id)
        if task.task_id == "b_1" and Record.fail:
            raise RuntimeError("crash in b")
        return task


def test_resumed_run_skips_finished_partitions(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    Record.seen, Record.fail = [], False
    Pipeline("p", stages=[Split(), Record()]).run(
        initial_tasks=[Task("a", "ds", [0, 1])], checkpoint_dir=ckpt, summary=False)
    assert CheckpointStore(ckpt).is_done("a")  # every task of 'a' passed the last stage
    Record.seen = []
    out = Pipeline("p", stages=[Split(), Record()]).run(
        initial_tasks=[Task("a", "ds", [0, 1]), Task("b", "ds", [0, 1])], checkpoint_dir=ckpt,
        summary=False)
    assert sorted(Record.seen) == ["b_0", "b_1"]  # 'a' is not redone
    assert sorted(t.task_id for t in out) == ["b_0", "b_1"]
    assert out.stats.stages[0].skipped == 1
    assert CheckpointStore(ckpt).is_done("b")


def test_partition_with_a_rejected_task_counts_as_handled(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    Record.seen, Record.fail = [], True
    out = Pipeline("p", stages=[Split(), Record()]).run(
        initial_tasks=[Task("b", "ds", [0, 1])], checkpoint_dir=ckpt, max_retries=0,
        summary=False)
    assert [t.task_id for t in out] == ["b_0"]
    assert out.rejected.records[0].task_id == "b_1"  # kept in the rejected sink, not lost
    assert CheckpointStore(ckpt).is_done("b")
