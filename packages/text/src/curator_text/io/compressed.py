"""Compressed JSONL read in blocks: a compressed stream has no random access, so a block is a
line-aligned range ``[start, end)`` of the *decompressed* bytes, and a reader gets there by
decompressing forward. Blocks of one file read one after another in a process continue one open
stream (each byte decompressed once); a block that arrives out of order (another worker read
the one before) opens the file again and decompresses up to its start, discarding it. Memory is
a block, the line crossing its end and the decompressor's buffers, whatever the file size."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from typing import IO

__all__ = ["STREAM_CODECS", "stream_codec", "open_decompressed", "decompressed_size",
           "read_decompressed_range", "iter_blocks"]

#: file endings read as decompressed streams in blocks, and their codec
STREAM_CODECS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd", ".lz4": "lz4",
                 ".xz": "xz"}
_CHUNK = 1 << 20
_lock = threading.Lock()
_path_locks: dict[str, threading.Lock] = {}
#: per file: an open stream at a line start ``pos`` that is the first line start at or after
#: ``next_start`` (where the block read last ended), kept for the block after it
_streams: dict[str, tuple[int, int, IO[bytes]]] = {}
_MAX_STREAMS = 8


def stream_codec(path: str) -> str | None:
    """The codec of ``path`` when it can be read as a decompressed stream in blocks, else
    ``None`` (uncompressed, or a format without a streaming decoder here: .zip, .snappy)."""
    low = path.lower()
    return next((c for ext, c in STREAM_CODECS.items() if low.endswith(ext)), None)


def open_decompressed(path: str) -> IO[bytes]:
    """``path`` (local or fsspec URL) as a buffered stream of its decompressed bytes."""
    from curator.io import get_fs

    codec = stream_codec(path)
    if codec is None:
        raise ValueError(f"{path}: not a compressed stream this reader decodes in blocks")
    fs, p = get_fs(path)
    fh = fs.open(p, "rb")
    if codec == "xz":
        import lzma

        return io.BufferedReader(lzma.LZMAFile(fh), _CHUNK)
    import pyarrow as pa

    raw = pa.CompressedInputStream(pa.PythonFile(fh, mode="r"), codec)
    return io.BufferedReader(raw, _CHUNK)


def decompressed_size(path: str) -> int:
    """The bytes ``path`` decompresses to, by decompressing it once in chunks (bounded memory).
    A stream of ``path`` kept from before is dropped: the file may have been rewritten."""
    with _lock:
        kept = _streams.pop(path, None)
    if kept is not None:
        kept[2].close()
    total = 0
    with open_decompressed(path) as fh:
        while chunk := fh.read(_CHUNK):
            total += len(chunk)
    return total


def _skip(fh: IO[bytes], n: int) -> int:
    """Discard ``n`` bytes of ``fh`` in chunks; returns how many there were."""
    done = 0
    while done < n:
        got = len(fh.read(min(_CHUNK, n - done)))
        if not got:
            break
        done += got
    return done


def _take(path: str, start: int) -> tuple[int, IO[bytes]]:
    """A stream of ``path`` at the first line start at or after ``start``, and that position:
    the kept one when it has not passed ``start``, else a new one."""
    with _lock:
        kept = _streams.get(path)
        if kept is not None and kept[0] <= start:
            del _streams[path]
            _, pos, fh = kept
        else:
            kept = None
    if kept is None:
        fh, pos = open_decompressed(path), 0
        if start > 0:  # the line holding byte start - 1 belongs to the block before
            pos = _skip(fh, start - 1)
            pos += len(fh.readline()) if pos == start - 1 else 0
        return pos, fh
    if pos < start:  # kept from an earlier block than the one before this one
        pos += _skip(fh, start - 1 - pos)
        pos += len(fh.readline()) if pos == start - 1 else 0
    return pos, fh


def _keep(path: str, next_start: int, pos: int, fh: IO[bytes]) -> None:
    with _lock:
        old = _streams.pop(path, None)
        if old is not None and old[0] > next_start:  # the other one is further on: keep it
            old, (next_start, pos, fh) = (next_start, pos, fh), old
        if old is not None:
            old[2].close()
        _streams[path] = (next_start, pos, fh)
        while len(_streams) > _MAX_STREAMS:  # the oldest
            _streams.pop(next(iter(_streams)))[2].close()


def read_decompressed_range(path: str, start: int, end: int) -> tuple[bytearray, int]:
    """The decompressed lines of ``path`` that start in ``[start, end)`` (a line crossing
    ``end`` read to its end) and the decompressed offset of the first of them."""
    with _lock:
        path_lock = _path_locks.setdefault(path, threading.Lock())
    with path_lock:  # one file's blocks one at a time: the next continues the same stream
        pos, fh = _take(path, start)
        data = bytearray(max(0, end - 1 - pos))  # one allocation for the block
        data[fh.readinto(data) if data else 0:] = b""
        if pos < end:
            data += fh.readline()  # the line crossing ``end``, to its end
        if fh.peek(1):
            _keep(path, end, pos + len(data), fh)
        else:  # the end of the file: nothing more to continue
            fh.close()
    return data, pos


def iter_blocks(path: str, block_size: int) -> Iterator[tuple[int, int]]:
    """The ``[start, end)`` decompressed ranges of the blocks of ``path``: ``block_size`` each,
    the last one to the end (a function of the file alone)."""
    size = decompressed_size(path)
    for start in range(0, size, block_size):
        yield start, min(start + block_size, size)
