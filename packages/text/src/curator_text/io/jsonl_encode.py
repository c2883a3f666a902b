"""Fast JSON Lines encoding of an Arrow table: strings escaped by one compiled pass, numbers,
booleans and nulls with ``pyarrow.compute``; other column types fall back to pandas."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["table_to_jsonl", "jsonl_view"]


def _json_string(col: pa.Array) -> pa.Array:
    """Every string of ``col`` as a JSON string literal (one compiled pass; nulls stay null)."""
    from curator_text import _bytes
    from curator_text.filters._vec import text_bytes

    data, offsets = _bytes.json_strings(*text_bytes(col))
    large = offsets[-1] >= 2**31
    out = pa.Array.from_buffers(pa.large_string() if large else pa.string(), len(col), [
        None, pa.py_buffer(offsets if large else offsets.astype(np.int32)), pa.py_buffer(data)])
    if col.null_count:
        out = pc.if_else(pc.is_valid(col), out, pa.scalar(None, out.type))
    return out


def _encode(col: pa.Array) -> pa.Array | None:
    t = col.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        out = _json_string(col)
    elif pa.types.is_boolean(t):
        out = pc.if_else(col, "true", "false")
    elif pa.types.is_integer(t):
        out = col.cast(pa.string())
    elif pa.types.is_floating(t):
        finite = pc.is_finite(col)
        out = pc.if_else(finite, col.cast(pa.string()), pa.scalar(None, pa.string()))
    elif pa.types.is_null(t):
        out = pa.nulls(len(col), pa.string())
    else:
        return None
    return pc.fill_null(out, "null")


def table_to_jsonl(table: pa.Table) -> bytes:
    """The table as JSON Lines (UTF-8, one object per row, ending with a newline)."""
    return bytes(jsonl_view(table))


def jsonl_view(table: pa.Table) -> memoryview | bytes:
    """:func:`table_to_jsonl` without the final copy: a view of the encoded Arrow buffer."""
    if table.num_rows == 0:
        return b""
    parts: list[pa.Array | str] = []
    for i, name in enumerate(table.column_names):
        col = table.column(i)
        encoded = _encode(col.chunk(0) if col.num_chunks == 1 else col.combine_chunks())
        if encoded is None:
            df = table.to_pandas()
            return df.to_json(orient="records", lines=True, force_ascii=False).encode()
        key = _json_string(pa.array([name]))[0].as_py()
        parts += [("{" if i == 0 else ",") + key + ":", encoded]
    parts.append("}\n")
    kind = pa.large_string() if any(pa.types.is_large_string(p.type) for p in parts
                                     if isinstance(p, pa.Array)) else pa.string()
    parts = [pa.scalar(p, kind) if isinstance(p, str) else p.cast(kind) for p in parts]
    lines = pc.binary_join_element_wise(*parts, "")
    # the rows are contiguous in the string data buffer: its slice is the whole file
    off_type = np.int64 if pa.types.is_large_string(lines.type) else np.int32
    off = np.frombuffer(lines.buffers()[1], dtype=off_type)[
        lines.offset:lines.offset + len(lines) + 1]
    return memoryview(lines.buffers()[2])[int(off[0]):int(off[-1])]
