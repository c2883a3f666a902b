"""Resumable runs: remember which source partitions are fully written."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict

from curator.errors import ConfigError
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
        self._block_size: int | None = None
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

    def check_block_size(self, block_size: int | None) -> None:
        """Record the block size big input files are split by (``block_size.json``) on the first
        run; a resumed run with another one would name its partitions differently (redoing
        finished blocks and writing their rows twice), so it is refused."""
        if block_size is None or self._block_size == block_size:
            return
        target = join_path(self.path, "block_size.json")
        fs, p = get_fs(target)
        try:
            with fs.open(p, "r") as fh:
                recorded = json.load(fh).get("block_size")
        except FileNotFoundError:
            with atomic_write(target, "w") as fh:
                json.dump({"block_size": block_size}, fh)
            recorded = block_size
        if recorded != block_size:
            raise ConfigError(
                f"checkpoint {self.path}: its partitions were cut into blocks of {recorded} bytes "
                f"but this run cuts them into {block_size}; pass blocksize={recorded} to the "
                f"reader to resume it, or use a new checkpoint directory")
        self._block_size = block_size

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
    """Decides when a source partition is done; the one implementation every executor uses.

    A partition is done when every task descending from it has passed the last stage, or was
    consumed by a stage that succeeded (its rejected records, if any, are in the sink). A task
    that **failed** (after its retries) poisons its partition: it is never marked done, so a
    resumed run redoes it. Reports may arrive in any order (streaming executors report out of
    order): a multiset of ``(stage index, task id)`` keys per partition counts +1 when a task is
    seeded or produced and -1 when it is consumed; at zero the partition is finished.

    Executors call :meth:`seed` for each task that enters the first stage they run, and
    :meth:`report` once per outcome: "stage ``index`` consumed these ``(partition, task_id)``
    pairs and produced those; ``failed`` says the consumed task failed for good".

    Parameters:
        checkpoint: where finished partitions are marked (``None``: mark nothing).
        n_stages: the number of stages of the pipeline (outputs of the last one are final).
        count: count partitions even without a checkpoint (for :meth:`open_partitions`);
            without either the tracker does nothing.
    """

    def __init__(self, checkpoint: CheckpointStore | None, n_stages: int,
                 count: bool = False) -> None:
        self.checkpoint = checkpoint
        self.n_stages = n_stages
        self.counting = count or checkpoint is not None
        self._counts: dict[str, dict[tuple[int, str], int]] = defaultdict(dict)
        self._failed: set[str] = set()
        self.finished: list[str] = []
        #: every partition this run worked on (while counting): the summary's "redone"
        self.seen: set[str] = set()
        self._lock = threading.Lock()

    def _bump(self, part: str | None, key: tuple[int, str], n: int) -> str | None:
        """Change one count; returns the partition when it just reached zero everywhere."""
        if part is None or not self.counting:
            return None
        counts = self._counts[part]
        if n > 0:
            self.seen.add(part)
        value = counts.get(key, 0) + n
        if value:
            counts[key] = value
            return None
        counts.pop(key, None)
        if counts:
            return None
        del self._counts[part]
        return part

    def seed(self, part: str | None, task_id: str, index: int = 0) -> None:
        """A task of partition ``part`` enters stage ``index``."""
        with self._lock:
            self._bump(part, (index, task_id), 1)

    def report(self, index: int, consumed: list[tuple[str | None, str]],
               produced: list[tuple[str | None, str]], failed: bool = False) -> None:
        """Stage ``index`` consumed ``consumed`` and produced ``produced`` (pairs of partition
        and task id); with ``failed`` the consumed tasks failed for good."""
        complete = []
        with self._lock:
            if failed:
                self._failed.update(p for p, _ in consumed if p is not None)
            if index + 1 < self.n_stages:
                for part, tid in produced:
                    self._bump(part, (index + 1, tid), 1)
            for part, tid in consumed:
                done = self._bump(part, (index, tid), -1)
                if done is not None and done not in self._failed:
                    complete.append(done)
        if self.checkpoint is None:
            return
        for part in complete:  # outside the lock: writing a marker is I/O
            self.checkpoint.mark_done(part)
            self.finished.append(part)

    def open_partitions(self) -> set[str]:
        """Partitions with a task still to be consumed (only while counting)."""
        with self._lock:
            return set(self._counts)

    def outstanding(self, parts: set[str], indices: set[int]) -> set[tuple[int, str, str]]:
        """``(stage index, partition, task id)`` of the tasks of ``parts`` still to be consumed
        by the stages ``indices`` (only while counting)."""
        with self._lock:
            return {(i, part, tid) for part in parts for (i, tid) in self._counts.get(part, {})
                    if i in indices}

    @property
    def failed_partitions(self) -> set[str]:
        """Partitions with a task that failed for good (never marked done)."""
        with self._lock:
            return set(self._failed)

    @property
    def in_flight(self) -> int:
        """Tasks seeded or produced but not yet consumed."""
        with self._lock:
            return sum(sum(c.values()) for c in self._counts.values())
