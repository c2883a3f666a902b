"""pytest plugin shipped with curator-core (entry point ``pytest11``): fixtures for plugin
authors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from curator.plugins.manager import use_registry
from curator.testing.registry_fixture import TestRegistry


@pytest.fixture
def curator_registry() -> Iterator[TestRegistry]:
    """A fresh registry for one test: the installed plugins plus whatever the test registers
    with ``curator_registry.register(obj, kind, name=None)`` or
    ``curator_registry.register_plugin(plugin_object)``. Pipelines, specs and the CLI run in the
    test see it; the process-wide registry is restored afterwards."""
    reg = TestRegistry()
    with use_registry(reg.registry):
        yield reg
