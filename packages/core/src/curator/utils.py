"""NeMo Curator's file helpers that its tutorials import (``nemo_curator.utils.file_utils``,
``client_utils``, ``hash_utils``, ``split_large_files``), with NeMo's names and parameters.
``curator migrate`` maps those imports here. Paths go through fsspec; ``storage_options`` are
passed to the filesystem."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from curator.tasks import get_deterministic_hash

if TYPE_CHECKING:
    import fsspec

__all__ = ["get_all_file_paths_under", "get_fs", "create_or_overwrite_dir", "is_remote_url",
           "get_deterministic_hash", "split_jsonl_file_by_size"]

logger = logging.getLogger(__name__)


def get_fs(path: str, storage_options: dict[str, Any] | None = None
           ) -> fsspec.AbstractFileSystem:
    """The fsspec filesystem for ``path`` (NeMo's ``get_fs``: the filesystem only)."""
    import fsspec

    return fsspec.core.url_to_fs(path, **(storage_options or {}))[0]


def is_remote_url(url: str) -> bool:
    """True when ``url`` names a filesystem other than the local one (``s3://``, ``gs://`` …)."""
    proto = get_fs(url).protocol
    proto = proto[0] if isinstance(proto, list | tuple) else proto
    return proto not in (None, "file", "local")


def get_all_file_paths_under(path: str, recurse_subdirectories: bool = False,
                             keep_extensions: str | list[str] | None = None,
                             storage_options: dict[str, Any] | None = None,
                             fs: fsspec.AbstractFileSystem | None = None) -> list[str]:
    """The sorted file paths under ``path`` (a file, directory or glob): only the directory's own
    files unless ``recurse_subdirectories``; ``keep_extensions`` (``"jsonl"`` or
    ``[".jsonl", "parquet"]``, any case) filters by the last suffix. Remote paths keep their
    protocol (``s3://…``)."""
    import fsspec

    fs = fs or fsspec.core.url_to_fs(path, **(storage_options or {}))[0]
    keep = None if keep_extensions is None else {
        e.casefold().lstrip(".") for e in ([keep_extensions] if isinstance(keep_extensions, str)
                                           else keep_extensions)}
    remote = "://" in path and not path.startswith("file://")
    out = []
    for root in fs.expand_path(path, recursive=False):
        if fs.isdir(root):
            found = fs.find(root, maxdepth=None if recurse_subdirectories else 1, withdirs=False)
        elif fs.exists(root):
            found = [root]
        else:
            found = []
        for p in found:
            if keep is None or p.rsplit("/", 1)[-1].rpartition(".")[2].casefold() in keep:
                out.append(fs.unstrip_protocol(p) if remote else p)
    return sorted(out)


def create_or_overwrite_dir(path: str, fs: fsspec.AbstractFileSystem | None = None,
                            storage_options: dict[str, Any] | None = None) -> None:
    """Creates ``path``; as in NeMo Curator, **deletes everything in it first** when it is not
    empty (logged as a warning). For pipeline outputs prefer a writer's ``mode``, which deletes
    only files a Curator run wrote."""
    if fs is not None and storage_options is not None:
        raise ValueError("create_or_overwrite_dir: give fs or storage_options, not both")
    fs = fs or get_fs(path, storage_options)
    if fs.exists(path) and fs.ls(path):
        logger.warning("Output directory %s is not empty. Deleting it.", path)
        fs.rm(path, recursive=True)
    fs.makedirs(path, exist_ok=True)


def _split_jsonl_file_by_size(input_file: str, output_path: str, target_size_mb: int,
                              storage_options: dict[str, Any] | None = None) -> list[str]:
    import fsspec

    from curator.io import atomic_write, join_path

    name = str(input_file).rstrip("/").rsplit("/", 1)[-1]
    root, dot, ext = name.rpartition(".")
    root, ext = (root, f".{ext}") if dot and root else (name, ".jsonl")
    target = target_size_mb * 1024 * 1024
    written: list[str] = []
    chunk: list[bytes] = []
    size = 0

    def flush() -> None:
        nonlocal chunk, size
        out = join_path(output_path, f"{root}_{len(written)}{ext}")
        with atomic_write(out, "wb") as fh:
            fh.writelines(chunk)
        written.append(out)
        chunk, size = [], 0

    with fsspec.open(str(input_file), "rb", **(storage_options or {})) as fh:
        for line in fh:
            if chunk and size + len(line) > target:
                flush()
            chunk.append(line)
            size += len(line)
    if chunk:
        flush()
    return written


class _RayRemoteFunction:
    """A plain function that also has NeMo's ``.remote(...)`` (a Ray task) form."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self._fn = fn
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__.lstrip("_")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        import ray

        return ray.remote(self._fn).remote(*args, **kwargs)


split_jsonl_file_by_size = _RayRemoteFunction(_split_jsonl_file_by_size)
"""Splits a JSONL file into ``{output_path}/{stem}_{i}{ext}`` files of about ``target_size_mb``
(whole lines; a longer line is a file of its own). Call it directly or, as NeMo's tutorials do,
``ray.get(split_jsonl_file_by_size.remote(...))``. Returns the files written."""
