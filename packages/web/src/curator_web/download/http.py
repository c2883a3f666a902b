"""Fetching one URL to a local file: retries, resume of partial files with HTTP Range, a size
check and atomic placement. ``http(s)://`` goes through the standard library; every other
protocol (``s3://``, ``gs://`` …) through fsspec."""

from __future__ import annotations

import logging
import os
import shutil
import time
import urllib.error
import urllib.request
from http.client import HTTPException

from curator.io import get_fs

__all__ = ["DownloadError", "fetch", "is_local", "read_url"]

log = logging.getLogger(__name__)
_CHUNK = 1 << 20


class DownloadError(RuntimeError):
    """A URL could not be fetched after all retries."""


def is_local(url: str) -> bool:
    """Whether ``url`` names a file on this machine (a plain path or ``file://``)."""
    return "://" not in url or url.startswith("file://")


def _local_path(url: str) -> str:
    return url[len("file://"):] if url.startswith("file://") else url


def read_url(url: str, *, retries: int = 3, timeout: float = 60.0) -> bytes:
    """The whole content of a small ``url`` (listings, indexes), with retries."""
    if is_local(url):
        with open(_local_path(url), "rb") as fh:
            return fh.read()
    last: Exception | None = None
    for attempt in range(retries + 1):
        try:
            if url.startswith(("http://", "https://")):
                with urllib.request.urlopen(url, timeout=timeout) as resp:
                    return resp.read()
            fs, p = get_fs(url)
            with fs.open(p, "rb") as fh:
                return fh.read()
        except (OSError, HTTPException) as exc:
            last = exc
            if isinstance(exc, urllib.error.HTTPError) and 400 <= exc.code < 500:
                break
            time.sleep(min(0.2 * 2 ** attempt, 5.0))
    raise DownloadError(f"could not read {url}: {last}") from last


def fetch(url: str, path: str, *, retries: int = 3, timeout: float = 60.0,
          expected_size: int | None = None, backoff: float = 0.2) -> str:
    """Download ``url`` to the local ``path`` and return ``path``.

    Bytes go to ``path + ".part"``; a retry (or a later run) resumes from the bytes already
    there with an HTTP ``Range`` request. The file is renamed to ``path`` only when its size
    matches the server's ``Content-Length`` / ``Content-Range`` (or ``expected_size``). A file
    already at ``path`` is kept. Raises :class:`DownloadError` after ``retries`` failed retries.
    """
    if os.path.exists(path) and os.path.getsize(path) > 0:
        return path
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    part = path + ".part"
    last: Exception | None = None
    for attempt in range(retries + 1):
        try:
            if url.startswith(("http://", "https://")):
                total = _http_to(url, part, timeout)
            else:
                total = _fsspec_to(url, part)
            if expected_size is not None:
                total = expected_size
            size = os.path.getsize(part)
            if total is not None and size != total:
                if size > total:  # not a prefix of this file: start again on the next try
                    os.remove(part)
                raise DownloadError(f"size check failed for {url}: got {size} bytes, "
                                    f"expected {total}")
            os.replace(part, path)
            return path
        except (OSError, HTTPException, DownloadError) as exc:
            last = exc
            if isinstance(exc, urllib.error.HTTPError) and 400 <= exc.code < 500 \
                    and exc.code != 416:
                break
            log.warning("download of %s failed (attempt %d/%d): %s", url, attempt + 1,
                        retries + 1, exc)
            if attempt < retries:
                time.sleep(min(backoff * 2 ** attempt, 10.0))
    raise DownloadError(f"could not download {url} to {path} after {retries + 1} attempts: "
                        f"{last}. The partial file {part} is kept; re-run to resume.") from last


def _http_to(url: str, part: str, timeout: float) -> int | None:
    """Append the missing bytes of ``url`` to ``part``; return the full size when known."""
    have = os.path.getsize(part) if os.path.exists(part) else 0
    req = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        resp = urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 416 and have:  # nothing left to fetch: the part file is complete
            total = exc.headers.get("Content-Range", "").rpartition("/")[2]
            return int(total) if total.isdigit() else have
        raise
    with resp:
        if resp.status == 206:
            total_s = resp.headers.get("Content-Range", "").rpartition("/")[2]
            total = int(total_s) if total_s.isdigit() else None
            mode = "ab"
        else:  # 200: the server ignored the range, start again
            length = resp.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            mode = "wb"
        with open(part, mode) as out:
            shutil.copyfileobj(resp, out, _CHUNK)
    return total


def _fsspec_to(url: str, part: str) -> int | None:
    fs, p = get_fs(url)
    try:
        total = int(fs.size(p))
    except Exception:
        total = None
    have = os.path.getsize(part) if os.path.exists(part) else 0
    with fs.open(p, "rb") as src, open(part, "ab" if have else "wb") as out:
        if have:
            src.seek(have)
        shutil.copyfileobj(src, out, _CHUNK)
    return total
