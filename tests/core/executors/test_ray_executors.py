"""Ray executor specifics: resource mapping, many stages on 2 CPUs, overrides, own cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from curator import Pipeline, ProcessingStage, Resources, Task

from tests.core.executors.stages import Numbers, SplitInTwo, Square

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class AddOne(ProcessingStage):
    """A stage with setup() (runs in an actor pool)."""

    name: str = "AddOne"

    def setup(self, worker_metadata=None) -> None:
        self.k = 1

    def process(self, task: Task) -> Task:
        return task.derive([x + self.k for x in task.data])


def test_stages_with_setup_are_detected():
    assert AddOne().has_worker_state and SplitInTwo().has_worker_state
    assert not Square().has_worker_state


def test_unknown_config_key_is_a_warning_that_names_it():
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    # as on NeMo Curator, ignored; the warning names the key and points at the caller
    with pytest.warns(UserWarning, match=r"\['num_wrokers'\] are ignored") as caught:
        RayDataExecutor({"num_wrokers": 2})
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning, match=r"\['num_wrokers'\] are ignored") as caught:
        RayActorPoolExecutor(num_wrokers=2)
    assert caught[0].filename == __file__


def _many_stages() -> list[ProcessingStage]:
    return [AddOne().with_(name=f"a{i}") for i in range(6)] + [
        Square(), AddOne().with_(name="gpu_mem", resources=Resources(cpus=1, gpu_memory_gb=20)),
        AddOne().with_(name="gpu_q", resources=Resources(cpus=1, gpus=0.25))]


def test_plan_fuses_equal_resources_and_maps_gpu_memory(monkeypatch):
    from curator.executors.ray_data import RayDataExecutor

    monkeypatch.setattr("curator.executors.ray_data.node_gpu_memory_gb", lambda *_: 80.0)
    ex = RayDataExecutor(num_workers={"a0": 3})
    groups = ex.groups(_many_stages())
    assert [g.name for g in groups] == ["a0+a1+a2+a3+a4+a5+Square", "gpu_mem", "gpu_q"]
    plans = ex.plan(groups, {"CPU": 2.0, "GPU": 1.0})
    held = sum(args["num_cpus"] * n for n, args in plans)
    assert held <= 2.0  # every pool fits on the 2 CPUs
    assert plans[0][0] == 3  # the member's override sizes its group
    assert "num_gpus" not in plans[0][1]
    assert plans[1][1]["num_gpus"] == pytest.approx(0.25)  # 20 GB of an 80 GB GPU
    assert plans[2][1]["num_gpus"] == 0.25


def test_plan_runs_stateless_cpu_groups_as_tasks_and_gpu_groups_as_actors(monkeypatch):
    """Tasks (no actor to start per run, twice the workers in flight) unless a group holds
    worker state or asks for a GPU: Ray starts a fresh process for every GPU task."""
    import ray.data
    from curator.executors.ray_data import RayDataExecutor

    monkeypatch.setattr("curator.executors.ray_data.node_gpu_memory_gb", lambda *_: 80.0)
    stages = [Square(), AddOne().with_(name="stateful", resources=Resources(cpus=0.5)),
              Square().with_(name="gpu", resources=Resources(cpus=1, gpus=0.5)),
              Square().with_(name="gpu_mem", resources=Resources(cpus=1, gpu_memory_gb=20))]
    ex = RayDataExecutor(num_workers={"Square": 2})
    plans = ex.plan(ex.groups(stages), {"CPU": 4.0, "GPU": 1.0})
    compute = [args["compute"] for _, args in plans]
    assert isinstance(compute[0], ray.data.TaskPoolStrategy) and compute[0].size == 2 * 2
    assert all(isinstance(c, ray.data.ActorPoolStrategy) for c in compute[1:])


def test_plan_without_fusion_fits_nine_pools_on_two_cpus(monkeypatch):
    from curator.executors.ray_data import RayDataExecutor

    monkeypatch.setattr("curator.executors.ray_data.node_gpu_memory_gb", lambda *_: 80.0)
    ex = RayDataExecutor(fuse_stages=False)
    groups = ex.groups(_many_stages())
    assert len(groups) == 9
    plans = ex.plan(groups, {"CPU": 2.0, "GPU": 1.0})
    assert sum(args["num_cpus"] * n for n, args in plans) <= 2.0
    assert all(n >= 1 for n, _ in plans)


@pytest.mark.ray
def test_ray_data_streams_more_stages_than_cpus(ray_cluster):
    from curator.executors.ray_data import RayDataExecutor

    stages = [Numbers(n=4)] + [AddOne().with_(name=f"add{i}") for i in range(5)]
    result = Pipeline("many", stages=stages).run(
        RayDataExecutor(num_workers={"add0": 2}), summary=False)
    assert sorted(x for t in result for x in t.data) == [x + 5 for x in range(12)]
    assert [s.workers for s in result.stats.stages][1] == 2
    assert all(s.tasks_out == 4 for s in result.stats.stages)


@pytest.mark.ray
def test_actor_pool_honours_num_workers_override(ray_cluster):
    from curator.executors.ray_actor_pool import RayActorPoolExecutor

    stages = [Numbers(n=4), AddOne(), Square()]
    for fuse, workers in ((False, [1, 1, 2]), (True, [1, 2, 2])):  # a group takes the largest
        result = Pipeline("pool", stages=stages).run(
            RayActorPoolExecutor({"num_workers": {"AddOne": 1, "Square": 2},
                                  "fuse_stages": fuse}), summary=False)
        assert sorted(x for t in result for x in t.data) == sorted((x + 1) ** 2 for x in range(12))
        assert [s.workers for s in result.stats.stages] == workers


@dataclass
class MissingInput(ProcessingStage):
    """A source stage whose input is not there."""

    name: str = "MissingInput"

    def process(self, task: Task) -> list[Task]:
        raise FileNotFoundError("no such file: /nowhere/*.jsonl")


@pytest.mark.ray
@pytest.mark.parametrize("kind", ["ray_data", "ray_actor_pool"])
def test_failing_source_stops_the_run_with_its_error(ray_cluster, kind):
    from curator.executors.base import SourceStageError

    from tests.core.executors.stages import make_executor

    with pytest.raises(SourceStageError, match="/nowhere"):
        Pipeline("nosource", stages=[MissingInput(), Square()]).run(
            make_executor(kind), summary=False)


@pytest.mark.ray
def test_executor_by_name_starts_and_stops_its_own_cluster():
    code = textwrap.dedent("""
        import json
        from curator import Pipeline
        from curator.cluster.ray_client import _ray_descendants
        from tests.core.executors.stages import Numbers, Square
        result = Pipeline("own", stages=[Numbers(n=3), Square()]).run(
            "ray_data", summary=False, num_cpus=2, object_store_memory=100 * 1024**2)
        import ray
        print(json.dumps({"out": sorted(x for t in result for x in t.data),
                          "left": len(_ray_descendants()), "up": ray.is_initialized()}))
    """)
    env = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    assert info == {"out": [x * x for x in range(9)], "left": 0, "up": False}


@dataclass
class BatchSeen(ProcessingStage):
    """Records how many tasks each call got (a stage that wants many tasks at once)."""

    name: str = "BatchSeen"
    batch_size: int = 6

    def process(self, task: Task) -> Task:
        return task.derive(1)

    def process_batch(self, tasks: list[Task]) -> list[Task]:
        return [t.derive(len(tasks)) for t in tasks]


@pytest.mark.ray
def test_ray_data_batches_count_tasks_not_reports(ray_cluster):
    from curator.executors.ray_data import RayDataExecutor

    stages = [Numbers(n=6), Square(), AddOne(), BatchSeen()]
    result = Pipeline("batches", stages=stages).run(RayDataExecutor(), summary=False)
    assert sorted(t.data for t in result) == [6] * 6  # upstream reports did not take slots


@pytest.mark.ray
@pytest.mark.parametrize("kind", ["ray_data", "ray_actor_pool"])
def test_source_is_listed_window_by_window(ray_cluster, kind):
    """With ``source_window=2`` the driver takes 2 partitions from the lazy source, runs them,
    then lists on: the first partitions ran before the second chunk was listed, and every
    partition of the three windows is there, booked once."""
    from tests.core.executors.stages import Stamp, StreamedNumbers, make_executor

    StreamedNumbers.yielded.clear()
    ex = make_executor(kind)
    ex.cfg.source_window = 2
    result = Pipeline("windows", stages=[StreamedNumbers(n=6, chunk=2), Stamp(), Square()]).run(
        ex, summary=False)
    assert sorted(t.task_id for t in result) == [f"part{i:03d}" for i in range(6)]
    assert sorted(x for t in result for x in t.data) == [x * x for x in range(18)]
    assert len(StreamedNumbers.yielded) == 3
    assert min(t.metadata["ran_at"] for t in result) < StreamedNumbers.yielded[1]
    assert [(s.tasks_in, s.tasks_out) for s in result.stats.stages] == [(1, 6), (6, 6), (6, 6)]
