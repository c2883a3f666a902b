"""A registry that a test can add plugins and components to, visible process-wide."""

from __future__ import annotations

from typing import Any

from curator.errors import PluginError
from curator.plugins.kinds import kind_of
from curator.plugins.manager import build_registry, register_plugin
from curator.plugins.registry import PluginInfo, Registry, RegistryEntry

__all__ = ["TestRegistry"]

_TEST_PLUGIN = PluginInfo("test", "curator-test-fixture", "0", "curator.testing")


class TestRegistry:
    """Wraps a fresh :class:`Registry` (installed plugins plus what the test adds)."""

    __test__ = False  # not a pytest test class

    def __init__(self, include_installed: bool = True) -> None:
        self.registry: Registry = build_registry() if include_installed else Registry()

    def register(self, obj: Any, kind: str | None = None, name: str | None = None, *,
                 modality: str | None = None, plugin: PluginInfo = _TEST_PLUGIN) -> RegistryEntry:
        """Add one component as if ``plugin`` had registered it through its hook; the kind
        comes from the class as in a plugin (``kind`` names it for plain objects)."""
        resolved = kind_of(obj, kind)
        if resolved is None:
            raise PluginError(f"register({obj!r}): pass kind= for an object that is neither a "
                              f"stage nor an executor")
        return self.registry.add(obj, resolved, plugin, name=name, modality=modality)

    def register_plugin(self, plugin: Any, name: str = "test_plugin",
                        distribution: str = "curator-test-fixture", version: str = "0") -> None:
        """Run a plugin object's (or module's) hooks, as entry-point discovery would."""
        register_plugin(self.registry, plugin, PluginInfo(name, distribution, version,
                                                          getattr(plugin, "__name__", "")))

    def __getattr__(self, item: str) -> Any:
        return getattr(self.registry, item)
