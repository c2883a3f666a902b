"""The Ray executors on a real GPU: ``Resources(gpus=1)`` and ``Resources(gpu_memory_gb=...)``.

A stage with GPU resources must run in a worker that sees the GPU Ray assigned to it
(``CUDA_VISIBLE_DEVICES``), with the GPU share the executor planned (whole, or the fraction
``gpu_memory_gb`` makes of the node's GPU), and a CUDA op there must work; every task must come
out. Skipped without a CUDA GPU (CI has none).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
from curator import Pipeline, ProcessingStage, Resources, Task

from tests.core.executors.stages import Numbers, Square

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.ray,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

N_PARTS, PER = 8, 4
GPU_MEM_GB = 35.0  # a quarter of an H200 (141 GB): 4 workers share the GPU


def _probe(data: list[int]) -> tuple[list[int], dict]:
    """Inside the worker: what it sees of the GPU, and the records doubled on the GPU."""
    import ray
    import torch

    info: dict = {"pid": os.getpid(), "available": torch.cuda.is_available(),
                  "cvd": os.environ.get("CUDA_VISIBLE_DEVICES"),
                  "ray_gpu_ids": [str(i) for i in ray.get_gpu_ids()],
                  "assigned": dict(ray.get_runtime_context().get_assigned_resources())}
    out = list(data)
    if info["available"]:
        info["device"] = torch.cuda.current_device()
        info["count"] = torch.cuda.device_count()
        x = torch.tensor(data, dtype=torch.int64, device="cuda")
        y = (x * 2).sum()
        torch.cuda.synchronize()
        info["tensor_device"] = str(x.device)
        info["sum2"] = int(y.item())
        out = (x * 2).cpu().tolist()
    return out, info


@dataclass
class CudaProbe(ProcessingStage):
    """Stateless GPU stage (still an actor pool on Ray Data: Ray would start a process for
    every GPU task)."""

    name: str = "CudaProbe"

    def process(self, task: Task) -> Task:
        out, info = _probe(task.data)
        new = task.derive(out)
        new.metadata["gpu_probe"] = info
        return new


@dataclass
class CudaProbeActor(CudaProbe):
    """The same with setup() (runs in an actor pool on every executor)."""

    name: str = "CudaProbeActor"

    def setup(self, worker_metadata=None) -> None:
        import torch

        self.setup_device = torch.cuda.current_device() if torch.cuda.is_available() else None

    def process(self, task: Task) -> Task:
        new = super().process(task)
        new.metadata["gpu_probe"]["setup_device"] = self.setup_device
        return new


CASES = {
    "gpus1_actor": (CudaProbeActor, Resources(cpus=1, gpus=1)),
    "gpus1_stateless": (CudaProbe, Resources(cpus=1, gpus=1)),
    "gpu_mem_stateless": (CudaProbe, Resources(cpus=1, gpu_memory_gb=GPU_MEM_GB)),
    "gpu_mem_actor": (CudaProbeActor, Resources(cpus=1, gpu_memory_gb=GPU_MEM_GB)),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("executor", ["ray_data", "ray_actor_pool"])
def test_gpu_stage_runs_on_the_gpu(executor: str, case: str, ray_cluster) -> None:
    import ray
    from curator.cluster.gpu_sizing import smallest_gpu_memory_gb
    from curator.executors.sizing import workers_alone

    gpus = float(ray.cluster_resources().get("GPU", 0.0))
    assert gpus >= 1, f"Ray sees no GPU on a machine where torch does: {ray.cluster_resources()}"
    cls, res = CASES[case]
    stage = cls().with_(resources=res)
    gpu_mem = smallest_gpu_memory_gb(ray.nodes()) if res.gpu_memory_gb else None
    if res.gpu_memory_gb:
        assert gpu_mem, f"GPU memory of the node unknown: {ray.nodes()[0]['Resources']}"
    frac = res.gpu_fraction(gpu_mem)

    result = Pipeline("gpu", stages=[Numbers(n=N_PARTS, per=PER), Square(), stage]).run(executor)

    assert result.ok, result.failed
    # nothing lost: every partition, every record, doubled on the GPU
    assert sorted(t.task_id for t in result) == [f"part{i:03d}" for i in range(N_PARTS)]
    want = {f"part{i:03d}": [2 * x * x for x in range(i * PER, (i + 1) * PER)]
            for i in range(N_PARTS)}
    for t in result:
        assert t.data == want[t.task_id], t.task_id
        p = t.metadata["gpu_probe"]
        assert p["available"], p
        assert p["cvd"] not in (None, ""), p  # Ray pinned the worker to its GPU
        assert p["cvd"].split(",") == p["ray_gpu_ids"], p
        assert p["count"] == len(p["cvd"].split(",")) and p["device"] == 0, p
        assert p["tensor_device"] == "cuda:0" and p["sum2"] == sum(want[t.task_id]), p
        assert p["assigned"].get("GPU") == pytest.approx(frac, abs=1e-4), p
        if cls is CudaProbeActor:
            assert p["setup_device"] == 0, p
    # the planned workers of the GPU stage are what sizing says for the cluster's GPUs
    workers = {s.name: s.workers for s in result.stats.stages}
    expected = workers_alone(res, None, 2.0, gpus, gpu_mem)
    if executor == "ray_actor_pool":
        expected = min(expected, N_PARTS)
    assert workers[stage.name] == expected, (workers, frac, gpu_mem)
    if gpus == 1:  # one GPU: one whole-GPU worker, or as many as the fraction fits
        assert expected == (1 if res.gpus else int(1 / frac + 1e-9)), (expected, frac)
    pids = {t.metadata["gpu_probe"]["pid"] for t in result}  # long-lived workers did the work
    assert 1 <= len(pids) <= expected, (pids, expected)
