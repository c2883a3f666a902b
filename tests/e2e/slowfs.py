"""A slow disk for the interrupt tests: the fsspec file system ``slow://`` over the local disk
(and, with ``CURATOR_TEST_SLOW_LOCAL=1``, the local disk itself) whose data files take
``CURATOR_TEST_SLOW_WRITE`` seconds to write (a sleep before the first
write; Curator's own ``.curator-*`` bookkeeping is not slowed), so a test can interrupt or kill
a real run while a file is half written. :func:`sitecustomize` writes a ``sitecustomize.py``
that registers it in every Python process started with that directory on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from fsspec.implementations.local import LocalFileSystem

__all__ = ["SlowFileSystem", "register", "sitecustomize"]

ROOT = Path(__file__).resolve().parents[2]


class _SlowFile:
    def __init__(self, fh: Any, delay: float) -> None:
        self._fh, self._delay = fh, delay

    def write(self, data: Any) -> int:
        if self._delay:
            time.sleep(self._delay)
            self._delay = 0.0
        return self._fh.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)

    def __enter__(self) -> _SlowFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()


class SlowFileSystem(LocalFileSystem):
    """The local disk behind ``slow://``; writes of data files are slowed (see module doc)."""

    protocol = ("slow",)
    root_marker = "/"

    @classmethod
    def _strip_protocol(cls, path: Any) -> str:
        path = str(path)
        if path.startswith("slow://"):
            path = path[len("slow://"):]
        return super()._strip_protocol(path)

    def _open(self, path: str, mode: str = "rb", *args: Any, **kwargs: Any) -> Any:
        fh = super()._open(path, mode, *args, **kwargs)
        delay = float(os.environ.get("CURATOR_TEST_SLOW_WRITE") or 0)
        writes = any(m in mode for m in "wax") and ".curator-" not in path
        return _SlowFile(fh, delay) if writes and delay else fh


def register() -> None:
    """Make ``slow://`` known to fsspec in this process; with ``CURATOR_TEST_SLOW_LOCAL=1``
    plain local paths too (for code that also hands local paths to pyarrow directly)."""
    import fsspec

    fsspec.register_implementation("slow", SlowFileSystem, clobber=True)
    if os.environ.get("CURATOR_TEST_SLOW_LOCAL") == "1":
        for protocol in ("file", "local"):
            fsspec.register_implementation(protocol, SlowFileSystem, clobber=True)


def sitecustomize(directory: Path) -> dict[str, str]:
    """Write a ``sitecustomize.py`` registering ``slow://`` into ``directory``; returns the
    environment (``PYTHONPATH``) that makes a child Python process load it."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from tests.e2e.slowfs import register\nregister()\n")
    path = os.pathsep.join(p for p in (str(directory), str(ROOT),
                                       os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path}
