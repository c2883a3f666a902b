"""GPU memory per node of a Ray cluster, for turning ``Resources.gpu_memory_gb`` into GPUs.

Ray knows how many GPUs each node has and, where it detected them, their type (an
``accelerator_type:<name>`` resource); it does not know their memory. The memory comes from
:data:`GPU_MEMORY_GB` by type, or from an override (the executors' ``gpu_memory_gb_per_gpu``
config or ``CURATOR_GPU_MEMORY_GB``) for types the table lacks or fake GPUs.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["GPU_MEMORY_GB", "GpuSizingError", "cluster_gpu_memory_gb", "smallest_gpu_memory_gb"]

#: Memory in GB of one GPU by Ray's accelerator type name (NVIDIA's largest model of a name where
#: there are several: a 40 GB A100 is ``A100-40G``).
GPU_MEMORY_GB: dict[str, float] = {
    "B200": 180, "B100": 180, "GB200": 186, "H200": 141, "H100": 80, "H20": 96, "GH200": 96,
    "A100": 80, "A100-80G": 80, "A100-40G": 40, "A10G": 24, "A10": 24, "A30": 24, "A40": 48,
    "A16": 16, "A2": 16, "L40S": 48, "L40": 48, "L4": 24, "L20": 48, "T4": 16, "V100": 32,
    "V100-16G": 16, "P100": 16, "P4": 8, "K80": 12, "RTX": 24, "RTX6000": 48,
}


class GpuSizingError(ValueError):
    """``gpu_memory_gb`` cannot be turned into GPUs: the cluster's GPU memory is unknown."""


def cluster_gpu_memory_gb(nodes: list[dict[str, Any]],
                          override: float | None = None) -> dict[str, float | None]:
    """GPU memory in GB of each alive node with GPUs (``None`` where unknown), keyed by node id.

    Parameters:
        nodes: ``ray.nodes()``.
        override: memory of every GPU (default: ``CURATOR_GPU_MEMORY_GB``, else the table).
    """
    if override is None and os.environ.get("CURATOR_GPU_MEMORY_GB"):
        override = float(os.environ["CURATOR_GPU_MEMORY_GB"])
    out: dict[str, float | None] = {}
    for node in nodes:
        res = node.get("Resources") or {}
        if not node.get("Alive", True) or not res.get("GPU"):
            continue
        if override:
            out[node["NodeID"]] = float(override)
            continue
        types = [k.split(":", 1)[1] for k in res if k.startswith("accelerator_type:")]
        mems = [GPU_MEMORY_GB.get(t) or GPU_MEMORY_GB.get(t.upper()) for t in types]
        out[node["NodeID"]] = min((m for m in mems if m), default=None)
    return out


def smallest_gpu_memory_gb(nodes: list[dict[str, Any]],
                           override: float | None = None) -> float | None:
    """Memory of the smallest GPU among the cluster's GPU nodes, so that a worker sized for it
    fits on any of them (mixed GPU types are sized for the smallest); ``None`` when the cluster
    has no GPU. Raises :class:`GpuSizingError` when a GPU node's memory is unknown, rather
    than letting every worker take a whole GPU."""
    per_node = cluster_gpu_memory_gb(nodes, override)
    unknown = [n for n, m in per_node.items() if m is None]
    if unknown:
        raise GpuSizingError(
            f"a stage asks for Resources(gpu_memory_gb=...), but the memory of the GPUs on "
            f"{len(unknown)} node(s) is unknown (no accelerator_type resource of a known GPU: "
            f"{sorted(GPU_MEMORY_GB)}). Set the executor's gpu_memory_gb_per_gpu config or "
            f"CURATOR_GPU_MEMORY_GB to their memory in GB, or give the stage gpus= instead")
    return min((m for m in per_node.values() if m is not None), default=None)
