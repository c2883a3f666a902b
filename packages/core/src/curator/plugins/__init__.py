"""Plugin system: the table of kinds, hook specifications, discovery and the registry."""

from curator.plugins.hookspecs import HOOK_KINDS, HOOK_NAMES, hookimpl, hookspec
from curator.plugins.kinds import KIND_NAMES, KINDS, Kind, kind_of
from curator.plugins.manager import (
    BUILTIN_DISTRIBUTIONS,
    ENTRY_POINT_GROUP,
    build_registry,
    get_registry,
    register_plugin,
    reset_registry,
    use_registry,
)
from curator.plugins.registry import BrokenPlugin, PluginInfo, Registry, RegistryEntry

__all__ = [
    "hookimpl", "hookspec", "HOOK_KINDS", "HOOK_NAMES", "KINDS", "KIND_NAMES", "Kind", "kind_of",
    "ENTRY_POINT_GROUP", "BUILTIN_DISTRIBUTIONS", "get_registry", "reset_registry",
    "build_registry", "use_registry", "register_plugin", "Registry", "RegistryEntry",
    "PluginInfo", "BrokenPlugin",
]
