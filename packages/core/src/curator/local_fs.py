"""The local disk with fsspec's interface, answered by ``os`` calls without importing fsspec.

Importing fsspec costs a run 40-80 ms (it imports asyncio and reads every installed
distribution's entry points, then tears them down at exit): most of what a small local run pays
beyond NumPy and Arrow. :func:`curator.io.get_fs` hands out :data:`LOCAL_FS` for plain local paths
until something in the process imports fsspec (a remote path, a registered ``file``
implementation, user code); from then on fsspec's own ``LocalFileSystem`` answers. The methods
below give exactly what fsspec's give (``tests/core/test_local_fs.py`` compares them); any other
attribute is fsspec's own, imported on first use.
"""

from __future__ import annotations

import os
import stat
from typing import IO, Any

__all__ = ["LocalFileSystem", "LOCAL_FS", "is_plain_local_path"]

# file name extensions fsspec's compression="infer" may decompress (a superset: such files are
# opened by fsspec itself)
_COMPRESSED = frozenset({"gz", "gzip", "bz2", "xz", "lzma", "zip", "zst", "zstd", "lz4", "sz",
                         "snappy", "br", "z"})


def is_plain_local_path(path: str) -> bool:
    """Whether fsspec reads ``path`` as a path on the local disk with no protocol or chain."""
    return (os.sep == "/" and "://" not in path and "::" not in path
            and not path.startswith(("file:", "local:", "data:")))


class LocalFileSystem:
    """fsspec's ``LocalFileSystem`` (``auto_mkdir=False``) for plain local paths."""

    protocol = ("file", "local")
    root_marker = "/"
    local_file = True
    fsid = "local"

    def __init__(self) -> None:
        self._fsspec: Any = None

    def fsspec(self) -> Any:
        """fsspec's own ``LocalFileSystem`` (imported on first use)."""
        if self._fsspec is None:
            from fsspec.implementations.local import LocalFileSystem as FsspecLocal

            self._fsspec = FsspecLocal()
        return self._fsspec

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_fsspec":
            raise AttributeError(name)
        return getattr(self.fsspec(), name)

    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return _local_fs, ()

    def __repr__(self) -> str:
        return "curator.local_fs.LocalFileSystem()"

    @classmethod
    def _strip_protocol(cls, path: Any) -> str:
        path = os.fspath(path)
        if not is_plain_local_path(path):
            from fsspec.implementations.local import LocalFileSystem as FsspecLocal

            return FsspecLocal._strip_protocol(path)
        if path.startswith("/"):
            pass
        elif path.startswith("~"):
            path = os.path.expanduser(path)
        else:
            if path.startswith("./"):
                path = path[2:]
            elif path == ".":
                path = ""
            path = f"{os.getcwd()}/{path}"
        return path.rstrip("/") or cls.root_marker

    def unstrip_protocol(self, name: str) -> str:
        return f"file://{self._strip_protocol(name)}"

    # -- reading and writing -----------------------------------------------------------------
    def open(self, path: Any, mode: str = "rb", block_size: int | None = None,
             cache_options: dict | None = None, compression: str | None = None,
             **kwargs: Any) -> IO:
        path = self._strip_protocol(path)
        text_kwargs = {k: kwargs.pop(k) for k in ("encoding", "errors", "newline")
                       if k in kwargs and "b" not in mode}
        if (block_size is not None or cache_options is not None or kwargs
                or (compression is not None and (
                    compression != "infer"
                    or path.rsplit(".", 1)[-1].lower() in _COMPRESSED))
                or (self._fsspec is not None and self._fsspec._intrans)):
            return self.fsspec().open(path, mode, block_size=block_size,
                                      cache_options=cache_options, compression=compression,
                                      **text_kwargs, **kwargs)
        return open(path, mode, **text_kwargs)

    # -- directories ------------------------------------------------------------------------
    def makedirs(self, path: Any, exist_ok: bool = False) -> None:
        os.makedirs(self._strip_protocol(path), exist_ok=exist_ok)

    def rmdir(self, path: Any) -> None:
        os.rmdir(self._strip_protocol(path))

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        for p in path if isinstance(path, list) else [path]:
            p = self._strip_protocol(p)
            if self.isdir(p) and not os.path.islink(p):
                if not recursive:
                    raise ValueError("Cannot delete directory, set recursive=True")
                if os.path.abspath(p) == os.getcwd():
                    raise ValueError("Cannot delete current working directory")
                import shutil

                shutil.rmtree(p)
            else:
                os.remove(p)

    # -- what is there ----------------------------------------------------------------------
    def info(self, path: Any, **kwargs: Any) -> dict[str, Any]:
        if isinstance(path, os.DirEntry):
            out = path.stat(follow_symlinks=False)
            link = path.is_symlink()
            if path.is_dir(follow_symlinks=False):
                kind = "directory"
            elif path.is_file(follow_symlinks=False):
                kind = "file"
            else:
                kind = "other"
            size = out.st_size
            if link:
                try:
                    size = path.stat(follow_symlinks=True).st_size
                except OSError:
                    size = 0
            path = self._strip_protocol(path.path)
        else:
            path = self._strip_protocol(path)
            out = os.stat(path, follow_symlinks=False)
            link = stat.S_ISLNK(out.st_mode)
            if link:
                out = os.stat(path, follow_symlinks=True)
            size = out.st_size
            kind = ("directory" if stat.S_ISDIR(out.st_mode)
                    else "file" if stat.S_ISREG(out.st_mode) else "other")
        result = {"name": path, "size": size, "type": kind,
                  "created": getattr(out, "st_birthtime", out.st_ctime), "islink": link}
        for field in ("mode", "uid", "gid", "mtime", "ino", "nlink"):
            result[field] = getattr(out, f"st_{field}")
        if link:
            result["destination"] = os.readlink(path)
        return result

    def size(self, path: Any) -> int:
        return self.info(path).get("size")

    def exists(self, path: Any, **kwargs: Any) -> bool:
        try:
            self.info(path, **kwargs)
            return True
        except Exception:
            return False

    def isdir(self, path: Any) -> bool:
        return os.path.isdir(self._strip_protocol(path))

    def isfile(self, path: Any) -> bool:
        return os.path.isfile(self._strip_protocol(path))

    def ls(self, path: Any, detail: bool = False, **kwargs: Any) -> list:
        path = self._strip_protocol(path)
        path_info = self.info(path)
        if path_info["type"] != "directory":
            return [path_info] if detail else [path_info["name"]]
        infos = []
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    infos.append(self.info(entry) if detail else self._strip_protocol(entry.path))
                except FileNotFoundError:
                    pass
        return infos

    def find(self, path: Any, maxdepth: int | None = None, withdirs: bool = False,
             detail: bool = False, **kwargs: Any) -> list[str] | dict[str, dict]:
        if kwargs:
            return self.fsspec().find(path, maxdepth=maxdepth, withdirs=withdirs, detail=detail,
                                      **kwargs)
        path = self._strip_protocol(path)
        out: dict[str, dict] = {}
        if withdirs and path != "" and self.isdir(path):
            out[path] = self.info(path)
        for dirs, files in self._walk(path, maxdepth):
            if withdirs:
                files.update(dirs)
            out.update({info["name"]: info for info in files.values()})
        if not out and self.isfile(path):
            out[path] = {}
        names = sorted(out)
        return {name: out[name] for name in names} if detail else names

    def _walk(self, path: str, maxdepth: int | None):
        """fsspec's ``walk(path, maxdepth, detail=True)``: ``(dirs, files)`` of each directory,
        top down."""
        if maxdepth is not None and maxdepth < 1:
            raise ValueError("maxdepth must be at least 1")
        path = self._strip_protocol(path)
        try:
            listing = self.ls(path, detail=True)
        except OSError:
            return
        full_dirs, dirs, files = {}, {}, {}
        for info in listing:
            pathname = info["name"].rstrip("/")
            name = pathname.rsplit("/", 1)[-1]
            if info["type"] == "directory" and pathname != path:
                full_dirs[name] = pathname
                dirs[name] = info
            elif pathname == path:
                files[""] = info
            else:
                files[name] = info
        yield dirs, files
        if maxdepth is not None:
            maxdepth -= 1
            if maxdepth < 1:
                return
        for d in dirs:
            yield from self._walk(full_dirs[d], maxdepth)


def _local_fs() -> LocalFileSystem:
    return LOCAL_FS


LOCAL_FS = LocalFileSystem()
"""The one instance :func:`curator.io.get_fs` hands out."""
