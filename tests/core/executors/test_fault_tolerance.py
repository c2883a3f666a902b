"""Every executor survives a worker process that dies mid-task and a task that keeps raising."""

from __future__ import annotations

import json
import os

import pytest
from curator import Pipeline
from curator.task_files import load_task

from tests.core.executors.stages import (
    DieOnce,
    JsonWriter,
    RaiseOn,
    Square,
    make_executor,
    make_partitions,
    read_records,
)

EXECUTORS = ["local", "local_fused_thread", "local_fused_process",
             pytest.param("ray_data", marks=pytest.mark.ray),
             pytest.param("ray_actor_pool", marks=pytest.mark.ray)]


@pytest.fixture
def executor(request):
    if request.node.get_closest_marker("ray"):
        request.getfixturevalue("ray_cluster")
    return make_executor(request.param)


@pytest.mark.parametrize("executor", EXECUTORS, indirect=True)
def test_dead_worker_is_replaced_and_failing_task_rejected(executor, tmp_path):
    out, markers, rejected = tmp_path / "out", tmp_path / "markers", tmp_path / "rejected"
    markers.mkdir()
    pipe = Pipeline("faults", stages=[Square(), DieOnce(str(markers), victim="part001"),
                                      RaiseOn(victim="part002"), JsonWriter(str(out))])
    result = pipe.run(executor, initial_tasks=make_partitions(5), rejected_dir=str(rejected),
                      max_retries=1, summary=False, raise_on_failure=False)

    assert os.listdir(markers) == ["died-part001"]  # the first attempt really died
    expected = sorted((f"part{i:03d}", x * x) for i in (0, 1, 3, 4) for x in range(3 * i, 3 * i + 3))
    assert read_records(str(out)) == expected  # every other record exactly once
    assert result.rejected.counts == {"RaiseOn": 1}
    stats = {s.name: s for s in result.stats.stages}
    assert stats["RaiseOn"].failed_tasks == 1 and stats["RaiseOn"].retries == 1
    assert stats["JsonWriter"].tasks_in == 4
    lines = (rejected / "RaiseOn" / "part002.failed.jsonl").read_text().splitlines()
    entry = json.loads(lines[0])
    assert entry["kind"] == "task" and "cannot handle part002" in entry["error"]
    kept = load_task(str(rejected / "RaiseOn" / "part002.failed.task.json"))
    assert kept.task_id == "part002" and kept.data == [36, 49, 64]  # the whole task, squared
    assert not result.ok and [str(f).split(":")[0] for f in result.failed] == ["RaiseOn/part002"]
    if executor.name == "local":  # fused or not: DieOnce starts its group
        assert stats["DieOnce"].worker_restarts == 1
    else:  # fused: counted on the group's first stage (Ray Data: by the driver, exactly once)
        assert sum(s.worker_restarts for s in stats.values()) == 1


def test_local_fused_chain_rejects_a_task_that_kills_every_worker(tmp_path):
    """The same dead-worker policy on the local executor's fused worker processes: the batch
    is split, the killer kept whole in the sink after max_retries + 1 deaths, the rest written
    once each."""
    out, markers, rejected = tmp_path / "out", tmp_path / "markers", tmp_path / "rejected"
    markers.mkdir()
    killer = DieOnce(str(markers), victim="part001")
    killer.process = lambda task: os._exit(3) if task.task_id == "part001" else task
    stages = [Square(), Square().with_(name="again", batch_size=3),
              killer.with_(batch_size=3), JsonWriter(str(out)).with_(batch_size=3)]
    result = Pipeline("killer", stages=stages).run(
        make_executor("local_fused_process"), initial_tasks=make_partitions(3), max_retries=1,
        rejected_dir=str(rejected), summary=False, raise_on_failure=False)

    assert sorted({r[0] for r in read_records(str(out))}) == ["part000", "part002"]
    assert len(read_records(str(out))) == 6  # three records each, none twice
    assert not result.ok and [str(f).split(":")[0] for f in result.failed] == ["again/part001"]
    kept = load_task(str(rejected / "again" / "part001.failed.task.json"))
    assert kept.data == [9, 16, 25]  # whole, as it entered the fused group (squared once)
    stats = {s.name: s for s in result.stats.stages}
    assert stats["again"].workers == stats["JsonWriter"].workers  # one group, one pool
    assert stats["again"].worker_restarts >= 2  # the batch at least once, then the task twice


@pytest.mark.ray
@pytest.mark.parametrize("kind", ["ray_actor_pool", "ray_data"])
def test_ray_rejects_a_task_that_kills_every_worker(ray_cluster, tmp_path, kind):
    """One dead-worker policy on both Ray executors: the task is kept whole in the rejected
    sink after max_retries + 1 deaths and the run goes on (Ray Data used to fail the run)."""
    out, markers = tmp_path / "out", tmp_path / "markers"
    markers.mkdir()
    killer = DieOnce(str(markers), victim="part001")
    killer.process = lambda task: os._exit(3) if task.task_id == "part001" else task
    result = Pipeline("killer", stages=[Square(), killer, JsonWriter(str(out))]).run(
        make_executor(kind), initial_tasks=make_partitions(3), max_retries=1,
        summary=False, raise_on_failure=False)

    assert {r[0] for r in read_records(str(out))} == {"part000", "part002"}
    assert result.rejected.counts == {"Square": 1}  # counted on the group's first stage
    stats = result.stats.stages[0]
    # part001 killed its actor twice (1 retry, then rejected). Ray may also lose the reply of the
    # call that finished just before the os._exit, so that task is redone once, with one restart
    # and one retry; a task that dies and then succeeds adds as many restarts as retries.
    assert stats.failed_tasks == 1 and stats.worker_restarts >= 2
    assert stats.worker_restarts - stats.retries == 1
    assert "died" in result.rejected.records[0].error


@pytest.mark.ray
def test_ray_data_block_with_a_killer_task_is_split_and_the_rest_written(ray_cluster, tmp_path):
    """A block of 4 tasks whose third kills every worker: the retry runs the tasks one by one,
    the killer is rejected whole and the other three are written, each once."""
    from curator.executors.ray_data import RayDataExecutor

    out, markers, rejected = tmp_path / "out", tmp_path / "markers", tmp_path / "rejected"
    markers.mkdir()
    killer = DieOnce(str(markers), victim="part002")
    killer.process = lambda task: os._exit(3) if task.task_id == "part002" else task
    result = Pipeline("killer", stages=[Square(), killer, JsonWriter(str(out))]).run(
        RayDataExecutor(tasks_per_block=4), initial_tasks=make_partitions(4), max_retries=1,
        rejected_dir=str(rejected), summary=False, raise_on_failure=False)

    assert sorted({r[0] for r in read_records(str(out))}) == ["part000", "part001", "part003"]
    assert len(read_records(str(out))) == 9  # three records each, none twice
    assert not result.ok and [str(f).split(":")[0] for f in result.failed] == ["Square/part002"]
    kept = load_task(str(rejected / "Square" / "part002.failed.task.json"))
    assert kept.task_id == "part002" and kept.data == [6, 7, 8]  # whole, as it entered Square
    # two worker processes died: the block's first attempt, then the task run alone; the third
    # attempt keeps it in the sink without running it (each death counted once, by the driver)
    assert result.stats.stages[0].worker_restarts == 2
