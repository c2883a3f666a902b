"""Which plugins a process loads: ``CURATOR_LOAD_PLUGINS`` / ``CURATOR_DISABLE_PLUGINS`` (comma
separated entry-point or distribution names). No import of the plugin machinery, so a run on a
built-in executor can ask without loading it."""

from __future__ import annotations

import os

__all__ = ["selected", "core_selected"]


def _env_list(name: str) -> set[str] | None:
    raw = os.environ.get(name)
    if raw is None:
        return None
    return {part.strip() for part in raw.split(",") if part.strip()}


def selected(ep_name: str, dist: str) -> bool:
    """Whether the plugin of entry point ``ep_name`` from distribution ``dist`` is loaded (core's
    own is loaded whatever ``CURATOR_LOAD_PLUGINS`` lists)."""
    load = _env_list("CURATOR_LOAD_PLUGINS")
    disable = _env_list("CURATOR_DISABLE_PLUGINS") or set()
    if ep_name in disable or dist in disable:
        return False
    if load is not None and ep_name not in load and dist not in load and ep_name != "core":
        return False
    return True


def core_selected() -> bool:
    """Whether core's own plugin is loaded (``CURATOR_DISABLE_PLUGINS`` may switch it off)."""
    return selected("core", "curator-core")
