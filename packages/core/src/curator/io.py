"""File helpers over fsspec: atomic writes, path listing and joining."""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

from curator.local_fs import LOCAL_FS, is_plain_local_path

if TYPE_CHECKING:
    import fsspec

__all__ = ["atomic_write", "expand_paths", "list_files", "join_path", "get_fs", "ensure_dir", "file_stem",
           "COMPRESSION_SUFFIXES", "register_storage_options", "storage_options_for"]

#: compression suffixes dropped together with the extension before them by :func:`file_stem`
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".lz4", ".snappy", ".zip")


_STORAGE_OPTIONS: dict[str, dict[str, Any]] = {}


def register_storage_options(paths: str | Sequence[str], options: dict[str, Any] | None
                             ) -> None:
    """Use ``options`` (fsspec storage options: credentials, endpoint …) for every path under
    ``paths`` in this process: what a reader's ``read_kwargs={"storage_options": ...}`` or a
    writer's ``write_kwargs`` sets (stages register on the driver and again in each worker), so
    listing, reading, writing and the output directory's bookkeeping all see them. A later
    registration of the same path replaces the earlier one."""
    if not options:
        return
    for p in [paths] if isinstance(paths, str) else paths:
        root = str(p)
        for i, ch in enumerate(root):  # a glob's directory part
            if ch in "*?[":
                root = root[:i].rsplit("/", 1)[0] + "/"
                break
        _STORAGE_OPTIONS[root.rstrip("/") or root] = dict(options)


def storage_options_for(path: str) -> dict[str, Any]:
    """The storage options registered for ``path`` (its longest registered prefix), or ``{}``."""
    best, found = -1, {}
    for root, options in _STORAGE_OPTIONS.items():
        if (path == root or path.startswith(root + "/")) and len(root) > best:
            best, found = len(root), options
    return found


def get_fs(path: str, storage_options: dict[str, Any] | None = None
           ) -> tuple[fsspec.AbstractFileSystem, str]:
    """The fsspec filesystem for ``path`` and the path within it (globs are not expanded), with
    ``storage_options`` or else those registered for the path (:func:`register_storage_options`).

    A plain local path, while nothing in the process has imported fsspec, gets
    :data:`curator.local_fs.LOCAL_FS` (fsspec's interface on ``os`` calls: a small run does not
    pay fsspec's import); fsspec's own ``LocalFileSystem`` once fsspec is loaded."""
    options = storage_options if storage_options is not None else storage_options_for(path)
    if not options and "fsspec" not in sys.modules:
        path = os.fspath(path)
        if is_plain_local_path(path):
            return LOCAL_FS, LOCAL_FS._strip_protocol(path)
    import fsspec

    fs, inner = fsspec.core.url_to_fs(path, **options)
    return fs, inner


def join_path(base: str, *parts: str) -> str:
    """Join path parts with ``/`` (works for local paths and URLs)."""
    out = base.rstrip("/")
    for part in parts:
        out = f"{out}/{part.strip('/')}"
    return out


def file_stem(name: str) -> str:
    """A file's base name minus its extension: only the last suffix goes (plus a compression
    suffix before it), so ``dir/part.a.jsonl`` gives ``part.a`` and ``x.jsonl.gz`` gives ``x``;
    dotted names never collide. A name with no suffix (or only a leading dot) is kept whole."""
    base = str(name).rstrip("/").rsplit("/", 1)[-1]
    for _ in range(2):
        stem, dot, ext = base.rpartition(".")
        if not dot or not stem:
            break
        base = stem
        if f".{ext}".lower() not in COMPRESSION_SUFFIXES:
            break
    return base


def ensure_dir(path: str) -> None:
    fs, p = get_fs(path)
    fs.makedirs(p, exist_ok=True)


@contextlib.contextmanager
def atomic_write(path: str, mode: str = "wb", **open_kwargs: Any) -> Iterator[IO]:
    """Open ``path`` for writing so that it appears whole or not at all.

    Writes go to a temporary name beside the target, renamed over it only when the block exits
    without an error; on error the temporary file is removed. A re-run overwrites the file.
    """
    fs, target = get_fs(path)
    parent = target.rsplit("/", 1)[0] if "/" in target else "."
    fs.makedirs(parent, exist_ok=True)
    tmp = f"{parent}/.{target.rsplit('/', 1)[-1]}.tmp-{uuid.uuid4().hex[:8]}"
    try:
        with fs.open(tmp, mode, **open_kwargs) as fh:
            yield fh
        if fs.protocol in ("file", ("file", "local")) or "file" in (fs.protocol or ()):
            os.replace(tmp, target)
        else:
            fs.mv(tmp, target)
    except BaseException:
        with contextlib.suppress(Exception):
            fs.rm(tmp)
        raise


def expand_paths(paths: str | Sequence[str], extensions: Sequence[str] | None = None) -> list[str]:
    """Expand a directory, glob pattern or list of them into a sorted list of file paths.

    ``extensions`` (like ``[".jsonl", ".json"]``) filters files found in directories and globs.
    Protocol prefixes (``s3://``) are kept. Raises ``FileNotFoundError`` naming the pattern when
    nothing matches. See :func:`list_files` for the sizes too.
    """
    return [path for path, _ in list_files(paths, extensions)]


def list_files(paths: str | Sequence[str], extensions: Sequence[str] | None = None,
               max_workers: int = 8) -> list[tuple[str, int]]:
    """Like :func:`expand_paths`, with each file's size: sorted ``(path, size_in_bytes)`` pairs.

    Each directory or glob is listed with one batched ``fs.find``/``fs.glob(detail=True)``
    (sizes come with the listing, never one ``fs.size`` call per file); several inputs are
    listed in parallel on up to ``max_workers`` threads.
    """
    items = [paths] if isinstance(paths, str) else list(paths)
    if len(items) > 1 and max_workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(max_workers, len(items))) as pool:
            listed = list(pool.map(lambda it: _list_one(it, extensions), items))
    else:
        listed = [_list_one(item, extensions) for item in items]
    out: dict[str, int] = {}
    for found in listed:
        for path, size in found:
            out.setdefault(path, size)
    if not out:
        raise FileNotFoundError(f"no input files found in {paths!r} (extensions: {extensions})")
    return sorted(out.items())


def _list_one(item: str, extensions: Sequence[str] | None) -> list[tuple[str, int]]:
    """``(path, size)`` of the files one path, directory or glob names (one listing call)."""
    fs, p = get_fs(item)
    protocol = item.split("://", 1)[0] + "://" if "://" in item else ""
    if any(ch in p for ch in "*?["):
        # like a shell glob (and directory listing), skip hidden files such as the
        # temporary files of atomic_write, unless the pattern itself names hidden files
        hidden_ok = p.rsplit("/", 1)[-1].startswith(".")
        base = ""
        listing = fs.glob(p, detail=True)
    else:
        try:
            info = fs.info(p)
        except FileNotFoundError:
            raise FileNotFoundError(f"no file or directory matches {item!r}") from None
        if info.get("type") != "directory":
            return [(protocol + p if protocol and not p.startswith(protocol) else p,
                     int(info.get("size") or 0))]
        hidden_ok = False
        base = p.rstrip("/") + "/"  # its hidden subfolders are skipped too (the run manifest's
        listing = fs.find(p, detail=True)  # journal and resume state live in .curator-*/)
    found = [(name, int(info.get("size") or 0)) for name, info in listing.items()
             if info.get("type") == "file"
             and (hidden_ok or not any(part.startswith(".") for part in (
                 name[len(base):] if base and name.startswith(base)
                 else name.rsplit("/", 1)[-1]).split("/")))]
    if extensions:
        found = [(f, s) for f, s in found if f.endswith(tuple(extensions))]
    return [(protocol + f if protocol and not f.startswith(protocol) else f, s) for f, s in found]
