"""File helpers over fsspec: atomic writes, path listing and joining."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    import fsspec

__all__ = ["atomic_write", "expand_paths", "join_path", "get_fs", "ensure_dir", "file_stem",
           "COMPRESSION_SUFFIXES"]

#: compression suffixes dropped together with the extension before them by :func:`file_stem`
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".lz4", ".snappy", ".zip")


def get_fs(path: str) -> tuple[fsspec.AbstractFileSystem, str]:
    """The fsspec filesystem for ``path`` and the path within it (globs are not expanded)."""
    import fsspec  # noqa: PLC0415 - imported on first use: `import curator` stays light

    fs, inner = fsspec.core.url_to_fs(path)
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
    nothing matches.
    """
    items = [paths] if isinstance(paths, str) else list(paths)
    out: list[str] = []
    for item in items:
        fs, p = get_fs(item)
        protocol = item.split("://", 1)[0] + "://" if "://" in item else ""
        if any(ch in p for ch in "*?["):
            # like a shell glob (and directory listing), skip hidden files such as the
            # temporary files of atomic_write, unless the pattern itself names hidden files
            hidden_ok = p.rsplit("/", 1)[-1].startswith(".")
            found = [f for f in fs.glob(p) if fs.isfile(f)
                     and (hidden_ok or not f.rsplit("/", 1)[-1].startswith("."))]
        elif fs.isdir(p):
            found = [f for f in fs.find(p) if not f.rsplit("/", 1)[-1].startswith(".")]
        elif fs.exists(p):
            found = [p]
        else:
            raise FileNotFoundError(f"no file or directory matches {item!r}")
        if extensions and (fs.isdir(p) or any(ch in p for ch in "*?[")):
            found = [f for f in found if f.endswith(tuple(extensions))]
        out.extend(protocol + f if protocol and not f.startswith(protocol) else f for f in found)
    if not out:
        raise FileNotFoundError(f"no input files found in {paths!r} (extensions: {extensions})")
    return sorted(dict.fromkeys(out))
