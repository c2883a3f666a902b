"""Plugin discovery: entry points in the group ``curator``, loaded through pluggy."""

from __future__ import annotations

import difflib
import importlib.metadata as md
import inspect
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pluggy

from curator.errors import PluginError
from curator.plugins.hookspecs import HOOK_KINDS, HOOK_NAMES, CuratorHookSpecs
from curator.plugins.kinds import kind_of
from curator.plugins.registry import BrokenPlugin, PluginInfo, Registry
from curator.plugins.selection import selected

__all__ = ["ENTRY_POINT_GROUP", "BUILTIN_DISTRIBUTIONS", "get_registry", "reset_registry",
           "build_registry", "use_registry", "register_plugin"]

ENTRY_POINT_GROUP = "curator"
BUILTIN_DISTRIBUTIONS = frozenset({"curator-core", "curator-text", "curator-image",
                                   "curator-audio", "curator-video", "curator-web", "curator-llm",
                                   "curator-interleaved"})
"""Distributions shipped with Curator: their plugins win name clashes with third parties."""
_lock = threading.RLock()
_registry: Registry | None = None


def register_plugin(registry: Registry, plugin: Any, info: PluginInfo) -> None:
    """Run ``plugin``'s hooks against ``registry``. If any registration fails, or the plugin
    implements a hook that does not exist (a misspelling), nothing of the plugin is kept and
    it is recorded as broken (other plugins are unaffected)."""
    pm = pluggy.PluginManager("curator")
    pm.add_hookspecs(CuratorHookSpecs)
    staged = registry.copy()
    try:
        _check_hook_names(plugin, info)
        pm.register(plugin, name=info.name)
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"plugin {info.name!r} ({info.distribution}): {exc}; the hooks "
                              f"are: {', '.join(sorted(HOOK_NAMES))}") from None

        def registrar(hook_kind: str | None) -> Any:
            def register(obj: Any, name: str | None = None, *, modality: str | None = None,
                         description: str | None = None, kind: str | None = None) -> None:
                resolved = kind_of(obj, kind or hook_kind)
                if resolved is None:
                    raise PluginError(f"{info.label} registered {obj!r} without a kind: pass "
                                      f"kind='filter' (or another kind) to register()")
                staged.add(obj, resolved, info, name=name, modality=modality,
                           description=description)
            return register

        pm.hook.curator_register(register=registrar(None))
        for hook_name, kind in HOOK_KINDS.items():
            getattr(pm.hook, hook_name)(register=registrar(kind))

        def register_command(name: str, add_arguments: Any, run: Any, help: str = "") -> None:
            if name in staged.commands:
                raise PluginError(f"command {name!r} registered by {staged.commands[name][3].label}"
                                  f" and by {info.label}")
            staged.commands[name] = (add_arguments, run, help, info)

        pm.hook.curator_register_commands(register=register_command)
        staged.migrations += [(info, rules) for rules in _migration_rules(pm, info)]
    except Exception as exc:
        registry.broken.append(BrokenPlugin(info.name, info.distribution, info.version,
                                            _format_error(exc)))
        return
    registry.entries, registry.qualified = staged.entries, staged.qualified
    registry.clashes, registry.commands = staged.clashes, staged.commands
    registry.migrations = staged.migrations
    registry.plugins.append(info)


def _migration_rules(pm: pluggy.PluginManager, info: PluginInfo) -> list[Any]:
    from curator.plugins.migration import MigrationRules

    out = []
    for rules in pm.hook.curator_migrate_rules():
        if not isinstance(rules, MigrationRules):
            raise PluginError(f"{info.label}: curator_migrate_rules returned {rules!r}; return a "
                              f"curator.plugins.migration.MigrationRules")
        out.append(rules)
    return out


def _check_hook_names(plugin: Any, info: PluginInfo) -> None:
    """A ``curator_*`` function that is no hook (e.g. ``curator_register_filter``) would be
    ignored silently by pluggy when undecorated; refuse it, naming the plugin and the hook."""
    for attr in dir(plugin):
        if not attr.startswith("curator_") or attr in HOOK_NAMES:
            continue
        value = getattr(plugin, attr, None)
        if inspect.isfunction(value) or inspect.ismethod(value):
            close = difflib.get_close_matches(attr, sorted(HOOK_NAMES), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise PluginError(f"plugin {info.name!r} ({info.distribution}) defines {attr!r}, "
                              f"which is not a Curator hook.{hint} Hooks: "
                              f"{', '.join(sorted(HOOK_NAMES))}")


def _format_error(exc: BaseException) -> str:
    if isinstance(exc, PluginError):
        return f"{type(exc).__name__}: {exc}"
    return "".join(traceback.format_exception(exc)).strip()


def build_registry() -> Registry:
    """Discover and load every selected plugin into a new registry (built-ins first)."""
    registry = Registry()
    eps = sorted(md.entry_points(group=ENTRY_POINT_GROUP),
                 key=lambda ep: (ep.name != "core", ep.name))
    seen: set[tuple[str, str]] = set()
    for ep in eps:
        dist = ep.dist.name if ep.dist else "?"
        version = ep.dist.version if ep.dist else "?"
        if (ep.name, ep.value) in seen:
            continue
        seen.add((ep.name, ep.value))
        if not selected(ep.name, dist):
            continue
        info = PluginInfo(ep.name, dist, version, ep.value, builtin=dist in BUILTIN_DISTRIBUTIONS)
        try:
            plugin = ep.load()
        except Exception as exc:
            registry.broken.append(BrokenPlugin(ep.name, dist, version, _format_error(exc)))
            continue
        register_plugin(registry, plugin, info)
    return registry


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = build_registry()
        return _registry


def reset_registry() -> None:
    """Forget the registry so the next :func:`get_registry` rediscovers plugins."""
    global _registry
    with _lock:
        _registry = None


@contextmanager
def use_registry(registry: Registry) -> Iterator[Registry]:
    """Make ``registry`` the process-wide registry inside the block."""
    global _registry
    with _lock:
        previous, _registry = _registry, registry
    try:
        yield registry
    finally:
        with _lock:
            _registry = previous
