"""The registry of everything plugins provide, with provenance and validation."""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, field
from typing import Any

from curator.errors import AmbiguousNameError, PluginConflictError, PluginError, UnknownNameError
from curator.params import typed_init
from curator.plugins.kinds import KIND_NAMES, KINDS, is_stage_class
from curator.plugins.providers import provider_of

__all__ = ["RegistryEntry", "Registry", "BrokenPlugin", "PluginInfo"]


@dataclass(frozen=True)
class PluginInfo:
    """A loaded plugin: its entry-point name and the distribution that provides it."""

    name: str
    distribution: str
    version: str
    module: str = ""
    builtin: bool = False
    """Shipped with Curator (core and the modality packages): wins name clashes."""

    @property
    def label(self) -> str:
        return f"{self.distribution} {self.version} (plugin {self.name!r})"


@dataclass(frozen=True)
class BrokenPlugin:
    """A plugin that failed to import or to register; the others still load."""

    name: str
    distribution: str
    version: str
    error: str


@dataclass(frozen=True)
class RegistryEntry:
    """One registered component."""

    name: str
    kind: str
    obj: Any
    plugin: PluginInfo
    modality: str = "any"
    description: str = ""

    @property
    def is_stage(self) -> bool:
        return is_stage_class(self.obj)

    @property
    def qualname(self) -> str:
        return _qualname(self.obj)

    @property
    def qualified_name(self) -> str:
        """``plugin:Name``: picks this provider when several plugins registered ``name``."""
        return f"{self.plugin.name}:{self.name}"


@dataclass
class Registry:
    """Name -> :class:`RegistryEntry` for every kind, plus the plugins loaded and broken.

    ``entries`` maps each plain name to the entry it resolves to; ``qualified`` holds every
    registration under ``plugin:Name``. When two plugins register one name (different
    objects), the clash is kept in ``clashes``: a built-in plugin's entry keeps the plain name;
    between third-party plugins the plain name is refused and :meth:`get` names the providers.
    Everything else of both plugins stays usable."""

    entries: dict[str, RegistryEntry] = field(default_factory=dict)
    plugins: list[PluginInfo] = field(default_factory=list)
    broken: list[BrokenPlugin] = field(default_factory=list)
    commands: dict[str, tuple[Any, Any, str, PluginInfo]] = field(default_factory=dict)
    qualified: dict[str, RegistryEntry] = field(default_factory=dict)
    clashes: dict[str, list[RegistryEntry]] = field(default_factory=dict)
    migrations: list[tuple[PluginInfo, Any]] = field(default_factory=list)
    """``(plugin, MigrationRules)`` from each plugin's ``curator_migrate_rules`` hook."""

    def copy(self) -> Registry:
        """A copy whose tables can change without touching this registry."""
        return Registry(entries=dict(self.entries), plugins=list(self.plugins),
                        broken=list(self.broken), commands=dict(self.commands),
                        qualified=dict(self.qualified),
                        clashes={k: list(v) for k, v in self.clashes.items()},
                        migrations=list(self.migrations))

    def add(self, obj: Any, kind: str, plugin: PluginInfo, name: str | None = None,
            modality: str | None = None, description: str | None = None) -> RegistryEntry:
        """Validate and add ``obj``; raises :class:`PluginError` when it is invalid or when
        ``plugin`` registers one name twice. A clash with another plugin is recorded, not
        raised (see the class docstring)."""
        if kind not in KIND_NAMES:
            raise PluginError(f"{plugin.label} registered {_qualname(obj)} with unknown kind "
                              f"{kind!r}; kinds: {', '.join(KIND_NAMES)}")
        _validate(obj, kind, plugin)
        if kind != "task" and inspect.isclass(obj):
            typed_init(obj)  # its constructor converts and checks types as specs do
        name = name or getattr(obj, "__name__", None)
        if not isinstance(name, str) or not name.isidentifier():
            raise PluginError(f"{plugin.label} registered {obj!r} as a {kind} with invalid name "
                              f"{name!r}: names must be Python identifiers")
        key = f"{plugin.name}:{name}"
        if key in self.qualified:
            other = self.qualified[key]
            if other.obj is obj:
                return other
            raise PluginConflictError(
                f"{plugin.label} registered {kind} name {name!r} twice ({other.qualname} and "
                f"{_qualname(obj)}); give one of them another name")
        if modality is None:
            modality = getattr(obj, "modality", None) or "any"
        if description is None:
            doc = inspect.getdoc(obj) or ""
            description = doc.strip().split("\n\n")[0].replace("\n", " ")
        entry = RegistryEntry(name=name, kind=kind, obj=obj, plugin=plugin,
                              modality=str(modality), description=description)
        self.qualified[key] = entry
        current = self.entries.get(name)
        if current is not None and current.obj is obj:
            return current  # the same class re-exported by a second plugin: no clash
        if current is None and name not in self.clashes:
            self.entries[name] = entry
            return entry
        providers = self.clashes.setdefault(name, [current] if current else [])
        providers.append(entry)
        builtins = {id(e.obj): e for e in providers if e.plugin.builtin}
        if len(builtins) == 1:
            self.entries[name] = next(iter(builtins.values()))
        else:
            self.entries.pop(name, None)
        return entry

    def get(self, name: str, kind: str | None = None) -> RegistryEntry:
        """The entry called ``name`` (or ``plugin:Name``); raises :class:`UnknownNameError` with
        close matches, or :class:`AmbiguousNameError` naming every provider of a clashed
        name."""
        entry = self.qualified.get(name) if ":" in name else self.entries.get(name)
        if entry is not None and (kind is None or entry.kind == kind):
            return entry
        if entry is None and name in self.clashes:
            providers = self.clashes[name]
            raise AmbiguousNameError(
                f"{name!r} is registered by several plugins: "
                + "; ".join(f"{e.plugin.label} ({e.qualname})" for e in providers)
                + ". Choose one with its qualified name: "
                + " or ".join(repr(e.qualified_name) for e in providers)
                + " (in Python and in YAML), or disable a plugin with CURATOR_DISABLE_PLUGINS.")
        pool = [n for n, e in self.entries.items() if kind is None or e.kind == kind]
        close = difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
        if not close:
            close = [n for n in pool if n.lower() == name.lower()]
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        what = f"{kind} " if kind else "stage or component "
        msg = f"no {what}named {name!r} is registered.{hint}"
        dist = provider_of(name)
        if entry is None and dist and not any(p.distribution == dist for p in self.plugins):
            msg = f"{name!r} is provided by the package {dist}, " + (
                "whose plugin is not loaded (disabled, or broken: see `curator plugins`)."
                if _installed(dist) else
                f"which is not installed: pip install {dist} (in this repository: uv sync).")
        if entry is not None:
            article = "an" if kind[0] in "aeiou" else "a"
            msg = f"{name!r} is a {entry.kind}, not {article} {kind}."
        if self.broken and entry is None:
            msg += " Plugins that failed to load: " + "; ".join(
                f"{b.name} ({b.distribution}): {b.error.splitlines()[-1] if b.error else ''}"
                for b in self.broken)
        msg += " Run `curator stages` to list what is installed."
        raise UnknownNameError(msg)

    def list(self, kind: str | None = None, modality: str | None = None) -> list[RegistryEntry]:
        """Entries filtered by kind and modality, sorted by kind and name. A clashed name is
        listed once per provider under its qualified name."""
        shown = list(self.entries.values()) + [
            e for providers in self.clashes.values() for e in providers
            if self.entries.get(e.name) is not e]
        return sorted((e for e in shown
                       if (kind is None or e.kind == kind)
                       and (modality is None or e.modality in (modality, "any"))),
                      key=lambda e: (e.kind, e.name, e.plugin.name))

    def clash_notes(self) -> list[str]:
        """One line per clashed name: who provides it and how it resolves."""
        notes = []
        for name, providers in sorted(self.clashes.items()):
            winner = self.entries.get(name)
            who = ", ".join(e.plugin.label for e in providers)
            if winner is not None:
                notes.append(f"{name!r} is registered by {who}; the built-in "
                             f"{winner.plugin.name!r} keeps the name, the others are reachable "
                             f"as " + ", ".join(e.qualified_name for e in providers
                                                if e is not winner))
            else:
                notes.append(f"{name!r} is registered by {who}; the plain name is refused, use "
                             + " or ".join(e.qualified_name for e in providers))
        return notes

    def __contains__(self, name: str) -> bool:
        return name in self.entries or name in self.qualified


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


_STAGE_ONLY = {k.name: k.stage_only for k in KINDS}


def _installed(distribution: str) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        version(distribution)
    except PackageNotFoundError:
        return False
    return True


def _validate(obj: Any, kind: str, plugin: PluginInfo) -> None:
    where = f"{plugin.label} registered {_qualname(obj)} as a {kind}"
    if kind == "executor":
        if not (inspect.isclass(obj) and callable(getattr(obj, "execute", None))):
            raise PluginError(f"{where}, but executors must be classes with an "
                              f"execute(stages, ...) method")
        return
    if kind == "task":
        from curator.tasks import Task

        if not (inspect.isclass(obj) and issubclass(obj, Task)):
            raise PluginError(f"{where}, but tasks must be classes subclassing curator.Task")
        return
    if not inspect.isclass(obj):
        raise PluginError(f"{where}, but only classes can be registered (got "
                          f"{type(obj).__name__}); register the class, not an instance")
    if _STAGE_ONLY.get(kind) and not is_stage_class(obj):
        raise PluginError(f"{where}, but {kind}s must subclass curator.ProcessingStage")
    if is_stage_class(obj) and inspect.isabstract(obj):
        missing = ", ".join(sorted(obj.__abstractmethods__))
        raise PluginError(f"{where}, but it is abstract (implement: {missing})")
