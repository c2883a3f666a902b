"""Fast JSON Lines encoding of an Arrow table with ``pyarrow.compute`` (strings, numbers,
booleans, nulls); other column types fall back to pandas."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["table_to_jsonl"]

_ESCAPES = [("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"),
            ("\b", "\\b"), ("\f", "\\f")]
_OTHER_CONTROL = r"[\x00-\x07\x0b\x0e-\x1f]"


def _json_string(col: pa.Array) -> pa.Array:
    for old, new in _ESCAPES:
        col = pc.replace_substring(col, old, new)
    if pc.any(pc.match_substring_regex(col, _OTHER_CONTROL)).as_py():
        for code in [*range(0, 8), 11, *range(14, 32)]:
            col = pc.replace_substring(col, chr(code), f"\\u{code:04x}")
    return pc.binary_join_element_wise('"', col, '"', "")


def _encode(col: pa.Array) -> pa.Array | None:
    t = col.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        out = _json_string(col.cast(pa.string()))
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
    if table.num_rows == 0:
        return b""
    parts: list[pa.Array] = []
    for i, name in enumerate(table.column_names):
        encoded = _encode(table.column(i).combine_chunks())
        if encoded is None:
            df = table.to_pandas()
            return df.to_json(orient="records", lines=True, force_ascii=False).encode()
        key = _json_string(pa.array([name]))[0].as_py()
        parts += [pa.scalar(("{" if i == 0 else ",") + key + ":"), encoded]
    parts.append(pa.scalar("}\n"))
    lines = pc.binary_join_element_wise(*parts, "")
    # the rows are contiguous in the string data buffer: its slice is the whole file
    off_type = np.int64 if pa.types.is_large_string(lines.type) else np.int32
    off = np.frombuffer(lines.buffers()[1], dtype=off_type)[
        lines.offset:lines.offset + len(lines) + 1]
    return memoryview(lines.buffers()[2])[int(off[0]):int(off[-1])].tobytes()
