"""Plugin system: the table of kinds, hook specifications, discovery and the registry. Names are
imported on first use (a run on a built-in executor loads none of it)."""

from __future__ import annotations

from curator._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("HOOK_KINDS", "HOOK_NAMES", "hookimpl", "hookspec"),
                    "curator.plugins.hookspecs"),
    **dict.fromkeys(("KIND_NAMES", "KINDS", "Kind", "kind_of"), "curator.plugins.kinds"),
    **dict.fromkeys(("BUILTIN_DISTRIBUTIONS", "ENTRY_POINT_GROUP", "build_registry",
                     "get_registry", "register_plugin", "reset_registry", "use_registry"),
                    "curator.plugins.manager"),
    **dict.fromkeys(("MergedRules", "MigrationRules", "merge_rules"),
                    "curator.plugins.migration"),
    **dict.fromkeys(("BrokenPlugin", "PluginInfo", "Registry", "RegistryEntry"),
                    "curator.plugins.registry"),
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
