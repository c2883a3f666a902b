"""The hooks a Curator plugin implements.

Each hook receives a ``register`` callable; call it once per thing the plugin provides::

    from curator import hookimpl

    @hookimpl
    def curator_register_filters(register):
        register(MyFilter)                       # name defaults to the class name
        register(MyOtherFilter, name="other", modality="text")

``register(obj, name=None, *, modality=None, description=None)`` validates ``obj`` and records
which plugin (distribution and version) provided it. Names are unique across all plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import pluggy

__all__ = ["hookspec", "hookimpl", "Register", "CuratorHookSpecs", "HOOK_KINDS"]

hookspec = pluggy.HookspecMarker("curator")
hookimpl = pluggy.HookimplMarker("curator")


class Register(Protocol):
    def __call__(self, obj: Any, name: str | None = None, *, modality: str | None = None,
                 description: str | None = None) -> None: ...


class CuratorHookSpecs:
    """Hook specifications; pluggy checks plugin implementations against these signatures."""

    @hookspec
    def curator_register_readers(self, register: Register) -> None:
        """Register reader stages (sources that turn files into tasks)."""

    @hookspec
    def curator_register_writers(self, register: Register) -> None:
        """Register writer stages (sinks that write tasks to files)."""

    @hookspec
    def curator_register_filters(self, register: Register) -> None:
        """Register filter stages and filter objects (e.g. ``DocumentFilter`` subclasses)."""

    @hookspec
    def curator_register_modifiers(self, register: Register) -> None:
        """Register modifier stages and modifier objects (e.g. ``DocumentModifier``)."""

    @hookspec
    def curator_register_classifiers(self, register: Register) -> None:
        """Register classifier stages (models that label or score records)."""

    @hookspec
    def curator_register_embedders(self, register: Register) -> None:
        """Register embedding stages."""

    @hookspec
    def curator_register_deduplicators(self, register: Register) -> None:
        """Register deduplication stages and workflows."""

    @hookspec
    def curator_register_executors(self, register: Register) -> None:
        """Register executors (classes with ``execute(stages, ...)``)."""

    @hookspec
    def curator_register_stages(self, register: Register) -> None:
        """Register any other stage (splitters, id assignment, transforms)."""

    @hookspec
    def curator_register_commands(self, register: Callable[..., None]) -> None:
        """Register CLI subcommands: ``register(name, add_arguments, run, help="")`` where
        ``add_arguments(parser)`` configures an ``argparse`` parser and ``run(args) -> int``."""


HOOK_KINDS: dict[str, str] = {
    "curator_register_readers": "reader",
    "curator_register_writers": "writer",
    "curator_register_filters": "filter",
    "curator_register_modifiers": "modifier",
    "curator_register_classifiers": "classifier",
    "curator_register_embedders": "embedder",
    "curator_register_deduplicators": "deduplicator",
    "curator_register_executors": "executor",
    "curator_register_stages": "stage",
}
"""Hook name -> the kind of registry entry it produces."""
