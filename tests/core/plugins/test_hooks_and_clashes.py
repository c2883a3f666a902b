"""One table of kinds drives the hooks, YAML keys and `curator stages --kind`; misspelled hooks
are errors; clashes: built-ins win, only the clashed name is refused, `plugin:Name` picks one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest
from curator import AmbiguousNameError, ProcessingStage, Task, hookimpl
from curator.plugins import PluginInfo, Registry, register_plugin
from curator.plugins.hookspecs import HOOK_KINDS, CuratorHookSpecs
from curator.plugins.kinds import KIND_NAMES, KINDS, kinds_table_markdown
from curator.spec import COMPONENT_KEYS, pipeline_from_spec

THIRD = PluginInfo("third", "third-party-dist", "1.0", "third_mod")
OTHER = PluginInfo("other", "other-dist", "2.0", "other_mod")
BUILTIN = PluginInfo("builtin", "curator-core", "0.1.0", "curator.builtin_plugin", builtin=True)


class Emit(ProcessingStage):
    """Emit one task holding ``label``."""

    kind = "reader"

    def __init__(self, label: str = "builtin") -> None:
        self.label = label

    def outputs(self):
        return ["data"], []

    def process(self, task):
        return [Task("t0", "ds", [self.label])]


class ThirdEmit(Emit):
    """The third party's stage of the same name."""

    def __init__(self, label: str = "third") -> None:
        super().__init__(label)


class OtherEmit(Emit):
    """A third party's stage registered under the other third party's name."""


class Passthrough(ProcessingStage):
    """A stage whose class declares no specific kind."""

    def process(self, task):
        return task


class Rule:
    """A plain filter object."""


def _module(name: str, **hooks) -> types.ModuleType:
    module = types.ModuleType(name)
    for attr, fn in hooks.items():
        setattr(module, attr, fn)
    return module


def test_hooks_yaml_keys_and_cli_choices_come_from_one_table():
    assert set(HOOK_KINDS.values()) == set(KIND_NAMES)
    for kind in KINDS:
        assert callable(getattr(CuratorHookSpecs, kind.hook))
        assert f"`{kind.hook}`" in kinds_table_markdown()
    assert set(COMPONENT_KEYS) == {k.name for k in KINDS if k.spec_key} - {"executor"}
    assert "task" in KIND_NAMES and "task" not in COMPONENT_KEYS  # tasks are not built in specs
    from curator.cli import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices["stages"]
    kind_action = next(a for a in sub._actions if a.dest == "kind")
    assert tuple(kind_action.choices) == KIND_NAMES


def test_documented_hooks_and_the_single_hook_both_register_with_kind_from_class():
    @hookimpl
    def curator_register_filters(register):
        register(Rule)  # a plain object: the classic hook names its kind

    @hookimpl
    def curator_register_stages(register):
        register(Emit)  # the class says "reader": the class wins over the hook's label

    @hookimpl
    def curator_register(register):
        register(Passthrough)
        register(Rule, name="Rule2", kind="filter")

    reg = Registry()
    register_plugin(reg, _module("p", curator_register_filters=curator_register_filters,
                                 curator_register_stages=curator_register_stages,
                                 curator_register=curator_register), THIRD)
    assert reg.broken == []
    kinds = {e.name: e.kind for e in reg.entries.values()}
    assert kinds == {"Rule": "filter", "Emit": "reader", "Passthrough": "stage",
                     "Rule2": "filter"}


def test_single_hook_without_a_kind_for_a_plain_object_is_an_error():
    @hookimpl
    def curator_register(register):
        register(Rule)

    reg = Registry()
    register_plugin(reg, _module("p", curator_register=curator_register), THIRD)
    assert "without a kind" in reg.broken[0].error and "third-party-dist" in reg.broken[0].error


@pytest.mark.parametrize("decorate", [True, False])
def test_misspelled_hook_is_an_error_naming_plugin_and_hook(decorate):
    def curator_register_filter(register):
        register(Rule)

    hook = hookimpl(curator_register_filter) if decorate else curator_register_filter
    reg = Registry()
    register_plugin(reg, _module("typo", curator_register_filter=hook), THIRD)
    assert reg.plugins == [] and len(reg.broken) == 1
    error = reg.broken[0].error
    assert "'third'" in error and "curator_register_filter" in error
    assert "curator_register_filters" in error  # the suggestion


def _clash_registry() -> Registry:
    """A built-in and two third parties, loaded third-party first (alphabetical order)."""

    @hookimpl
    def third_hook(register):
        register(ThirdEmit, name="Emit")
        register(ThirdEmit, name="Shared")
        register(Passthrough, name="ThirdOnly")

    @hookimpl
    def other_hook(register):
        register(OtherEmit, name="Shared")
        register(Passthrough, name="OtherOnly")

    @hookimpl
    def builtin_hook(register):
        register(Emit)
        register(Passthrough, name="BuiltinOnly")

    reg = Registry()
    register_plugin(reg, _module("t", curator_register=third_hook), THIRD)
    register_plugin(reg, _module("o", curator_register=other_hook), OTHER)
    register_plugin(reg, _module("b", curator_register=builtin_hook), BUILTIN)
    return reg


def test_builtin_wins_and_the_rest_of_every_plugin_stays_usable():
    reg = _clash_registry()
    assert reg.broken == [] and {p.name for p in reg.plugins} == {"third", "other", "builtin"}
    assert reg.get("Emit").obj is Emit  # built-in wins although the third party came first
    assert reg.get("third:Emit").obj is ThirdEmit
    for name in ("BuiltinOnly", "ThirdOnly", "OtherOnly"):
        assert reg.get(name).obj is Passthrough
    assert any("'Emit'" in n and "third:Emit" in n for n in reg.clash_notes())


def test_clash_between_third_parties_names_both_and_qualified_names_work_in_yaml():
    reg = _clash_registry()
    with pytest.raises(AmbiguousNameError) as err:
        pipeline_from_spec({"stages": [{"stage": "Shared"}]}, reg)
    msg = str(err.value)
    assert "third-party-dist 1.0" in msg and "other-dist 2.0" in msg
    assert "'third:Shared'" in msg and "'other:Shared'" in msg
    for qualified, cls in (("third:Shared", ThirdEmit), ("other:Shared", OtherEmit)):
        pipeline = pipeline_from_spec({"stages": [{"reader": qualified}]}, reg)
        assert type(pipeline.build()[0]) is cls
        assert reg.get(qualified).obj is cls  # and in Python
    result = pipeline_from_spec({"stages": [{"stage": "third:Emit"}]}, reg).run(summary=False)
    assert [t.data for t in result] == [["third"]]


def _curator_json(*args: str, **env: str):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("CURATOR_")}
    proc = subprocess.run([sys.executable, "-m", "curator", *args], capture_output=True,
                          text=True, timeout=120, env={**environ, **env})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.timeout(120)
def test_disabling_text_keeps_core_file_partitioning_stage():
    entries = {e["name"]: e for e in _curator_json("stages", "--json",
                                                   CURATOR_DISABLE_PLUGINS="text")}
    assert entries["FilePartitioningStage"]["plugin"] == "core"
    assert "JsonlReader" not in entries
    assert entries["ExactDeduplicationWorkflow"]["kind"] == "deduplicator"


def test_the_plugin_docs_show_the_table_of_kinds():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "writing-stages-and-plugins.md")
    text = doc.read_text()
    start = text.index("-->", text.index("<!-- kinds-table")) + 3
    shown = text[start:text.index("<!-- /kinds-table -->")].strip()
    assert shown == kinds_table_markdown(), "regenerate the table from kinds_table_markdown()"


def test_cli_lists_and_describes_clashes(capsys):
    from curator.cli import main
    from curator.plugins import use_registry

    with use_registry(_clash_registry()):
        assert main(["stages", "--json"]) == 0
        names = {e["name"] for e in json.loads(capsys.readouterr().out)}
        assert {"Emit", "third:Emit", "third:Shared", "other:Shared"} <= names
        assert "Shared" not in names
        assert main(["describe", "Emit"]) == 0
        assert "name clash: 'Emit'" in capsys.readouterr().out
        assert main(["describe", "Shared"]) == 2
        assert "'third:Shared' or 'other:Shared'" in capsys.readouterr().err
        assert main(["plugins"]) == 0
        assert "NAME CLASH: 'Shared'" in capsys.readouterr().out
