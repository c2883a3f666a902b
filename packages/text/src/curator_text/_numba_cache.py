"""Where the numba cache of the FineWeb filters' kernels lives, and the notice while they compile.

numba caches a compiled kernel beside its source (``__pycache__``), else under the user's
``~/.cache/numba``, and raises when it can write to neither (a read-only install with no writable
home). For this package's kernels a locator tried before numba's user-wide one puts the cache
under ``$CURATOR_CACHE_DIR/numba`` (default ``~/.cache/curator/numba``), else a per-user temporary
directory; with no writable place at all the kernels compile without a cache. While a kernel
compiles (the first run on a machine, a few seconds) one INFO line says so."""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import threading

__all__ = ["cache_dir", "can_cache", "install"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_log = logging.getLogger("curator_text.kernels")
_told = threading.Event()
_installed = False


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()  # the check numba itself makes
    except OSError:
        return False
    return True


def _candidates() -> list[str]:
    root = os.environ.get("CURATOR_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "curator")
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return [os.path.join(root, "numba"),
            os.path.join(tempfile.gettempdir(), f"curator-{uid}", "numba")]


def cache_dir() -> str | None:
    """The fallback cache directory for kernels whose source directory is read-only (the first
    writable candidate), or ``None`` when there is none."""
    return next((d for d in _candidates() if _writable(d)), None)


def can_cache() -> bool:
    """Whether the kernels can be cached on disk somewhere (else they compile each process)."""
    here = os.path.join(_PACKAGE, "__pycache__")
    return _writable(here) or cache_dir() is not None or bool(os.environ.get("NUMBA_CACHE_DIR"))


def _notice(message: str) -> None:
    if _told.is_set():
        return
    _told.set()
    if _log.hasHandlers():  # the application configured logging: its levels decide
        _log.info(message)
    else:
        print(f"INFO curator_text: {message}", file=sys.stderr, flush=True)


def install() -> None:
    """Register the fallback locator and the compile notice (once per process)."""
    global _installed
    if _installed:
        return
    _installed = True
    from numba.core import caching, event

    base = getattr(caching, "UserProvidedCacheLocator", None) or caching._UserProvidedCacheLocator

    class CuratorCacheLocator(base):
        """This package's kernels, when numba cannot write beside their source."""

        def __init__(self, py_func, py_file) -> None:
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            self._cache_path = os.path.join(self._root, self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            own = os.path.abspath(py_file).startswith(_PACKAGE + os.sep)
            if (not own or os.environ.get("NUMBA_CACHE_DIR")
                    or _writable(os.path.join(os.path.dirname(py_file), "__pycache__"))):
                return None  # numba's own locators
            root = cache_dir()
            if root is None:
                return None
            cls._root = root
            return super(base, cls).from_function(py_func, py_file)

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # renamed in numba 0.62
    impl._locator_classes.insert(0, CuratorCacheLocator)

    class CompileNotice(event.Listener):
        def on_start(self, ev) -> None:
            disp = (ev.data or {}).get("dispatcher")
            module = getattr(getattr(disp, "py_func", None), "__module__", "") or ""
            if module.startswith("curator_text"):
                _notice("compiling the FineWeb filters' kernels (numba; once per machine, a few "
                        "seconds); later runs load them from the on-disk cache")

        def on_end(self, ev) -> None:
            pass

    event.register("numba:compile", CompileNotice())
