from __future__ import annotations

import pytest
from curator import PluginConflictError, PluginError, ProcessingStage, UnknownNameError, hookimpl
from curator.plugins import PluginInfo, Registry, register_plugin

A = PluginInfo("a", "dist-a", "1.0", "a_mod")
B = PluginInfo("b", "dist-b", "2.0", "b_mod")


class Good(ProcessingStage):
    """A good stage.

    More text."""

    modality = "text"

    def process(self, task):
        return task


class Abstract(ProcessingStage):
    pass


class NotAStage:
    """Some filter object."""


def test_add_records_provenance_modality_and_description():
    reg = Registry()
    e = reg.add(Good, "stage", A)
    assert e.name == "Good" and e.plugin.distribution == "dist-a" and e.plugin.version == "1.0"
    assert e.modality == "text" and e.description == "A good stage."
    assert e.is_stage and e.qualname.endswith("Good")
    assert reg.get("Good") is e and "Good" in reg
    assert reg.add(Good, "stage", A) is e  # the same registration twice is harmless
    assert reg.add(NotAStage, "filter", A, name="nf", modality="image").modality == "image"


@pytest.mark.parametrize("obj, kind, match", [
    (Good(), "stage", "only classes can be registered"),
    (len, "filter", "only classes"),
    (NotAStage, "stage", "must subclass curator.ProcessingStage"),
    (NotAStage, "reader", "must subclass"),
    (Abstract, "stage", r"abstract \(implement: process\)"),
    (NotAStage, "executor", "execute"),
])
def test_add_validates(obj, kind, match):
    with pytest.raises(PluginError, match=match) as err:
        Registry().add(obj, kind, A)
    assert "dist-a 1.0" in str(err.value)


def test_invalid_name():
    with pytest.raises(PluginError, match="invalid name"):
        Registry().add(Good, "stage", A, name="not valid")


def test_clash_between_third_parties_refuses_only_that_name_and_names_both():
    reg = Registry()
    reg.add(Good, "stage", A)
    reg.add(NotAStage, "filter", A)

    class Good2(Good):
        pass

    reg.add(Good2, "stage", B, name="Good")
    with pytest.raises(PluginConflictError) as err:
        reg.get("Good")
    msg = str(err.value)
    assert "dist-a 1.0" in msg and "dist-b 2.0" in msg and "'a:Good' or 'b:Good'" in msg
    assert reg.get("a:Good").obj is Good and reg.get("b:Good").obj is Good2
    assert reg.get("NotAStage").obj is NotAStage  # the rest of plugin a stays usable
    with pytest.raises(PluginError, match="registered stage name 'Good' twice"):
        reg.add(Good2, "stage", A, name="Good")  # one plugin, one name, two classes: a bug


def test_unknown_name_suggests_close_matches():
    reg = Registry()
    reg.add(Good, "stage", A, name="WordCountFilter")
    with pytest.raises(UnknownNameError, match="Did you mean 'WordCountFilter'") as err:
        reg.get("WordCuntFilter")
    assert "curator stages" in str(err.value)
    assert isinstance(err.value, KeyError)
    with pytest.raises(UnknownNameError, match="is a stage, not an executor"):
        reg.get("WordCountFilter", kind="executor")


def test_list_filters_by_kind_and_modality():
    reg = Registry()
    reg.add(Good, "stage", A)
    reg.add(NotAStage, "filter", A, name="F", modality="image")
    assert [e.name for e in reg.list(kind="filter")] == ["F"]
    assert [e.name for e in reg.list(modality="text")] == ["Good"]


class GoodPlugin:
    @hookimpl
    def curator_register_stages(self, register):
        register(Good)

    @hookimpl
    def curator_register_filters(self, register):
        register(NotAStage, name="NotAStageFilter", description="custom")


class RaisingPlugin:
    @hookimpl
    def curator_register_filters(self, register):
        register(NotAStage, name="Partial")  # must not be kept: the hook then raises
        raise RuntimeError("plugin bug")


class InvalidPlugin:
    @hookimpl
    def curator_register_stages(self, register):
        register(Abstract)


def test_register_plugin_records_provenance():
    reg = Registry()
    register_plugin(reg, GoodPlugin(), A)
    assert reg.plugins == [A] and reg.broken == []
    assert reg.get("Good").plugin == A
    assert reg.get("NotAStageFilter").kind == "filter"
    assert reg.get("NotAStageFilter").description == "custom"


def test_plugin_raising_in_hook_is_reported_not_fatal():
    reg = Registry()
    register_plugin(reg, RaisingPlugin(), B)
    register_plugin(reg, InvalidPlugin(), PluginInfo("c", "dist-c", "3", ""))
    register_plugin(reg, GoodPlugin(), A)
    assert [p.name for p in reg.plugins] == ["a"]
    broken = {b.name: b for b in reg.broken}
    assert "plugin bug" in broken["b"].error and broken["b"].distribution == "dist-b"
    assert "abstract" in broken["c"].error
    assert "Partial" not in reg  # a failing plugin leaves nothing behind
    assert "Good" in reg
    with pytest.raises(UnknownNameError, match="Plugins that failed to load: b"):
        reg.get("Missing")


def test_commands_are_registered_and_clash():
    class Cmd:
        @hookimpl
        def curator_register_commands(self, register):
            register("hello", lambda p: None, lambda a: 0, help="say hello")

    reg = Registry()
    register_plugin(reg, Cmd(), A)
    assert reg.commands["hello"][2] == "say hello"
    register_plugin(reg, Cmd(), B)
    assert "dist-a" in reg.broken[0].error and "dist-b" in reg.broken[0].error
