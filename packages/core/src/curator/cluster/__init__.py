"""Clients that start or join a Ray cluster (``RayClient``, ``SlurmRayClient``) and the GPU
sizing rules that read the cluster's nodes."""

from curator.cluster.ray_client import RayClient
from curator.cluster.slurm import SlurmRayClient

__all__ = ["RayClient", "SlurmRayClient"]
