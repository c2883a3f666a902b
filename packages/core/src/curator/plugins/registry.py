"""The registry of everything plugins provide, with provenance and validation."""

from __future__ import annotations

import difflib
import inspect
from dataclasses import dataclass, field
from typing import Any

from curator.errors import PluginConflictError, PluginError, UnknownNameError

__all__ = ["RegistryEntry", "Registry", "BrokenPlugin", "PluginInfo"]


@dataclass(frozen=True)
class PluginInfo:
    """A loaded plugin: its entry-point name and the distribution that provides it."""

    name: str
    distribution: str
    version: str
    module: str = ""

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
        from curator.stages.base import ProcessingStage

        return inspect.isclass(self.obj) and issubclass(self.obj, ProcessingStage)

    @property
    def qualname(self) -> str:
        obj = self.obj
        return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


@dataclass
class Registry:
    """Name -> :class:`RegistryEntry` for every kind, plus the plugins loaded and broken."""

    entries: dict[str, RegistryEntry] = field(default_factory=dict)
    plugins: list[PluginInfo] = field(default_factory=list)
    broken: list[BrokenPlugin] = field(default_factory=list)
    commands: dict[str, tuple[Any, Any, str, PluginInfo]] = field(default_factory=dict)

    def add(self, obj: Any, kind: str, plugin: PluginInfo, name: str | None = None,
            modality: str | None = None, description: str | None = None) -> RegistryEntry:
        """Validate and add ``obj``; raises :class:`PluginError` / :class:`PluginConflictError`."""
        _validate(obj, kind, plugin)
        name = name or getattr(obj, "__name__", None)
        if not isinstance(name, str) or not name.isidentifier():
            raise PluginError(f"{plugin.label} registered {obj!r} as a {kind} with invalid name "
                              f"{name!r}: names must be Python identifiers")
        if name in self.entries:
            other = self.entries[name]
            if other.obj is obj and other.plugin == plugin:
                return other
            raise PluginConflictError(
                f"{kind} name {name!r} is registered twice: by {other.plugin.label} "
                f"({other.qualname}) and by {plugin.label} ({_qualname(obj)}). Rename one, or "
                f"disable a plugin with CURATOR_DISABLE_PLUGINS={plugin.name}")
        if modality is None:
            modality = getattr(obj, "modality", None) or "any"
        if description is None:
            doc = inspect.getdoc(obj) or ""
            description = doc.strip().split("\n\n")[0].replace("\n", " ")
        entry = RegistryEntry(name=name, kind=kind, obj=obj, plugin=plugin,
                              modality=str(modality), description=description)
        self.entries[name] = entry
        return entry

    def get(self, name: str, kind: str | None = None) -> RegistryEntry:
        """The entry called ``name``; raises :class:`UnknownNameError` with close matches."""
        entry = self.entries.get(name)
        if entry is not None and (kind is None or entry.kind == kind):
            return entry
        pool = [n for n, e in self.entries.items() if kind is None or e.kind == kind]
        close = difflib.get_close_matches(name, pool, n=3, cutoff=0.6)
        if not close:
            close = [n for n in pool if n.lower() == name.lower()]
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        what = f"{kind} " if kind else ""
        msg = f"no {what}named {name!r} is registered.{hint}"
        if entry is not None:
            article = "an" if kind[0] in "aeiou" else "a"
            msg = f"{name!r} is a {entry.kind}, not {article} {kind}."
        broken = [b for b in self.broken]
        if broken and entry is None:
            msg += " Plugins that failed to load: " + "; ".join(
                f"{b.name} ({b.distribution}): {b.error.splitlines()[-1] if b.error else ''}"
                for b in broken)
        msg += " Run `curator stages` to list what is installed."
        raise UnknownNameError(msg)

    def list(self, kind: str | None = None, modality: str | None = None) -> list[RegistryEntry]:
        """Entries filtered by kind and modality, sorted by name."""
        return sorted((e for e in self.entries.values()
                       if (kind is None or e.kind == kind)
                       and (modality is None or e.modality in (modality, "any"))),
                      key=lambda e: (e.kind, e.name))

    def __contains__(self, name: str) -> bool:
        return name in self.entries


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def _validate(obj: Any, kind: str, plugin: PluginInfo) -> None:
    from curator.stages.base import ProcessingStage

    where = f"{plugin.label} registered {_qualname(obj)} as a {kind}"
    if kind == "executor":
        if not (inspect.isclass(obj) and callable(getattr(obj, "execute", None))):
            raise PluginError(f"{where}, but executors must be classes with an "
                              f"execute(stages, ...) method")
        return
    if not inspect.isclass(obj):
        raise PluginError(f"{where}, but only classes can be registered (got "
                          f"{type(obj).__name__}); register the class, not an instance")
    if kind in ("reader", "writer", "classifier", "embedder", "stage") and not issubclass(
            obj, ProcessingStage):
        raise PluginError(f"{where}, but {kind}s must subclass curator.ProcessingStage")
    if issubclass(obj, ProcessingStage) and inspect.isabstract(obj):
        missing = ", ".join(sorted(obj.__abstractmethods__))
        raise PluginError(f"{where}, but it is abstract (implement: {missing})")
