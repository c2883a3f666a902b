"""A new non-Ray executor is one class, one method and one ``register`` line: the skeleton
(:meth:`BaseExecutor.execute`) gives it the source on the driver, checkpoints, retries, the
rejected sink, statistics and the result. This one runs every group over a window, one batch
after another, in this thread; it must agree with the local executor."""

from __future__ import annotations

import pytest
from curator import Pipeline
from curator.executors.base import BaseExecutor, Run
from curator.executors.fusion import ChainJob, StageGroup
from curator.run.tracker import CheckpointStore
from curator.spec import executor_from_spec
from curator.tasks import Task

from tests.core.executors.stages import (
    JsonWriter,
    Numbers,
    RaiseOn,
    SplitInTwo,
    Square,
    make_executor,
    read_records,
)


class SequentialExecutor(BaseExecutor):
    """Each window through each group in turn, batch by batch, in this thread."""

    name = "sequential"

    def run_groups(self, run: Run, groups: list[StageGroup], windows) -> None:
        for tasks in windows:
            for group in groups:
                job = ChainJob(group, run.ctx.max_retries, len(run.stages), run.outputs.collect)
                job.setup("sequential-0")
                passed_on: list[Task] = []
                for k in range(0, len(tasks), group.batch_size):
                    outcomes, out = job(tasks[k:k + group.batch_size], "sequential-0")
                    for outcome in outcomes:
                        run.book(outcome)
                    passed_on += out
                job.release()
                tasks = passed_on


@pytest.fixture
def sequential(curator_registry):
    curator_registry.register(SequentialExecutor, "executor", name="sequential")  # the one line
    return executor_from_spec({"executor": "sequential"})


def _run(executor, out, **kw):
    stages = [Numbers(n=6), Square(), RaiseOn(victim="part002"), SplitInTwo(),
              JsonWriter(str(out))]
    return Pipeline("parity", stages=stages).run(executor, summary=False,
                                                 raise_on_failure=False, **kw)


def _record(result, out):
    stats = {s.name: (s.tasks_in, s.tasks_out, s.items_in, s.items_out, s.failed_tasks,
                      s.retries, s.skipped) for s in result.stats.stages}
    return (read_records(str(out)), sorted(t.task_id for t in result), stats,
            sorted(f.task_id for f in result.failed), result.ok, result.rejected.counts)


def test_a_sequential_executor_matches_the_local_executor(sequential, tmp_path):
    assert isinstance(sequential, SequentialExecutor)
    got = _run(sequential, tmp_path / "seq")
    want = _run(make_executor("local_fused_thread"), tmp_path / "local")
    assert _record(got, tmp_path / "seq") == _record(want, tmp_path / "local")
    assert got.stats.executor == "sequential" and want.stats.executor == "local"
    # what the skeleton owns, checked on the new executor itself
    assert [f.task_id for f in got.failed] == ["part002"] and not got.ok  # kept whole
    assert got.stats.stages[0].workers == 1  # the source ran on the driver
    assert len(read_records(str(tmp_path / "seq"))) == 15  # 5 partitions, 3 records each


def test_the_skeleton_gives_a_new_executor_checkpoints_and_max_retries(sequential, tmp_path):
    ckpt = tmp_path / "ckpt"
    store = CheckpointStore(str(ckpt))
    for part in ("part000", "part003"):
        store.mark_done(part)
    executor = SequentialExecutor(max_retries=3)
    result = _run(executor, tmp_path / "out", checkpoint_dir=str(ckpt))
    assert result.stats.stages[0].skipped == 2
    assert {r[0][:7] for r in read_records(str(tmp_path / "out"))} == {
        "part001", "part004", "part005"}
    raise_on = {s.name: s for s in result.stats.stages}["RaiseOn"]
    assert (raise_on.failed_tasks, raise_on.retries) == (1, 3)  # the executor's max_retries
    assert CheckpointStore(str(ckpt)).done() == {"part000", "part001", "part003", "part004",
                                                 "part005"}


def test_the_dead_worker_policy_counts_in_the_counter_it_is_given():
    """Retry alone, then keep whole, whatever the counter (here: the in-memory one, as an engine
    whose counting process outlives its workers would pass; Ray Data passes one in Ray's KV)."""
    from curator.executors.retry import DeadWorkerPolicy, DeathTally, WorkerDied
    from curator.run.outcome import Outcome, StageCall

    tally = DeathTally()
    policy = DeadWorkerPolicy(max_retries=1, counter=tally)
    task = Task("t1", "ds", [1, 2])
    assert [policy.died(2, task), policy.gives_up(1)] == [1, False]
    assert [policy.died(2, task), policy.gives_up(2)] == [2, True]
    kept = policy.kept_whole(2, "Stage", task, 2, "died")
    assert (kept.index, kept.failed_task, kept.restarts, kept.retries) == (2, task, 2, 1)
    policy.forget(2, task)
    assert tally.counts == {}

    calls: list[list[str]] = []

    def attempt(batch: list[Task]):  # the task "bad" kills its worker every time
        calls.append([t.task_id for t in batch])
        if any(t.task_id == "bad" for t in batch):
            raise WorkerDied("worker died")
        return [Outcome.of(0, batch, StageCall(batch, [], 0.0, len(batch), len(batch)))], batch

    batch = [Task(i, "ds", [1]) for i in ("a", "bad", "b")]
    results = DeadWorkerPolicy(max_retries=1).run(
        batch, attempt, index=0, stage=Square(), split=lambda b: [[t] for t in b],
        task_of=lambda b: b[0])
    assert calls == [["a", "bad", "b"], ["a"], ["bad"], ["bad"], ["b"]]
    assert [[o.consumed for o in r[0]] for r in results[::2]] == [
        [[(None, "a")]], [[(None, "b")]]]
    assert results[0][0][0].restarts == 1  # the batch's death, on the first outcome booked
    (kept,), passed_on = results[1]
    assert passed_on is None and kept.failed_task.task_id == "bad" and kept.restarts == 2
