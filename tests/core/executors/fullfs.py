"""Fault injection for the "nothing lost" tests: a disk that fills up and a read-only disk.

A real small tmpfs needs root mount rights the test machines do not give, and tests run as
root, where ``chmod`` does not stop writes; so the faults are injected at the file-object level:

* :class:`FullDiskFile` wraps a writable file and raises ``OSError(ENOSPC)`` once more than
  ``limit`` bytes were written to it (a file that does not fit on the disk);
* :class:`FaultyFileSystem` is an fsspec file system (protocol ``faulty://``) over the local
  disk whose files fail like that: ``CURATOR_TEST_DISK_LIMIT`` bytes per file (``ENOSPC``) or,
  with ``CURATOR_TEST_DISK_READONLY=1``, every write (``EROFS``). Curator's own bookkeeping
  files (``.curator-*``: the output directory's lock and manifest) are exempt, so the run
  starts and the writers are what fails. :func:`sitecustomize` writes a ``sitecustomize.py``
  that registers it in every Python process started with that directory on ``PYTHONPATH``.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

from fsspec.implementations.local import LocalFileSystem

__all__ = ["FullDiskFile", "FaultyFileSystem", "register", "sitecustomize"]

ROOT = Path(__file__).resolve().parents[3]


class FullDiskFile:
    """A writable file that raises ``OSError(errno)`` once more than ``limit`` bytes arrive."""

    def __init__(self, fh: Any, limit: int, code: int = errno.ENOSPC) -> None:
        self._fh = fh
        self._left = limit
        self._code = code

    def write(self, data: Any) -> int:
        if len(data) > self._left:
            raise OSError(self._code, os.strerror(self._code), getattr(self._fh, "name", ""))
        self._left -= len(data)
        return self._fh.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)

    def __enter__(self) -> FullDiskFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()


class FaultyFileSystem(LocalFileSystem):
    """The local disk behind ``faulty://``, full or read-only as the environment says."""

    protocol = ("faulty",)
    root_marker = "/"

    @classmethod
    def _strip_protocol(cls, path: Any) -> str:
        path = str(path)
        if path.startswith("faulty://"):
            path = path[len("faulty://"):]
        return super()._strip_protocol(path)

    def _open(self, path: str, mode: str = "rb", *args: Any, **kwargs: Any) -> Any:
        writes = any(m in mode for m in "wax") and not any(  # .curator-* files and folders
            ".curator-" in part for part in Path(path).parts)
        if writes and os.environ.get("CURATOR_TEST_DISK_READONLY") == "1":
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)
        fh = super()._open(path, mode, *args, **kwargs)
        limit = os.environ.get("CURATOR_TEST_DISK_LIMIT")
        return FullDiskFile(fh, int(limit)) if writes and limit else fh


def register() -> None:
    """Make ``faulty://`` known to fsspec in this process."""
    import fsspec

    fsspec.register_implementation("faulty", FaultyFileSystem, clobber=True)


def sitecustomize(folder: Path) -> dict[str, str]:
    """Write a ``sitecustomize.py`` registering ``faulty://`` into ``folder``; returns the
    environment additions that make a subprocess load it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        "from tests.core.executors.fullfs import register\nregister()\n")
    path = os.pathsep.join([str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")])
    return {"PYTHONPATH": path.rstrip(os.pathsep)}
