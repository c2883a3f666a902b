"""What :meth:`ProcessingStage.setup_on_node` is told about where it runs (NeMo Curator's
``NodeInfo`` and ``WorkerMetadata``, the same fields)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["NodeInfo", "WorkerMetadata", "LOCAL_NODE"]


@dataclass
class NodeInfo:
    """The node ``setup_on_node`` runs on: its Ray node id (``"local"`` on the local
    executor)."""

    node_id: str = ""


@dataclass
class WorkerMetadata:
    """The worker a hook runs in: ``setup_on_node`` runs outside any worker, so ``worker_id``
    is empty there; ``allocation`` is engine-specific (``None`` unless the engine has one)."""

    worker_id: str = ""
    allocation: Any = None


LOCAL_NODE = "local"
"""The node id the local executor (one machine, no Ray) passes."""
