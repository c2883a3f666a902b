"""Stream the samples of a WebDataset tar shard, reporting broken members instead of raising."""

from __future__ import annotations

import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from curator_image.io.paths import is_safe_member

__all__ = ["TarSample", "TarProblem", "iter_tar_samples", "base_plus_ext"]

_KEY_RE = re.compile(r"^((?:.*/|)[^.]+)[.]([^/]*)$")


def base_plus_ext(name: str) -> tuple[str | None, str | None]:
    """WebDataset's sample-key convention: ``dir/key.ext.more`` -> (``dir/key``, ``ext.more``).
    (The same rule as ``webdataset.tariterators.base_plus_ext``, without importing webdataset,
    which imports torch.)"""
    match = _KEY_RE.match(name)
    return (match.group(1), match.group(2)) if match else (None, None)


@dataclass
class TarSample:
    """One WebDataset sample: its key and ``{extension: bytes}``."""

    key: str
    files: dict[str, bytes] = field(default_factory=dict)


@dataclass
class TarProblem:
    """A member that could not be read (``reason``: ``truncated_tar`` / ``unsafe_path``)."""

    key: str
    reason: str
    error: str


def sample_blocks(path: str, size: int, block_size: int) -> list[list[int]]:
    """``[start, end)`` byte ranges of an uncompressed shard, each starting at the header of a
    sample's first member once the previous block holds ``block_size`` bytes, the last one
    ending at ``size``: from the file alone. A shard whose headers cannot be read gives ``[]``
    (it is read whole, and the reader reports the problem)."""
    import fsspec

    starts = [0]
    last_key = None
    try:
        with fsspec.open(path, "rb") as fh, tarfile.open(fileobj=fh, mode="r:") as tar:
            for info in tar:  # headers only: member data is seeked over
                key, _ = base_plus_ext(info.name)
                if key != last_key and info.offset - starts[-1] >= block_size:
                    starts.append(info.offset)
                last_key = key
                tar.members = []
    except (tarfile.TarError, OSError, EOFError):
        return []
    return [[a, b] for a, b in zip(starts, [*starts[1:], size], strict=True)]


def iter_tar_samples(path: str, byte_range: list[int] | None = None
                     ) -> Iterator[TarSample | TarProblem]:
    """Samples of the shard at ``path`` (local or fsspec URL), grouped by key the WebDataset way;
    with ``byte_range`` (from :func:`sample_blocks`) only the samples whose headers start in it.

    A member with an absolute or ``..`` name is reported as ``unsafe_path``; a truncated
    member or header as ``truncated_tar`` (reading stops there: nothing after it can be found).
    """
    import fsspec

    current: TarSample | None = None
    last_key = ""
    start, end = byte_range or (0, None)
    with fsspec.open(path, "rb") as fh:
        try:
            fh.seek(start)
            stream = tarfile.open(fileobj=fh, mode="r|*")
        except (tarfile.TarError, OSError, EOFError) as exn:
            yield TarProblem(key="", reason="unreadable_tar", error=f"{type(exn).__name__}: {exn}")
            return
        while True:
            try:
                info = stream.next()
            except (tarfile.TarError, OSError, EOFError) as exn:
                yield TarProblem(key=last_key, reason="truncated_tar",
                                 error=f"{type(exn).__name__}: {exn} (after member {last_key!r})")
                break
            if info is None or (end is not None and start + info.offset >= end):
                break
            if not info.isreg():
                continue
            if not is_safe_member(info.name):
                yield TarProblem(key=info.name, reason="unsafe_path",
                                 error=f"tar member {info.name!r} is absolute or has '..'")
                continue
            prefix, suffix = base_plus_ext(info.name)
            if prefix is None or prefix.startswith("__"):
                continue
            last_key = prefix
            try:
                member = stream.extractfile(info)
                data = member.read() if member is not None else b""
                if len(data) != info.size:
                    raise tarfile.ReadError(f"expected {info.size} bytes, got {len(data)}")
            except (tarfile.TarError, OSError, EOFError) as exn:
                if current is not None and current.key != prefix:
                    yield current
                current = None
                yield TarProblem(key=prefix, reason="truncated_tar",
                                 error=f"{type(exn).__name__}: {exn} (member {info.name!r})")
                break
            stream.members = []
            if current is None or current.key != prefix:
                if current is not None:
                    yield current
                current = TarSample(key=prefix)
            current.files[suffix.lower()] = data
    if current is not None:
        yield current
