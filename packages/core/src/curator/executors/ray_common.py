"""What the Ray executors share: cluster ownership, resource mapping, retries, bookkeeping."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from curator.checkpoint import CheckpointStore
from curator.executors.retry import BatchOutcome, apply_outcome, run_with_retries
from curator.stages.base import ProcessingStage

__all__ = ["ray_session", "has_setup", "BatchOutcome", "run_with_retries", "apply_outcome",
           "node_gpu_memory_gb", "stage_override"]


@contextlib.contextmanager
def ray_session(config: dict[str, Any]) -> Iterator[Any]:
    """Use the running Ray connection, or start a local cluster for the run and stop it after.

    Config keys used: ``address`` (connect there), ``num_cpus``, ``num_gpus``,
    ``object_store_memory``, ``ray_timeout_s``.
    """
    from curator.executors.ray_client import RayClient  # noqa: PLC0415

    client = RayClient(address=config.get("address"), num_cpus=config.get("num_cpus"),
                       num_gpus=config.get("num_gpus"),
                       object_store_memory=config.get("object_store_memory"),
                       timeout_s=float(config.get("ray_timeout_s", 120.0)))
    client.start()
    try:
        yield client
    finally:
        client.stop()


def has_setup(stage: ProcessingStage) -> bool:
    """Whether the stage overrides ``setup`` or ``teardown`` (so it needs a long-lived actor)."""
    klass = type(stage)
    return klass.setup is not ProcessingStage.setup or klass.teardown is not ProcessingStage.teardown


def stage_override(config: dict[str, Any], key: str, stage: ProcessingStage) -> Any:
    """``config[key]`` for this stage: a plain value, or ``{stage_name: value}``."""
    value = config.get(key)
    return value.get(stage.name) if isinstance(value, dict) else value


def node_gpu_memory_gb() -> float | None:
    """Memory of the first GPU of this node in GB (``None`` without torch or a GPU)."""
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_properties(0).total_memory / 1024**3


class LineageTracker:
    """Marks a source partition done once every task descending from it passed the last stage,
    whatever order the per-stage reports arrive in (streaming executors report out of order).

    Each report says "stage i consumed these tasks and produced those"; a multiset of
    (partition, stage, task_id) keys counts +1 when a task is produced (or seeded) and -1 when it
    is consumed. A partition is done when all its counts are back to zero.
    """

    def __init__(self, checkpoint: CheckpointStore | None, n_stages: int) -> None:
        self.checkpoint = checkpoint
        self.n_stages = n_stages
        self._counts: dict[str, dict[tuple[int, str], int]] = defaultdict(dict)

    def _bump(self, part: str | None, key: tuple[int, str], n: int) -> None:
        if part is None or self.checkpoint is None:
            return
        counts = self._counts[part]
        value = counts.get(key, 0) + n
        if value:
            counts[key] = value
        else:
            counts.pop(key, None)
            if not counts:
                del self._counts[part]
                self.checkpoint.mark_done(part)

    def seed(self, part: str | None, task_id: str) -> None:
        self._bump(part, (0, task_id), 1)

    def report(self, index: int, consumed: list[tuple[str | None, str]],
               produced: list[tuple[str | None, str]]) -> None:
        if index + 1 < self.n_stages:
            for part, tid in produced:
                self._bump(part, (index + 1, tid), 1)
        for part, tid in consumed:
            self._bump(part, (index, tid), -1)
