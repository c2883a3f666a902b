"""Entry-point discovery with fake entry points (the real-distribution test is
test_discovery.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import types

import pytest
from curator import hookimpl
from curator.plugins import manager
from curator.plugins.manager import build_registry, get_registry, reset_registry, use_registry
from curator.plugins.registry import Registry
from curator.stages.base import ProcessingStage


class FakeDist:
    def __init__(self, name, version):
        self.name, self.version = name, version


class FakeEP:
    def __init__(self, name, value, dist, version="1.0", loader=None):
        self.name, self.value = name, value
        self.dist = FakeDist(dist, version)
        self._loader = loader

    def load(self):
        return self._loader()


class AlphaStage(ProcessingStage):
    def process(self, task):
        return task


def _alpha_module():
    mod = types.ModuleType("alpha_plugin")

    @hookimpl
    def curator_register_stages(register):
        register(AlphaStage)

    mod.curator_register_stages = curator_register_stages
    return mod


def _broken():
    raise ImportError("No module named 'missing_dep'")


@pytest.fixture
def fake_eps(monkeypatch):
    eps = [FakeEP("alpha", "alpha_plugin", "dist-alpha", "1.2", _alpha_module),
           FakeEP("broken", "broken_plugin", "dist-broken", "0.1", _broken)]
    monkeypatch.setattr(manager.md, "entry_points", lambda group: list(eps))
    monkeypatch.delenv("CURATOR_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("CURATOR_DISABLE_PLUGINS", raising=False)
    return eps


def test_broken_plugin_reported_others_loaded(fake_eps):
    reg = build_registry()
    assert [p.name for p in reg.plugins] == ["alpha"]
    assert reg.get("AlphaStage").plugin.version == "1.2"
    assert reg.broken[0].distribution == "dist-broken"
    assert "missing_dep" in reg.broken[0].error


def test_disable_plugins_by_entry_point_or_distribution(fake_eps, monkeypatch):
    monkeypatch.setenv("CURATOR_DISABLE_PLUGINS", "broken, dist-alpha")
    reg = build_registry()
    assert reg.plugins == [] and reg.broken == []


def test_load_plugins_selects_only_those(fake_eps, monkeypatch):
    monkeypatch.setenv("CURATOR_LOAD_PLUGINS", "alpha")
    reg = build_registry()
    assert [p.name for p in reg.plugins] == ["alpha"] and reg.broken == []


def test_core_is_loaded_first_and_always_with_load_plugins(monkeypatch):
    import curator.builtin_plugin as core_mod

    order = []

    def track(name, mod):
        def load():
            order.append(name)
            return mod
        return load

    eps = [FakeEP("alpha", "alpha_plugin", "dist-alpha", loader=track("alpha", _alpha_module())),
           FakeEP("core", "curator.builtin_plugin", "curator-core", loader=track("core", core_mod))]
    monkeypatch.setattr(manager.md, "entry_points", lambda group: list(eps))
    monkeypatch.setenv("CURATOR_LOAD_PLUGINS", "alpha")
    reg = build_registry()
    assert order == ["core", "alpha"]
    assert reg.get("local", kind="executor").plugin.distribution == "curator-core"


def test_installed_core_registers_executors():
    reg = build_registry()
    names = {e.name for e in reg.list(kind="executor")}
    assert {"local", "ray_data", "ray_actor_pool"} <= names


def test_importing_curator_and_loading_core_plugin_imports_no_heavy_library():
    code = ("import sys, curator; from curator.plugins import get_registry; get_registry(); "
            "print(sorted(m for m in ('ray', 'torch', 'transformers', 'pandas', 'fasttext') "
            "if m in sys.modules))")
    env = {**os.environ, "CURATOR_LOAD_PLUGINS": "core"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize("statement", [
    "import curator",
    "from curator import Pipeline, ProcessingStage, Resources",
    "from curator import LocalExecutor, ConfigError, hookimpl, Task",
])
def test_public_face_of_curator_loads_no_heavy_library(statement):
    code = (f"import sys; {statement}; "
            "print(sorted(m for m in ('fsspec', 'numpy', 'pyarrow', 'ray', 'torch') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_every_public_name_resolves_lazily():
    import curator

    assert "Pipeline" in dir(curator)
    missing = []
    for name in curator.__all__:
        try:
            getattr(curator, name)
        except (AttributeError, ImportError) as exc:
            missing.append(f"{name}: {exc}")
    assert not missing, missing
    with pytest.raises(AttributeError, match="no attribute 'Pipline'"):
        curator.Pipline  # noqa: B018


def test_get_reset_and_use_registry():
    first = get_registry()
    assert get_registry() is first
    custom = Registry()
    with use_registry(custom):
        assert get_registry() is custom
    assert get_registry() is first
    reset_registry()
    try:
        assert get_registry() is not first
    finally:
        reset_registry()
