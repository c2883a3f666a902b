"""The actor pool streams: a group's outputs go to the next group's actors by reference (the
driver never holds an intermediate task) and a downstream group starts on the first outputs,
before the upstream group finished all of its tasks."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest
from curator import Pipeline, ProcessingStage, Resources, Task
from curator.task_files import load_task

from tests.core.executors.stages import (
    DieOnce,
    JsonWriter,
    SplitInTwo,
    Square,
    expected_records,
    make_partitions,
    read_records,
)


class Tracer:
    """A large payload that notes every process that unpickles it (a file named by its pid)."""

    def __init__(self, log_dir: str, size: int) -> None:
        self.log_dir = log_dir
        self.blob = b"x" * size

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        Path(self.log_dir, str(os.getpid())).touch()


@dataclass
class Wrap(ProcessingStage):
    """Puts a :class:`Tracer` of ``size`` bytes into the task."""

    log_dir: str = ""
    size: int = 300_000
    name: str = "Wrap"

    def process(self, task: Task) -> Task:
        return task.derive({"tracer": Tracer(self.log_dir, self.size), "n": task.data})


@dataclass
class Pass(ProcessingStage):
    """Passes the (unpickled) tracer on."""

    name: str = "Pass"

    def process(self, task: Task) -> Task:
        return task.derive(dict(task.data))


@dataclass
class Unwrap(ProcessingStage):
    """The run output: the tracer's size and the original records, no tracer."""

    name: str = "Unwrap"

    def process(self, task: Task) -> Task:
        return task.derive([len(task.data["tracer"].blob), task.data["n"]])


def _ex(**config):
    from curator.executors.ray_actor_pool import RayActorPoolExecutor

    return RayActorPoolExecutor({"fuse_stages": False, **config})


@pytest.mark.ray
@pytest.mark.parametrize("streaming", [True, False])
def test_intermediate_tasks_never_reach_the_driver(ray_cluster, tmp_path, streaming):
    """Also one group after the other (``streaming=False``): outputs still go by reference."""
    log = tmp_path / "unpickled"
    log.mkdir()
    parts = make_partitions(4)
    result = Pipeline("refs", stages=[Wrap(str(log)), Pass(), Unwrap()]).run(
        _ex(streaming=streaming), initial_tasks=parts, summary=False)
    assert result.ok
    assert sorted(t.data[1][0] for t in result) == [0, 3, 6, 9]
    assert all(t.data[0] == 300_000 for t in result)
    pids = {int(p.name) for p in log.iterdir()}
    assert pids, "the tracer was never unpickled: the test proves nothing"
    assert os.getpid() not in pids  # the workers unpickled the tasks, the driver never did
    assert [s.tasks_out for s in result.stats.stages] == [4, 4, 4]  # reports still booked


@dataclass
class Gate(ProcessingStage):
    """Holds its ``last`` task until a downstream stage has started (at most ``wait_s``) and
    records whether it saw that while it still had work."""

    marker: str = ""
    last: str = "part005"
    wait_s: float = 60.0  # a generous bound: actor start-up on a loaded CI machine
    name: str = "Gate"
    resources: Resources = field(default_factory=lambda: Resources(cpus=0.5))

    def process(self, task: Task) -> Task:
        seen = None
        if task.task_id == self.last:
            end = time.monotonic() + self.wait_s
            while not os.path.exists(self.marker) and time.monotonic() < end:
                time.sleep(0.05)
            seen = os.path.exists(self.marker)
        return task.derive({"n": task.data, "downstream_seen": seen})


@dataclass
class Downstream(ProcessingStage):
    """Notes (a marker file) that it ran."""

    marker: str = ""
    name: str = "Downstream"

    def process(self, task: Task) -> Task:
        Path(self.marker).touch()
        return task


@pytest.mark.ray
def test_downstream_group_starts_before_upstream_finished(ray_cluster, tmp_path):
    marker = str(tmp_path / "downstream-started")
    result = Pipeline("stream", stages=[Gate(marker), Downstream(marker)]).run(
        _ex(num_workers={"Gate": 1, "Downstream": 1}), initial_tasks=make_partitions(6),
        summary=False)
    assert result.ok and len(result) == 6
    last = next(t for t in result if t.task_id == "part005")
    assert last.data["downstream_seen"] is True  # Downstream ran while Gate still worked


@pytest.mark.ray
def test_a_task_that_kills_its_actor_is_found_in_a_batch_passed_by_reference(
        ray_cluster, tmp_path):
    """One upstream call passes two tasks by reference; the one that kills every actor is
    retried alone and kept whole in the rejected sink, its batch mate written once."""
    out, markers, rejected = tmp_path / "out", tmp_path / "markers", tmp_path / "rejected"
    markers.mkdir()
    killer = DieOnce(str(markers), victim="part001_1")
    killer.process = lambda task: os._exit(3) if task.task_id == "part001_1" else task
    parts = make_partitions(3)
    result = Pipeline("killref", stages=[Square(), SplitInTwo(), killer,
                                         JsonWriter(str(out))]).run(
        _ex(num_workers=1), initial_tasks=parts, rejected_dir=str(rejected), max_retries=1,
        summary=False, raise_on_failure=False)
    assert read_records(str(out)) == [r for r in expected_records(parts) if r[0] != "part001_1"]
    assert [str(f).split(":")[0] for f in result.failed] == ["DieOnce/part001_1"]
    kept = load_task(str(rejected / "DieOnce" / "part001_1.failed.task.json"))
    assert kept.task_id == "part001_1" and kept.data == [16, 25]  # the whole task
    entry = json.loads((rejected / "DieOnce" / "part001_1.failed.jsonl").read_text())
    assert "died" in entry["error"]
    assert result.stats.stages[2].worker_restarts >= 2


@pytest.mark.parametrize(("resources", "cpus", "gpus", "streams"), [
    ([Resources(cpus=1)] * 3, 2.0, 0.0, True),
    ([Resources(cpus=1), Resources(cpus=0.5, gpus=1)], 2.0, 1.0, True),
    ([Resources(cpus=1, gpus=1), Resources(cpus=0.5, gpus=1)], 2.0, 1.0, False),
])
def test_pools_alive_at_once_fit_the_cluster(resources, cpus, gpus, streams):
    """Streaming pools' CPU requests add up to at most the cluster's; GPU groups that cannot
    hold an actor each at once run one after the other (each with the whole cluster)."""
    stages = [Square().with_(name=f"s{k}", resources=r) for k, r in enumerate(resources)]
    ex = _ex()
    stream, plans = ex.plan(ex.groups(stages), 8, cpus, gpus)
    assert stream is streams and len(plans) == len(stages)
    if streams:
        assert sum(n * opts["num_cpus"] for n, opts in plans) <= cpus + 1e-9
        assert sum(n * opts.get("num_gpus", 0) for n, opts in plans) <= gpus + 1e-9
    else:
        assert all(n * opts.get("num_gpus", 0) <= gpus for n, opts in plans)


def test_a_pool_waits_while_the_next_one_is_backlogged():
    from curator.executors.fusion import group_stages
    from curator.executors.ray_actor_pool import _Batch, _Pool

    up, down = (_Pool(k, g, 1, {"num_cpus": 1.0}, [], False)
                for k, g in enumerate(group_stages([Square(), Pass()], fuse=False)))
    up.next = down
    for _ in range(4):  # 2 x batches_in_flight (2) x one actor
        down.work.put(_Batch([[Task("t", "d", [1])]], 1))
    assert not up.backlogged(2)  # the next pool has not started: nothing drains it yet
    down.started, down.threads = True, [SimpleNamespace(is_alive=lambda: True)]  # one actor
    assert up.backlogged(2) and not up.backlogged(3)
    down.work.get()
    assert not up.backlogged(2)
