"""Schema helpers shared by the interleaved readers and writers: reserved columns get their
canonical types, user columns keep theirs."""

from __future__ import annotations

import logging

import pyarrow as pa

from curator_interleaved.tasks import INTERLEAVED_SCHEMA, RESERVED_COLUMNS

__all__ = ["align_interleaved_table", "align_table", "reconcile_schema", "resolve_schema"]

log = logging.getLogger(__name__)

# a large type already in place is kept (a downcast could overflow 2 GiB offsets)
_KEEP_LARGE = {(pa.large_string(), pa.string()), (pa.large_binary(), pa.binary())}


def _canonical(name: str) -> pa.Field | None:
    idx = INTERLEAVED_SCHEMA.get_field_index(name)
    return INTERLEAVED_SCHEMA.field(idx) if idx >= 0 else None


def reconcile_schema(inferred: pa.Schema) -> pa.Schema:
    """``inferred`` with reserved columns at their canonical types (large string / binary kept
    large) and user columns as they are (dictionary encoding unwrapped)."""
    fields = []
    for f in inferred:
        target = _canonical(f.name)
        if target is None:
            t = f.type.value_type if pa.types.is_dictionary(f.type) else f.type
            fields.append(pa.field(f.name, t, nullable=f.nullable))
            continue
        t = f.type if (f.type, target.type) in _KEEP_LARGE else target.type
        fields.append(pa.field(f.name, t, nullable=target.nullable))
    return pa.schema(fields)


def resolve_schema(schema: pa.Schema | None,
                   overrides: dict[str, pa.DataType] | None) -> pa.Schema | None:
    """The schema a reader or writer aligns to: ``schema`` when given (``overrides`` are then
    ignored with a warning), else ``INTERLEAVED_SCHEMA`` with ``overrides`` added or replaced,
    else ``None`` (reconcile only)."""
    if schema is not None:
        if overrides:
            log.warning("schema_overrides ignored because schema= is already set; use one or "
                        "the other, not both")
        return schema
    if not overrides:
        return None
    fields = {f.name: f for f in INTERLEAVED_SCHEMA}
    for name, dtype in overrides.items():
        orig = fields.get(name)
        fields[name] = pa.field(name, dtype, nullable=orig.nullable if orig else True,
                                metadata=orig.metadata if orig else None)
    return pa.schema(list(fields.values()))


def align_table(table: pa.Table, target: pa.Schema) -> pa.Table:
    """``table`` with exactly ``target``'s columns, in its order and types: missing columns are
    nulls, extra ones dropped. Reserved columns may be cast large -> small; user columns are
    cast safely (an overflow is an error, never silent corruption)."""
    have = set(table.column_names)
    arrays = []
    for f in target:
        if f.name not in have:
            arrays.append(pa.nulls(table.num_rows, type=f.type))
            continue
        col = table.column(f.name)
        if col.type != f.type:
            safe = True
            if f.name in RESERVED_COLUMNS:
                safe = not ((pa.types.is_large_string(col.type) and pa.types.is_string(f.type))
                            or (pa.types.is_large_binary(col.type) and pa.types.is_binary(f.type)))
            col = col.cast(f.type, safe=safe)
        arrays.append(col)
    return pa.Table.from_arrays(arrays, schema=target)


def align_interleaved_table(table: pa.Table, schema: pa.Schema | None = None) -> pa.Table:
    """:func:`align_table` to ``schema`` when given, else :func:`reconcile_schema`."""
    if schema is not None:
        return align_table(table, schema)
    target = reconcile_schema(table.schema)
    return table if target.equals(table.schema) else table.cast(target)
