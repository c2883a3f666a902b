"""Responses kept on disk so a resumed or repeated run pays for no request twice.

A directory of small JSON files, one per answer, named by the SHA-256 of the request key
(``ab/abcdef….json``). Chosen over sqlite because every worker process — and every node of a
Ray cluster on a shared file system — writes independently with no lock and no server: a file
is written under a temporary name and renamed into place (``os.replace`` is atomic), so a reader
sees a whole answer or none, a process killed mid-write leaves only a ``.tmp`` file that is
never read, and two workers answering the same request write the same bytes. sqlite would need
one writer at a time and is unsafe on network file systems.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable
from typing import Any

__all__ = ["ResponseCache", "request_key"]

log = logging.getLogger(__name__)

#: bump when the stored layout or the key recipe changes
CACHE_FORMAT = 1


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def request_key(model: str, messages: Iterable[Any], generation_config: Any) -> str:
    """The cache key of a request: SHA-256 over the model name, the messages and every
    generation parameter (the seed is one of them), as canonical JSON."""
    payload = {"v": CACHE_FORMAT, "model": model, "messages": _plain(list(messages)),
               "config": _plain(generation_config)}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers on disk under ``directory`` (created when missing), by :func:`request_key`.

    Only successful answers are stored: a failed request is sent again by the next run.
    ``read_only=True`` uses the answers without adding any."""

    def __init__(self, directory: str | os.PathLike[str], *, read_only: bool = False) -> None:
        self.directory = os.path.abspath(os.fspath(directory))
        self.read_only = read_only
        if not read_only:
            os.makedirs(self.directory, exist_ok=True)

    def __repr__(self) -> str:
        return f"ResponseCache({self.directory!r})"

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".json")

    def get(self, key: str) -> list[str] | None:
        """The stored choices of ``key``, or None."""
        try:
            with open(self._path(key), encoding="utf-8") as fh:
                entry = json.load(fh)
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:  # unreadable: ask the server again
            log.warning("ignoring unreadable cached response %s: %s", self._path(key), exc)
            return None
        choices = entry.get("choices") if isinstance(entry, dict) else None
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
            return None
        return choices

    def put(self, key: str, choices: list[str], **extra: Any) -> None:
        """Store ``choices`` for ``key`` atomically (temporary file, then rename)."""
        if self.read_only:
            return
        path = self._path(key)
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{key[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"choices": list(choices), **extra}, fh, ensure_ascii=False)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def __contains__(self, key: str) -> bool:
        return os.path.exists(self._path(key))

    def __len__(self) -> int:
        return sum(1 for _root, _dirs, files in os.walk(self.directory)
                   for f in files if f.endswith(".json"))


def as_cache(cache: ResponseCache | str | os.PathLike[str] | None) -> ResponseCache | None:
    """A :class:`ResponseCache` from a directory path (None: no cache)."""
    if cache is None or isinstance(cache, ResponseCache):
        return cache
    return ResponseCache(cache)
