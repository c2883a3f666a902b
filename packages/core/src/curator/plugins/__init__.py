"""Plugin system: hook specifications, discovery and the registry."""

from curator.plugins.hookspecs import HOOK_KINDS, hookimpl, hookspec
from curator.plugins.manager import (
    ENTRY_POINT_GROUP,
    build_registry,
    get_registry,
    register_plugin,
    reset_registry,
    use_registry,
)
from curator.plugins.registry import BrokenPlugin, PluginInfo, Registry, RegistryEntry

__all__ = [
    "hookimpl", "hookspec", "HOOK_KINDS", "ENTRY_POINT_GROUP", "get_registry", "reset_registry",
    "build_registry", "use_registry", "register_plugin", "Registry", "RegistryEntry",
    "PluginInfo", "BrokenPlugin",
]
