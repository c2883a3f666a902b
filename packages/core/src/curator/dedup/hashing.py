"""Fast content hashing of an Arrow column (MD5 over each value's bytes, no Python strings)."""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["hash_column"]


def _as_binary(col: pa.Array) -> pa.Array:
    if pa.types.is_large_string(col.type) or pa.types.is_large_binary(col.type):
        return col.cast(pa.large_binary())
    if pa.types.is_string(col.type) or pa.types.is_binary(col.type):
        return col.cast(pa.binary())
    try:
        return pc.cast(col, pa.string()).cast(pa.binary())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.array([None if v is None else repr(v).encode() for v in col.to_pylist()],
                        pa.binary())


def hash_column(column: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """128-bit MD5 of every value of ``column`` as ``(hashes, valid)``.

    ``hashes`` is an ``(N, 2)`` uint64 array; ``valid`` is False for nulls (never grouped).
    Strings and binaries are hashed from their Arrow buffers directly; other types by their
    string form.
    """
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    digests: list[bytes] = []
    valid: list[np.ndarray] = []
    md5 = hashlib.md5
    for chunk in chunks:
        arr = _as_binary(chunk)
        n = len(arr)
        if n == 0:
            continue
        offs_dtype = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
        bufs = arr.buffers()
        offsets = np.frombuffer(bufs[1], dtype=offs_dtype)[arr.offset:arr.offset + n + 1]
        data = memoryview(bufs[2]) if bufs[2] is not None else memoryview(b"")
        bounds = offsets.tolist()
        digests.extend(md5(data[bounds[i]:bounds[i + 1]]).digest() for i in range(n))
        valid.append(np.asarray(arr.is_valid()))
    if not digests:
        return np.empty((0, 2), dtype=np.uint64), np.empty(0, dtype=bool)
    hashes = np.frombuffer(b"".join(digests), dtype=np.uint64).reshape(-1, 2).copy()
    return hashes, np.concatenate(valid).astype(bool)
