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
from curator.executors import ray_common

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
    assert ray_common.has_setup(AddOne()) and ray_common.has_setup(SplitInTwo())
    assert not ray_common.has_setup(Square())


def test_unknown_config_key_is_refused():
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    with pytest.raises(ValueError, match="num_wrokers"):
        RayDataExecutor({"num_wrokers": 2})
    with pytest.raises(ValueError, match="num_wrokers"):
        RayActorPoolExecutor(num_wrokers=2)


def test_remote_args_fit_many_stages_on_two_cpus_and_map_gpu_memory(monkeypatch):
    from curator.executors.ray_data import RayDataExecutor

    monkeypatch.setattr("curator.executors.ray_data.node_gpu_memory_gb", lambda: 80.0)
    stages = [AddOne().with_(name=f"a{i}") for i in range(6)] + [
        Square(), AddOne().with_(name="gpu_mem", resources=Resources(cpus=1, gpu_memory_gb=20)),
        AddOne().with_(name="gpu_q", resources=Resources(cpus=1, gpus=0.25))]
    ex = RayDataExecutor(num_workers={"a0": 3})
    args = ex.remote_args(stages, {"CPU": 2.0, "GPU": 1.0})
    actors = [a for a in args if "compute" in a]
    held = sum(a["num_cpus"] * a["compute"].min_size for a in actors)
    assert held <= 1.0  # every actor pool fits beside 1 CPU for tasks: 8 stages on 2 CPUs
    assert args[0]["compute"].min_size == 3  # per-stage override
    assert "compute" not in args[6]  # stateless stage: Ray tasks
    assert args[7]["num_gpus"] == pytest.approx(0.25)  # 20 GB of an 80 GB GPU
    assert args[8]["num_gpus"] == 0.25
    assert "num_gpus" not in args[1]


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
    result = Pipeline("pool", stages=stages).run(
        RayActorPoolExecutor({"num_workers": {"AddOne": 1, "Square": 2}}), summary=False)
    assert sorted(x for t in result for x in t.data) == sorted((x + 1) ** 2 for x in range(12))
    assert [s.workers for s in result.stats.stages] == [1, 1, 2]


@pytest.mark.ray
def test_executor_by_name_starts_and_stops_its_own_cluster():
    code = textwrap.dedent("""
        import json
        from curator import Pipeline
        from curator.executors.ray_client import _ray_descendants
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
