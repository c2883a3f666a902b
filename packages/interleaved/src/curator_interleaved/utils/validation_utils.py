"""Storage options and user-field selection for the interleaved readers."""

from __future__ import annotations

import json
import logging
from typing import Any

__all__ = ["resolve_storage_options", "validate_and_project_source_fields"]

log = logging.getLogger(__name__)


def resolve_storage_options(task: Any = None,
                            io_kwargs: dict[str, object] | None = None) -> dict[str, object]:
    """The fsspec storage options for a task's source files: those its reader recorded in
    ``metadata["source_storage_options"]``, else ``io_kwargs["storage_options"]``, else ``{}``."""
    recorded = task.metadata.get("source_storage_options") if task is not None else None
    if isinstance(recorded, dict) and recorded:
        return recorded
    options = (io_kwargs or {}).get("storage_options")
    return options if isinstance(options, dict) else {}


def validate_and_project_source_fields(sample: dict[str, Any], fields: tuple[str, ...] | None,
                                       excluded_fields: set[str]) -> dict[str, Any]:
    """The user fields of one source sample: all keys not in ``excluded_fields`` when
    ``fields`` is ``None``, else exactly ``fields`` (missing ones as ``None``; a reserved name
    is a ``ValueError``). Dicts and lists become JSON strings (one column type per field)."""
    if fields is None:
        selected = [k for k in sample if k not in excluded_fields]
    else:
        selected = list(fields)
        reserved = sorted(f for f in selected if f in excluded_fields)
        if reserved:
            raise ValueError(f"fields contains reserved keys: {reserved}; these columns are "
                             f"managed by the reader, drop them from fields")
        missing = sorted(f for f in selected if f not in sample)
        if missing:
            log.warning("Requested fields not found in source sample (filling with None): %s",
                        missing)
    out: dict[str, Any] = {}
    for name in selected:
        value = sample.get(name)
        out[name] = json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) \
            else value
    return out
