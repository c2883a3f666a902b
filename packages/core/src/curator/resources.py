"""Resources: what one worker of a stage needs."""

from __future__ import annotations

from dataclasses import dataclass

from curator.errors import ConfigError

__all__ = ["Resources"]


@dataclass(frozen=True)
class Resources:
    """CPU and GPU needs of one stage worker.

    Parameters:
        cpus: CPU cores per worker (fractional allowed, e.g. 0.5 for light I/O stages).
        gpus: whole or fractional GPUs per worker (0.25 packs four workers on one GPU).
        gpu_memory_gb: GPU memory per worker; a Ray executor turns it into the matching fraction
            of the smallest GPU among the cluster's GPU nodes, known from their accelerator
            type or the executor's ``gpu_memory_gb_per_gpu`` (see
            :mod:`curator.cluster.gpu_sizing`). Give either ``gpus`` or ``gpu_memory_gb``.
    """

    cpus: float = 1.0
    gpus: float = 0.0
    gpu_memory_gb: float = 0.0

    def __post_init__(self) -> None:
        for name in ("cpus", "gpus", "gpu_memory_gb"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ConfigError(f"Resources.{name} must be a number, got {value!r}")
            if value < 0:
                raise ConfigError(f"Resources.{name} must be >= 0, got {value}")
        if self.gpus and self.gpu_memory_gb:
            raise ConfigError(
                f"Resources: give either gpus ({self.gpus}) or gpu_memory_gb "
                f"({self.gpu_memory_gb}), not both"
            )
        if self.gpus > 1 and self.gpus != int(self.gpus):
            raise ConfigError(f"Resources.gpus above 1 must be a whole number, got {self.gpus}")
        if self.cpus == 0 and not self.requires_gpu:
            raise ConfigError("Resources: a stage needs cpus > 0 or a GPU")

    @property
    def requires_gpu(self) -> bool:
        """Whether a worker needs a GPU."""
        return self.gpus > 0 or self.gpu_memory_gb > 0

    def torch_device(self) -> str:
        """``"cuda"`` when a GPU is asked for and torch sees one, else ``"cpu"`` (imports torch
        only when a GPU is asked for)."""
        if self.requires_gpu:
            import torch

            if torch.cuda.is_available():
                return "cuda"
        return "cpu"

    def gpu_fraction(self, node_gpu_memory_gb: float | None) -> float:
        """GPUs per worker: ``gpus``, or ``gpu_memory_gb`` as a fraction of a GPU of
        ``node_gpu_memory_gb`` (a whole GPU when that is ``None``: a cluster without GPUs)."""
        if self.gpus:
            return self.gpus
        if self.gpu_memory_gb:
            if not node_gpu_memory_gb:
                return 1.0
            return min(1.0, self.gpu_memory_gb / node_gpu_memory_gb)
        return 0.0

    def to_dict(self) -> dict[str, float]:
        return {"cpus": self.cpus, "gpus": self.gpus, "gpu_memory_gb": self.gpu_memory_gb}
