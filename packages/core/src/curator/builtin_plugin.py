"""Core's own plugin: registers the executors exactly as a third-party plugin would."""

from __future__ import annotations

from curator.executors.local import LocalExecutor
from curator.plugins.hookspecs import Register, hookimpl


@hookimpl
def curator_register_executors(register: Register) -> None:
    register(LocalExecutor, name="local")
