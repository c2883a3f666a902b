"""Safe names for tar members: nothing is ever written outside an output directory."""

from __future__ import annotations

import posixpath

__all__ = ["is_safe_member", "safe_member_name"]


def is_safe_member(name: str) -> bool:
    """Whether a tar member name is relative and stays inside its directory (no ``..``)."""
    if not name or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return False
    parts = name.replace("\\", "/").split("/")
    return ".." not in parts


def safe_member_name(name: str) -> str:
    """``name`` made relative and free of ``..``/``.`` parts (``/a/../b`` -> ``a_b`` style)."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    flat = "_".join(parts).replace(":", "_")
    return posixpath.normpath(flat) if flat else "_"
