"""Paths resolved on the driver: a stage's relative paths become absolute before it ships.

A Ray worker runs in its own working directory (on another node, in the node's), so
``JsonlWriter(path="output/")`` must mean the driver's ``./output/`` before the stage leaves the
driver. Stages name their path-like parameters in a ``path_params`` class attribute (writers
with save modes also name theirs in ``output_dir_field``); nothing is guessed from names.
"""

from __future__ import annotations

import copy
import os
import re
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["absolute_uri", "is_node_local", "path_params_of", "resolve_stage_paths",
           "warn_node_local_paths"]

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def absolute_uri(value: Any) -> Any:
    """``value`` with a relative local path made absolute against this process's working
    directory (``~`` expanded, a trailing ``/`` kept). URLs (``s3://``, ``file:///abs``),
    empty values and ``None`` are returned unchanged; lists and tuples element by element."""
    if isinstance(value, (list, tuple)):
        return type(value)(absolute_uri(v) for v in value)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value or _SCHEME.match(value):
        return value
    path = os.path.abspath(os.path.expanduser(value))
    return path + "/" if value.endswith(("/", os.sep)) and not path.endswith("/") else path


def is_node_local(value: Any) -> bool:
    """Whether ``value`` is (or holds) a path on the local filesystem (no scheme or
    ``file://``), which each node of a cluster sees as its own disk."""
    if isinstance(value, (list, tuple)):
        return any(is_node_local(v) for v in value)
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        return False
    return not _SCHEME.match(value) or value.lower().startswith("file://")


def path_params_of(stage: Any) -> tuple[str, ...]:
    """The names of ``stage``'s path-like parameters: its class's ``path_params`` plus a
    managed writer's ``output_dir_field``."""
    names = tuple(getattr(type(stage), "path_params", ()))
    field = getattr(type(stage), "output_dir_field", None)
    return names + ((field,) if field and field not in names else ())


def resolve_stage_paths(stages: Sequence[Any]) -> list[Any]:
    """Copies of ``stages`` whose relative path parameters are absolute (see
    :func:`absolute_uri`); a stage without relative paths is returned as is."""
    out = []
    for stage in stages:
        changes = {}
        for name in path_params_of(stage):
            value = getattr(stage, name, None)
            resolved = absolute_uri(value)
            if resolved != value:
                changes[name] = resolved
        if changes:
            stage = copy.copy(stage)
            stage.__dict__.update(changes)
        out.append(stage)
    return out


def warn_node_local_paths(stages: Sequence[Any], n_nodes: int) -> list[str]:
    """On a cluster of more than one node, warn about every stage parameter holding a local
    path (each node would read or write its own disk); returns the warnings."""
    if n_nodes <= 1:
        return []
    found = []
    for stage in stages:
        for name in path_params_of(stage):
            value = getattr(stage, name, None)
            if is_node_local(value):
                found.append(
                    f"{stage.name}.{name}={value!r} is a node-local path on a {n_nodes}-node "
                    f"cluster: each node reads or writes its own disk there. Use a filesystem "
                    f"every node mounts at that path, or a URL (s3://, gs://, ...)")
    for message in found:
        warnings.warn(message, UserWarning, stacklevel=3)
    return found
