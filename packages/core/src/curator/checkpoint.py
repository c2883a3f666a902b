"""Resumable runs: remember which source partitions are fully written."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from collections.abc import Callable

from curator.io import atomic_write, get_fs, join_path
from curator.tasks import stable_id

__all__ = ["CheckpointStore", "PartitionTracker"]


class CheckpointStore:
    """Marker files under ``{path}/done/``, one per finished source partition.

    A partition is marked only after every task descending from it has passed the last stage (so
    its outputs are written, atomically, under deterministic names). A re-run with the same
    ``path`` skips marked partitions; partitions that were in flight during a crash are redone and
    their files overwritten, so nothing is lost and nothing is written twice.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._done: set[str] | None = None
        self._lock = threading.Lock()

    @staticmethod
    def key(partition: str) -> str:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in partition)
        return safe if safe == partition and len(safe) <= 120 else f"p{stable_id(partition, length=32)}"

    def done(self) -> set[str]:
        """Keys of the partitions finished by earlier runs."""
        with self._lock:
            if self._done is None:
                fs, p = get_fs(join_path(self.path, "done"))
                try:
                    names = [f.rsplit("/", 1)[-1] for f in fs.ls(p, detail=False)]
                except FileNotFoundError:
                    names = []
                self._done = {n[:-5] for n in names if n.endswith(".json")}
            return set(self._done)

    def is_done(self, partition: str) -> bool:
        return self.key(partition) in self.done()

    def mark_done(self, partition: str) -> None:
        key = self.key(partition)
        with atomic_write(join_path(self.path, "done", f"{key}.json"), "w") as fh:
            json.dump({"partition": partition, "finished_at": time.time()}, fh)
        with self._lock:
            if self._done is not None:
                self._done.add(key)


class PartitionTracker:
    """Counts in-flight tasks per source partition and calls ``on_done`` when one reaches zero."""

    def __init__(self, on_done: Callable[[str], None]) -> None:
        self._pending: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._on_done = on_done

    def started(self, partition: str | None, n: int = 1) -> None:
        if partition is None:
            return
        with self._lock:
            self._pending[partition] += n

    def finished(self, partition: str | None) -> None:
        if partition is None:
            return
        with self._lock:
            self._pending[partition] -= 1
            complete = self._pending[partition] <= 0
            if complete:
                del self._pending[partition]
        if complete:
            self._on_done(partition)

    @property
    def in_flight(self) -> int:
        with self._lock:
            return sum(self._pending.values())
