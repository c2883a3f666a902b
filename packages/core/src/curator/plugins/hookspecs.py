"""The hooks a Curator plugin implements, generated from the table of kinds
(:data:`curator.plugins.kinds.KINDS`).

The one hook to write is ``curator_register``; each thing's kind comes from its class (a
stage's ``kind`` class attribute, else ``stage``; executors are classes with ``execute``; pass
``kind=`` for plain objects such as filter objects)::

    from curator import hookimpl

    @hookimpl
    def curator_register(register):
        register(MyReader)                          # kind from MyReader.kind ("reader")
        register(MyScorer, kind="filter")           # a plain filter object
        register(MyOtherStage, name="other", modality="text")

A package also declares how NeMo Curator's names map to its own with
``curator_migrate_rules() -> MigrationRules`` (see :mod:`curator.plugins.migration`).

The classic per-kind hooks (``curator_register_filters(register)`` and the others in
:data:`HOOK_KINDS`) keep working: there the hook names the kind unless the class declares a
specific one. ``register(obj, name=None, *, modality=None, description=None, kind=None)``
validates ``obj`` and records which plugin (distribution and version) provided it.

A module-level function whose name starts with ``curator_`` but is no hook here (a misspelling
such as ``curator_register_filter``) makes the plugin fail to load, with an error naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

from curator.plugins.kinds import KINDS

if TYPE_CHECKING:
    from curator.plugins.migration import MigrationRules

__all__ = ["hookspec", "hookimpl", "Register", "CuratorHookSpecs", "HOOK_KINDS", "HOOK_NAMES"]

hookspec = pluggy.HookspecMarker("curator")
hookimpl = pluggy.HookimplMarker("curator")


class Register(Protocol):
    def __call__(self, obj: Any, name: str | None = None, *, modality: str | None = None,
                 description: str | None = None, kind: str | None = None) -> None: ...


class CuratorHookSpecs:
    """Hook specifications; pluggy checks plugin implementations against these signatures.
    One ``curator_register_<kind>s`` hook per kind is added below from the table of kinds."""

    @hookspec
    def curator_register(self, register: Register) -> None:
        """Register stages, components and executors; each one's kind comes from its class
        (or ``kind=``)."""

    @hookspec
    def curator_migrate_rules(self) -> MigrationRules:
        """Return the package's NeMo Curator mappings for ``curator migrate`` and NeMo's test
        shim: module prefixes, renames and names not offered with the reason
        (:class:`curator.plugins.migration.MigrationRules`)."""

    @hookspec
    def curator_register_commands(self, register: Callable[..., None]) -> None:
        """Register CLI subcommands: ``register(name, add_arguments, run, help="")`` where
        ``add_arguments(parser)`` configures an ``argparse`` parser and ``run(args) -> int``."""


def _classic_hook(hook: str, description: str) -> Callable[..., None]:
    def spec(self: Any, register: Register) -> None:  # pragma: no cover - a specification
        ...  # its docstring is set below, per kind

    spec.__name__ = hook
    spec.__qualname__ = f"CuratorHookSpecs.{hook}"  # pluggy drops ``self`` from methods
    spec.__doc__ = f"Register {description}."
    return hookspec(spec)


for _kind in KINDS:
    setattr(CuratorHookSpecs, _kind.hook, _classic_hook(_kind.hook, _kind.description))

HOOK_KINDS: dict[str, str] = {k.hook: k.name for k in KINDS}
"""Classic hook name -> the kind of registry entry it produces (generated from KINDS)."""
HOOK_NAMES: frozenset[str] = frozenset(
    {*HOOK_KINDS, "curator_register", "curator_register_commands", "curator_migrate_rules"})
"""Every hook a plugin may implement."""
