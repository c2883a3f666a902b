"""Issue 31 item 7: constructors convert and check parameter types exactly as YAML specs do
(one converter, pydantic's lax mode): ``"3"`` becomes 3 in both, and what cannot be converted
fails at construction with the same text as the spec path (class, parameter, type, value)."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from curator import LocalExecutor, ProcessingStage, Task
from curator.dedup import ExactDeduplicationWorkflow, SemanticDeduplicationStage
from curator.errors import ConfigError
from curator.params import ParameterTypeError
from curator.spec import build_component, executor_from_spec
from curator.stages.base import StageInputSpecs


def _same_text(ctor_err: BaseException, spec_err: BaseException, cls: str) -> None:
    """The constructor says ``Cls: parameter …``; the spec ``where (Cls): parameter …``."""
    ctor, spec = str(ctor_err), str(spec_err)
    assert ctor.startswith(f"{cls}: parameter ")
    assert spec.endswith(f"({cls}): {ctor.split(': ', 1)[1]}")


def test_a_stage_converts_like_a_spec_and_fails_at_construction_with_the_same_text():
    assert SemanticDeduplicationStage(n_clusters="3", eps="0.5").n_clusters == 3
    assert isinstance(SemanticDeduplicationStage(eps="0.5").eps, float)
    with pytest.raises(ParameterTypeError) as ctor:
        SemanticDeduplicationStage(n_clusters="abc")
    with pytest.raises(ConfigError) as spec:
        build_component({"deduplicator": "SemanticDeduplicationStage", "n_clusters": "abc"},
                        where="stages[0]")
    assert "parameter 'n_clusters' expects int, got 'abc' (str)" in str(ctor.value)
    _same_text(ctor.value, spec.value, "SemanticDeduplicationStage")
    assert isinstance(ctor.value, TypeError)  # Python's convention, and a ConfigError


def test_a_workflow_converts_and_checks_parameters_it_passes_to_its_base():
    wf = ExactDeduplicationWorkflow("in", "out", num_partitions="4", perform_removal="false")
    assert wf.num_partitions == 4 and wf.perform_removal is False
    with pytest.raises(ParameterTypeError) as ctor:
        ExactDeduplicationWorkflow("in", "out", perform_removal="maybe")
    with pytest.raises(ConfigError) as spec:
        build_component({"deduplicator": "ExactDeduplicationWorkflow", "input_path": "in",
                         "output_path": "out", "perform_removal": "maybe"})
    assert "parameter 'perform_removal' expects bool, got 'maybe'" in str(ctor.value)
    _same_text(ctor.value, spec.value, "ExactDeduplicationWorkflow")


def test_an_executor_converts_and_checks_its_config():
    assert LocalExecutor(num_workers="4").config["num_workers"] == 4
    assert LocalExecutor({"max_retries": "2", "num_workers": {"S": "3"}}).config == {
        "max_retries": 2, "num_workers": {"S": "3"}}  # only scalars are replaced
    with pytest.raises(ParameterTypeError) as ctor:
        LocalExecutor(num_workers="many")
    with pytest.raises(ConfigError) as spec:
        executor_from_spec({"executor": {"name": "local", "config": {"num_workers": "many"}},
                            "stages": []})
    assert "LocalExecutor: parameter 'num_workers' expects int | dict[str, int] | None, got " \
           "'many' (str)" in str(ctor.value)
    assert str(ctor.value) in str(spec.value)


@dataclass
class Loose(ProcessingStage):
    """Annotations the checker cannot or need not check, and a sloppy ``str = None``."""

    fn: Callable[[int], int] = abs
    anything: Any = None
    model: object = None
    label: str = None  # type: ignore[assignment]
    count: int = 1
    name: str = "Loose"

    def process(self, task: Task) -> Task:
        return task


def test_dataclass_stages_are_checked_and_loose_annotations_keep_working():
    stage = Loose(fn=len, anything=object(), model=[1, 2], label=None, count="5")
    assert stage.fn is len and stage.count == 5 and stage.label is None
    with pytest.raises(ParameterTypeError, match="Loose: parameter 'count' expects int"):
        Loose(count="five")
    with pytest.raises(ParameterTypeError, match="parameter 'count'"):
        Loose(abs, None, None, None, "five")  # positional arguments are checked too


class ThirdPartyScorer:
    """A filter object of a plugin whose class derives from nothing of Curator's."""

    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold


def test_registering_a_class_makes_its_constructor_typed(curator_registry):
    assert ThirdPartyScorer(threshold="0.7").threshold == "0.7"  # not registered yet
    curator_registry.register(ThirdPartyScorer, kind="filter")
    assert ThirdPartyScorer(threshold="0.7").threshold == 0.7
    with pytest.raises(ParameterTypeError, match="ThirdPartyScorer: parameter 'threshold'"):
        ThirdPartyScorer(threshold="high")


def test_typed_construction_stays_cheap():
    """The validators are built once per class; a construction with correct types pays one
    bound lookup per argument (measured against the same class unwrapped)."""
    from curator.params import typed_init

    class Plain:
        def __init__(self, a: int = 1, b: float = 2.0, c: str = "x") -> None:
            self.a, self.b, self.c = a, b, c

    class Typed(Plain):
        pass

    typed_init(Typed)

    def per_call(cls: type) -> float:
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(2000):
                cls(a=3, b=1.5, c="y")
            best = min(best, time.perf_counter() - start)
        return best / 2000

    assert Typed(a="3").a == 3
    assert per_call(Typed) < per_call(Plain) + 20e-6  # under 20 µs added per construction


@pytest.mark.timeout(120)
def test_a_fresh_process_checks_without_building_the_registry():
    code = ("from curator.dedup import SemanticDeduplicationStage as S\n"
            "import curator.plugins.manager as m\n"
            "assert S(n_clusters='7').n_clusters == 7\n"
            "assert m._registry is None\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=100)
    assert proc.returncode == 0, proc.stderr


class _SpecStage(ProcessingStage[Task, Task]):
    """A NeMo-style stage that takes its input specs as a constructor parameter."""

    name = "SpecStage"

    def __init__(self, input_specs: StageInputSpecs, limit: int = 1) -> None:
        self._input_specs, self.limit = input_specs, limit

    def inputs(self) -> StageInputSpecs:
        return self._input_specs

    def process(self, task: Task) -> Task:
        return task


def test_input_specs_are_checked_when_used_and_other_parameters_at_construction():
    """As NeMo Curator: a malformed input spec builds and fails when a task is validated;
    the stage's other parameters are still converted and checked when it is built."""
    task = _PlainTask()
    for spec, where in [((["data"],), "inputs()"), ({_PlainTask: (["data"],)},
                                                    "inputs()[_PlainTask]")]:
        stage = _SpecStage(spec)
        with pytest.raises(TypeError, match=re.escape(f"{where} must be a tuple")):
            stage.input_spec_for_task(task)
        assert stage.validate_input(task) is False
    assert _SpecStage(([], []), limit="5").limit == 5
    with pytest.raises(ParameterTypeError, match="parameter 'limit' expects int"):
        _SpecStage(([], []), limit="five")
    assert _SpecStage({_PlainTask: (["data"], [])}).validate_input(task) is True


class _PlainTask(Task[dict]):
    def __init__(self) -> None:
        super().__init__(dataset_name="d", data={})

    @property
    def num_items(self) -> int:
        return 0

    def validate(self) -> bool:
        return True
