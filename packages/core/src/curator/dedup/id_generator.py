"""NeMo Curator's ID generator: monotonically increasing integer ids (``_curator_dedup_id``)
handed out per reader task, and the same ids again for the same files later (removal).

NeMo keeps the generator in a detached Ray actor; Curator keeps its state (NeMo's JSON:
``next_id`` and ``batch_registry``) in a file guarded by a lock, so every worker process on the
machine shares it with no cluster at all. The directory is ``CURATOR_ID_GENERATOR_DIR`` (default:
a per-user directory in the system temp dir); on a multi-node cluster point it at a filesystem
every node shares. ``create_id_generator_actor`` / ``get_id_generator_actor`` /
``kill_id_generator_actor`` / ``write_id_generator_to_disk`` keep NeMo's names.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterator
from typing import Any

__all__ = ["CURATOR_DEDUP_ID_STR", "IdGeneratorBase", "IdGenerator", "create_id_generator_actor",
           "get_id_generator_actor", "kill_id_generator_actor", "write_id_generator_to_disk",
           "id_generator_dir"]

CURATOR_DEDUP_ID_STR = "_curator_dedup_id"
"""The id column readers add with ``_generate_ids`` / ``_assign_ids`` (NeMo Curator's name)."""


class IdGeneratorBase:
    """The generator's state in memory: ``register_batch(files, count)`` reserves ``count`` ids
    for a batch (the same files again get the same first id), ``get_batch_range(files)`` gives
    a registered batch's ``(min_id, max_id)``."""

    def __init__(self, start_id: int = 0,
                 batch_registry: dict[str, tuple[int, int]] | None = None) -> None:
        self.next_id = start_id
        self.batch_registry = {k: tuple(v) for k, v in (batch_registry or {}).items()}

    @staticmethod
    def hash_files(files: str | list[str]) -> str:
        files = files if isinstance(files, list) else [files]
        return str(uuid.uuid5(uuid.NAMESPACE_URL, ";".join(files)))

    def register_batch(self, files: str | list[str], count: int) -> int:
        key = self.hash_files(files)
        if key in self.batch_registry:
            return self.batch_registry[key][0]
        first = self.next_id
        self.next_id += count
        self.batch_registry[key] = (first, self.next_id - 1)
        return first

    def get_batch_range(self, files: str | list[str] | None, key: str | None = None
                        ) -> tuple[int, int]:
        if (files is None) == (key is None):
            raise ValueError("get_batch_range: give files or key (exactly one)")
        key = self.hash_files(files) if files is not None else key
        if key not in self.batch_registry:
            raise KeyError(f"no ids were generated for {files or key!r}: read these files with "
                           f"_generate_ids=True (or load the generator they were read with)")
        return tuple(self.batch_registry[key])

    def state(self) -> dict[str, Any]:
        return {"next_id": self.next_id,
                "batch_registry": {k: list(v) for k, v in self.batch_registry.items()}}

    def to_disk(self, filepath: str, storage_options: dict[str, Any] | None = None) -> None:
        import fsspec

        with fsspec.open(filepath, "w", **(storage_options or {})) as fh:
            json.dump(self.state(), fh)

    @classmethod
    def from_disk(cls, filepath: str, storage_options: dict[str, Any] | None = None
                  ) -> IdGeneratorBase:
        import fsspec

        with fsspec.open(filepath, "r", **(storage_options or {})) as fh:
            data = json.load(fh)
        return cls(start_id=data["next_id"], batch_registry=data["batch_registry"])


def id_generator_dir() -> str:
    """Where the shared generator's state lives (``CURATOR_ID_GENERATOR_DIR``)."""
    return os.environ.get("CURATOR_ID_GENERATOR_DIR") or os.path.join(
        _tempdir(), f"curator-id-generator-{os.getuid() if hasattr(os, 'getuid') else 0}")


class IdGenerator:
    """A handle on the shared generator (NeMo's actor): each call reads and updates the state
    file under an exclusive lock, so every process sees the ids the others reserved."""

    def __init__(self, directory: str | None = None) -> None:
        self.directory = directory or id_generator_dir()
        self.state_path = os.path.join(self.directory, "state.json")

    def exists(self) -> bool:
        return os.path.exists(self.state_path)

    @contextlib.contextmanager
    def _locked(self, write: bool) -> Iterator[IdGeneratorBase]:
        import fcntl

        os.makedirs(self.directory, exist_ok=True)
        with open(os.path.join(self.directory, "lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                if not self.exists():
                    raise ValueError("the ID generator does not exist: call "
                                     "create_id_generator_actor() before reading with "
                                     "_generate_ids=True or _assign_ids=True")
                with open(self.state_path) as fh:
                    data = json.load(fh)
                gen = IdGeneratorBase(data["next_id"], data["batch_registry"])
                yield gen
                if write:
                    tmp = f"{self.state_path}.tmp-{uuid.uuid4().hex[:8]}"
                    with open(tmp, "w") as fh:
                        json.dump(gen.state(), fh)
                    os.replace(tmp, self.state_path)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def reset(self, gen: IdGeneratorBase) -> None:
        os.makedirs(self.directory, exist_ok=True)
        tmp = f"{self.state_path}.tmp-{uuid.uuid4().hex[:8]}"
        with open(tmp, "w") as fh:
            json.dump(gen.state(), fh)
        os.replace(tmp, self.state_path)

    def register_batch(self, files: str | list[str], count: int) -> int:
        with self._locked(write=True) as gen:
            return gen.register_batch(files, count)

    def get_batch_range(self, files: str | list[str] | None, key: str | None = None
                        ) -> tuple[int, int]:
        with self._locked(write=False) as gen:
            return gen.get_batch_range(files, key)

    def to_disk(self, filepath: str, storage_options: dict[str, Any] | None = None) -> None:
        with self._locked(write=False) as gen:
            gen.to_disk(filepath, storage_options)


def create_id_generator_actor(filepath: str | None = None,
                              storage_options: dict[str, Any] | None = None) -> None:
    """Starts the shared ID generator: empty, or from a state file NeMo Curator or Curator wrote
    (``write_id_generator_to_disk``, a workflow's ``*_id_generator.json``). Replaces a generator
    left by an earlier run."""
    gen = (IdGeneratorBase.from_disk(filepath, storage_options) if filepath
           else IdGeneratorBase())
    IdGenerator().reset(gen)


def get_id_generator_actor() -> IdGenerator:
    """The shared ID generator (``ValueError`` when none was created, as NeMo's)."""
    handle = IdGenerator()
    if not handle.exists():
        raise ValueError("the ID generator does not exist: call create_id_generator_actor() first")
    return handle


def kill_id_generator_actor() -> None:
    """Removes the shared ID generator."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(IdGenerator().state_path)


def write_id_generator_to_disk(filepath: str, storage_options: dict[str, Any] | None = None
                               ) -> None:
    """Saves the shared generator's state (NeMo's JSON) to ``filepath``."""
    get_id_generator_actor().to_disk(filepath, storage_options)


def _tempdir() -> str:
    import tempfile  # not at import: the readers import this module for its column name

    return tempfile.gettempdir()
