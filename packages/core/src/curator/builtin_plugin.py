"""Core's own plugin: registers executors and modality-agnostic stages exactly as a third-party
plugin would."""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl


@hookimpl
def curator_register_executors(register: Register) -> None:
    from curator.executors.local import LocalExecutor

    register(LocalExecutor, name="local")


@hookimpl
def curator_register_deduplicators(register: Register) -> None:
    """Modality-agnostic deduplication (exact by content hash, semantic over embeddings)."""
