from __future__ import annotations

import threading

import pytest
from curator import CompositeStage, Pipeline, ProcessingStage, Task, hookimpl
from curator.plugins import get_registry
from curator.testing import StageContractError, check_stage_contract


class AddLength(ProcessingStage):
    """Adds a ``length`` column."""

    def inputs(self):
        return ["data"], ["text"]

    def outputs(self):
        return ["data"], ["length"]

    def process(self, task):
        return task.derive([{**r, "length": len(r["text"])} for r in task.data])


def sample():
    return Task("t", "ds", [{"text": "abc"}])


def test_good_stage_passes_and_returns_outputs():
    out = check_stage_contract(AddLength(), sample())
    assert out[0].data == [{"text": "abc", "length": 3}]
    assert check_stage_contract(AddLength()) == []


def test_missing_declared_column_fails():
    class Liar(AddLength):
        def outputs(self):
            return ["data"], ["length", "score"]

    with pytest.raises(StageContractError, match=r"Liar: declares output columns \['score'\]"):
        check_stage_contract(Liar(), sample())


def test_bad_io_declaration_fails():
    class BadIO(AddLength):
        def inputs(self):
            return "text"

    with pytest.raises(StageContractError, match=r"inputs\(\) must return"):
        check_stage_contract(BadIO())


def test_unpicklable_stage_fails():
    class Holder(AddLength):
        def __init__(self):
            self.lock = threading.Lock()  # e.g. a model client created in __init__

    with pytest.raises(StageContractError, match="cannot be pickled"):
        check_stage_contract(Holder())


def test_raising_stage_fails_with_traceback():
    class Boom(AddLength):
        def process(self, task):
            raise KeyError("text")

    with pytest.raises(StageContractError, match="raised on the sample task"):
        check_stage_contract(Boom(), sample())


def test_bad_batch_size_and_non_stage():
    with pytest.raises(StageContractError, match="batch_size"):
        bad = AddLength()
        bad.batch_size = 0
        check_stage_contract(bad)
    with pytest.raises(StageContractError, match="not a curator.ProcessingStage"):
        check_stage_contract(object())  # type: ignore[arg-type]


def test_composite_parts_are_checked():
    class Pair(CompositeStage):
        def decompose(self):
            bad = AddLength()
            bad.name = ""
            return [AddLength(), bad]

    with pytest.raises(StageContractError, match="name must be a non-empty string"):
        check_stage_contract(Pair())


class Shout(ProcessingStage):
    """Shouts."""

    def process(self, task):
        return task.derive(task.data.upper())


class ShoutPlugin:
    @hookimpl
    def curator_register_modifiers(self, register):
        register(Shout, name="ShoutStage", modality="text")


def test_curator_registry_fixture_registers_for_one_test(curator_registry):
    curator_registry.register(AddLength, "stage")
    curator_registry.register_plugin(ShoutPlugin(), name="shout", distribution="shout-dist")
    reg = get_registry()  # what pipelines, specs and the CLI see
    assert reg.get("AddLength").plugin.distribution == "curator-test-fixture"
    entry = reg.get("ShoutStage", kind="modifier")
    assert entry.plugin.distribution == "shout-dist" and entry.modality == "text"
    assert "local" in reg  # installed plugins are still there
    out = Pipeline("p", stages=[entry.obj()]).run(initial_tasks=[Task("t", "d", "hi")],
                                                 summary=False)
    assert out[0].data == "HI"


def test_registry_fixture_registrations_do_not_leak():
    assert "ShoutStage" not in get_registry()
    assert "AddLength" not in get_registry()
