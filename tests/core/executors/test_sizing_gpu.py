"""The same GPU stage gets the same workers on Ray Data, the actor pool and Xenna: a stage sized
``Resources(gpus=0.5)`` on a local Ray cluster started with 2 fake GPUs (``num_gpus=2``).

One cluster for the module, started in a driver subprocess (``RayClient(num_cpus=2,
num_gpus=2)``, like a user's script; the session's ``ray_cluster`` has no GPU) and stopped by
it. Ray Data and the actor pool run the pipeline; Xenna finds no GPU through NVML on fake GPUs,
so its side is the plan it hands Xenna (``StageSpec`` workers and GPUs) on the same cluster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[3]
N_PARTS = 8

DRIVER = """
import json, os
from dataclasses import dataclass
from curator import Pipeline, ProcessingStage, RayClient, Resources
from curator.executors.ray_actor_pool import RayActorPoolExecutor
from curator.executors.ray_data import RayDataExecutor
from curator.executors.xenna import XennaExecutor
from tests.core.executors.stages import Numbers

@dataclass
class GpuTag(ProcessingStage):
    '''Records the GPU share Ray assigned to the worker and the worker that ran the task.'''
    name: str = "GpuTag"

    def process(self, task):
        import ray
        ctx = ray.get_runtime_context()
        new = task.derive(task.data)
        new.metadata["gpu"] = ctx.get_assigned_resources().get("GPU", 0.0)
        new.metadata["worker"] = ctx.get_actor_id() or str(os.getpid())
        return new

stage = GpuTag().with_(resources=Resources(gpus=0.5))
client = RayClient(num_cpus=2, num_gpus=2, dashboard=False,
                   object_store_memory=150 * 1024**2, timeout_s=120).start()
out = {}
try:
    import ray
    out["gpus"] = ray.cluster_resources().get("GPU")
    for name, ex in (("ray_data", RayDataExecutor()), ("ray_actor_pool", RayActorPoolExecutor())):
        result = Pipeline("gpu", stages=[Numbers(n=N_PARTS, per=2), stage]).run(ex, summary=False)
        out[name] = {"ok": result.ok, "workers": result.stats.stages[1].workers,
                     "tasks": sorted(t.task_id for t in result),
                     "gpu": sorted({t.metadata["gpu"] for t in result}),
                     "actors": len({t.metadata["worker"] for t in result})}
    xenna = XennaExecutor()
    ((n, cpus, gpus),) = xenna._cpu_shares(xenna.groups([stage]))
    out["xenna"] = {"workers": n, "gpu": [gpus], "cpus": cpus}
finally:
    client.stop()
print(json.dumps(out))
""".replace("N_PARTS", str(N_PARTS))


@pytest.fixture(scope="module")
def runs() -> dict:
    env = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("RAY_ADDRESS", None)  # a cluster of its own, with the fake GPUs
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(DRIVER)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=500)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_half_gpu_stage_gets_the_same_workers_on_every_ray_executor(runs):
    assert runs["gpus"] == 2
    want = [f"part{i:03d}" for i in range(N_PARTS)]
    for name in ("ray_data", "ray_actor_pool"):
        run = runs[name]
        assert run["ok"] and run["tasks"] == want, name  # nothing lost
        assert run["gpu"] == [0.5], name  # each worker a half GPU, as planned
        assert 1 <= run["actors"] <= run["workers"], name
    # 2 GPUs / 0.5: four workers each, on Ray Data, the actor pool and Xenna alike
    assert runs["ray_data"]["workers"] == runs["ray_actor_pool"]["workers"] == 4
    assert runs["xenna"]["workers"] == 4 and runs["xenna"]["gpu"] == [0.5]
