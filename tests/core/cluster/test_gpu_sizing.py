"""gpu_memory_gb is sized from the cluster's GPU nodes (ray.nodes() records), not the driver."""

from __future__ import annotations

import pytest
from curator import Resources
from curator.cluster.gpu_sizing import GpuSizingError, cluster_gpu_memory_gb, smallest_gpu_memory_gb


def _node(node_id: str, gpus: float = 0, kind: str | None = None, alive: bool = True) -> dict:
    """A node record as ``ray.nodes()`` returns it."""
    res = {"CPU": 8.0, f"node:10.0.0.{len(node_id)}": 1.0}
    if gpus:
        res["GPU"] = float(gpus)
    if kind:
        res[f"accelerator_type:{kind}"] = 1.0
    return {"NodeID": node_id, "Alive": alive, "Resources": res}


def test_per_node_memory_from_accelerator_type(monkeypatch):
    monkeypatch.delenv("CURATOR_GPU_MEMORY_GB", raising=False)
    nodes = [_node("head"), _node("a", 8, "A100-40G"), _node("t", 2, "T4"),
             _node("dead", 8, "H100", alive=False)]
    assert cluster_gpu_memory_gb(nodes) == {"a": 40, "t": 16}
    # mixed types: sized for the smallest, so a worker fits on every GPU node
    smallest = smallest_gpu_memory_gb(nodes)
    assert smallest == 16
    assert Resources(gpu_memory_gb=4).gpu_fraction(smallest) == 0.25
    assert smallest_gpu_memory_gb([_node("head")]) is None  # no GPU in the cluster


def test_unknown_gpus_need_the_override_instead_of_a_whole_gpu(monkeypatch):
    monkeypatch.delenv("CURATOR_GPU_MEMORY_GB", raising=False)
    nodes = [_node("head"), _node("fake", 2)]  # e.g. `ray start --num-gpus=2`
    with pytest.raises(GpuSizingError, match="gpu_memory_gb_per_gpu"):
        smallest_gpu_memory_gb(nodes)
    assert smallest_gpu_memory_gb(nodes, override=24) == 24
    monkeypatch.setenv("CURATOR_GPU_MEMORY_GB", "12")
    assert smallest_gpu_memory_gb(nodes) == 12
