"""The curator-audio plugin: registers its stages through Curator's hooks."""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl  # noqa: F401
