from __future__ import annotations

from curator import Pipeline, ProcessingStage, Task
from curator.run.tracker import CheckpointStore, PartitionTracker


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


def test_partition_tracker_marks_a_partition_when_all_descendants_finish(tmp_path):
    store = CheckpointStore(str(tmp_path))
    tr = PartitionTracker(store, n_stages=2)
    tr.seed("p", "p")
    tr.seed("q", "q")
    tr.seed(None, "x")  # no partition: not tracked
    tr.report(0, [("p", "p")], [("p", "p_0"), ("p", "p_1")])  # 1:2 at stage 0
    tr.report(1, [("p", "p_0")], [])
    assert store.done() == set() and tr.in_flight == 2  # q, p_1
    tr.report(0, [("q", "q")], [("q", "q")])
    tr.report(1, [("q", "q")], [("q", "q")])  # outputs of the last stage are final
    tr.report(1, [("p", "p_1")], [])
    assert store.done() == {"q", "p"} and tr.finished == ["q", "p"] and tr.in_flight == 0


def test_partition_tracker_never_marks_a_partition_with_a_failed_task(tmp_path):
    store = CheckpointStore(str(tmp_path))
    tr = PartitionTracker(store, n_stages=2)
    tr.seed("p", "p")
    tr.report(0, [("p", "p")], [("p", "p_0"), ("p", "p_1")])
    tr.report(1, [("p", "p_1")], [], failed=True)  # e.g. the writer hit a full disk
    tr.report(1, [("p", "p_0")], [])
    assert store.done() == set() and tr.failed_partitions == {"p"} and tr.in_flight == 0


def test_partition_tracker_counts_without_a_checkpoint_when_asked():
    """What an executor redoing a dead worker's partitions asks: which are unfinished, and
    which of their tasks a stage has still to consume."""
    quiet = PartitionTracker(None, n_stages=3)
    quiet.seed("p", "p")
    assert quiet.open_partitions() == set() and quiet.in_flight == 0  # tracks nothing
    tr = PartitionTracker(None, n_stages=3, count=True)
    tr.seed("p", "p")
    tr.seed("q", "q")
    tr.report(0, [("p", "p")], [("p", "p_0"), ("p", "p_1")])
    tr.report(1, [("p", "p_0")], [("p", "p_0")])
    tr.report(0, [("q", "q")], [("q", "q")])
    tr.report(1, [("q", "q")], [("q", "q")])
    tr.report(2, [("q", "q")], [])
    assert tr.open_partitions() == {"p"} and tr.finished == []  # nothing marked
    assert tr.outstanding({"p"}, {1}) == {(1, "p", "p_1")}
    assert tr.outstanding({"p", "q"}, {1, 2}) == {(1, "p", "p_1"), (2, "p", "p_0")}


def test_partition_tracker_accepts_reports_out_of_order(tmp_path):
    store = CheckpointStore(str(tmp_path))
    tr = PartitionTracker(store, n_stages=3)
    tr.seed("p", "p")
    tr.report(0, [("p", "p")], [("p", "p")])
    tr.report(2, [("p", "p")], [])  # stage 2's report overtakes stage 1's: not done yet
    assert store.done() == set()
    tr.report(1, [("p", "p")], [("p", "p")])
    assert store.done() == {"p"}


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


def test_partition_with_a_failed_task_is_redone_on_resume(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    Record.seen, Record.fail = [], True
    out = Pipeline("p", stages=[Split(), Record()]).run(
        initial_tasks=[Task("b", "ds", [0, 1])], checkpoint_dir=ckpt, max_retries=0,
        summary=False, raise_on_failure=False)
    assert [t.task_id for t in out] == ["b_0"]
    assert out.rejected.records[0].task_id == "b_1"  # kept in the rejected sink, not lost
    assert not out.ok and [f.task_id for f in out.failed] == ["b_1"]
    assert out.failed[0].task.data == [1]  # the failed task is kept whole
    assert not CheckpointStore(ckpt).is_done("b")  # a failed task is not "done"
    Record.seen, Record.fail = [], False  # the cause is fixed: the resumed run redoes 'b'
    again = Pipeline("p", stages=[Split(), Record()]).run(
        initial_tasks=[Task("b", "ds", [0, 1])], checkpoint_dir=ckpt, summary=False,
        raise_on_failure=False)
    assert again.ok and sorted(Record.seen) == ["b_0", "b_1"]
    assert CheckpointStore(ckpt).is_done("b")
