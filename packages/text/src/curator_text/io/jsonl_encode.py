"""Fast JSON Lines encoding of an Arrow table: rows written by one compiled pass
(``_native.jsonl_rows``: strings escaped as ``json.dumps(ensure_ascii=False)``), integers
formatted by ``_native.int64_text``, other numbers and booleans by ``pyarrow.compute``; other
column types fall back to pandas."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from curator_text import _native
from curator_text.filters._vec import np_bool, pc, text_view, to_numpy

__all__ = ["table_to_jsonl", "jsonl_chunks"]


def _values(col: pa.Array) -> tuple[pa.Array, bool] | None:
    """``col`` as strings to write, and whether they are to be quoted and escaped (strings) or
    are JSON already (numbers, booleans); ``None`` for other types."""
    t = col.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return col, True
    if pa.types.is_boolean(t):
        return pc.if_else(col, "true", "false"), False
    if pa.types.is_integer(t):
        if col.null_count or t == pa.uint64():
            return col.cast(pa.string()), False
        return _int_text(col), False
    if pa.types.is_floating(t):  # NaN and infinities have no JSON form: null, as pandas
        return pc.if_else(pc.is_finite(col), col.cast(pa.string()),
                          pa.scalar(None, pa.string())), False
    if pa.types.is_null(t):
        return pa.nulls(len(col), pa.string()), False
    return None


def _int_text(col: pa.Array) -> pa.Array:
    """An integer array without nulls (up to int64) as its decimal texts, by one compiled pass
    (``cast(pa.string())`` would import ``pyarrow.compute`` for it)."""
    values = np.ascontiguousarray(to_numpy(col), dtype=np.int64)
    out = np.empty(20 * len(values), np.uint8)
    offsets = np.empty(len(values) + 1, np.int64)
    size = _native.int64_text(values, out, offsets)
    return pa.Array.from_buffers(pa.large_string(), len(values),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(out[:size])])


_BUFFER_BYTES = 1 << 20
_local = threading.local()


def _buffer(at_least: int = 0) -> bytearray:
    """This thread's output buffer (reused: no fresh pages for every file written)."""
    buf = getattr(_local, "buffer", None)
    if buf is None or len(buf) < at_least:
        buf = _local.buffer = bytearray(max(_BUFFER_BYTES, at_least))
    return buf


def table_to_jsonl(table: pa.Table) -> bytes:
    """The table as JSON Lines (UTF-8, one object per row, ending with a newline)."""
    return b"".join(bytes(chunk) for chunk in jsonl_chunks(table))


def jsonl_chunks(table: pa.Table, rows: np.ndarray | None = None) -> Iterator[memoryview | bytes]:
    """:func:`table_to_jsonl` of ``table`` (only its ``rows``, in order, when given) in pieces
    of whole rows; each piece is valid until the next one is asked for (they share one
    buffer)."""
    n_rows = table.num_rows if rows is None else len(rows)
    if n_rows == 0:
        return
    columns = []
    for i, name in enumerate(table.column_names):
        col = table.column(i)
        values = _values(col.chunk(0) if col.num_chunks == 1 else col.combine_chunks())
        if values is None:
            df = (table if rows is None else table.take(rows)).to_pandas()
            yield df.to_json(orient="records", lines=True, force_ascii=False).encode()
            return
        arr, escape = values
        valid = np_bool(pc.is_valid(arr)).view(np.uint8) if arr.null_count else None
        if valid is not None and rows is not None:
            valid = valid[rows]
        prefix = ("{" if i == 0 else ",") + json.dumps(name, ensure_ascii=False) + ":"
        columns.append((prefix.encode(), *text_view(arr, rows).args, valid, escape))
    spec, row, buf = tuple(columns), 0, _buffer()
    while row < n_rows:
        nxt, size = _native.jsonl_rows(spec, row, buf)
        if nxt == row:  # one row larger than the buffer
            buf = _buffer(2 * len(buf))
            continue
        yield memoryview(buf)[:size]
        row = nxt
