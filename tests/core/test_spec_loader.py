"""YAML/JSON specs: registered names only, overrides, clear configuration errors."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from curator import ProcessingStage, Task
from curator.errors import ConfigError, UnknownNameError
from curator.spec import apply_overrides, executor_from_spec, load_spec, pipeline_from_spec


@dataclass
class EmitNumbers(ProcessingStage):
    """Source: emits ``count`` tasks holding one number each."""

    count: int = 3

    def outputs(self):
        return ["data"], ["n"]

    def process(self, task):
        return [Task(task_id=f"n{i}", dataset_name="nums", data=[i]) for i in range(self.count)]


@dataclass
class AddConstant(ProcessingStage):
    """Adds ``value`` to every number."""

    value: int = 1

    def inputs(self):
        return ["data"], ["n"]

    def outputs(self):
        return ["data"], ["n"]

    def process(self, task):
        return task.derive([x + self.value for x in task.data])


class Threshold:
    """A plain (non-stage) component used inside a stage's parameter."""

    def __init__(self, minimum: int = 0) -> None:
        self.minimum = minimum


@dataclass
class KeepAbove(ProcessingStage):
    """Keeps tasks whose number is at least ``rule.minimum``."""

    rule: Threshold | None = None

    def process(self, task):
        return task if task.data[0] >= self.rule.minimum else None


@pytest.fixture
def registry(curator_registry):
    curator_registry.register(EmitNumbers)
    curator_registry.register(AddConstant)
    curator_registry.register(KeepAbove)
    curator_registry.register(Threshold, kind="filter")
    return curator_registry


SPEC = """
name: numbers
stages:
  - stage: EmitNumbers
    count: 5
  - stage: AddConstant
    value: 10
    with: {batch_size: 2, name: plus_ten}
  - stage: KeepAbove
    rule: {filter: Threshold, minimum: 12}
"""


def test_yaml_spec_builds_and_runs(tmp_path, registry):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    spec = load_spec(path)
    pipeline = pipeline_from_spec(spec)
    assert [s.name for s in pipeline.build()] == ["EmitNumbers", "plus_ten", "KeepAbove"]
    assert pipeline.build()[1].batch_size == 2
    result = pipeline.run(executor_from_spec(spec), summary=False)
    assert sorted(t.data[0] for t in result) == [12, 13, 14]


def test_overrides_by_index_and_by_name(tmp_path, registry):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    spec = apply_overrides(load_spec(path), ["stages.0.count=2", "stages.KeepAbove.rule.minimum=0"])
    assert spec["stages"][0]["count"] == 2
    result = pipeline_from_spec(spec).run(summary=False)
    assert sorted(t.data[0] for t in result) == [10, 11]


def test_unknown_stage_suggests_close_match(registry):
    with pytest.raises(UnknownNameError) as err:
        pipeline_from_spec({"stages": [{"stage": "EmitNumber"}]})
    assert "EmitNumbers" in str(err.value) and "stages[0]" in str(err.value)


def test_bad_parameter_names_stage_and_parameter(registry):
    with pytest.raises(ConfigError) as err:
        pipeline_from_spec({"stages": [{"stage": "EmitNumbers", "cout": 3}]})
    msg = str(err.value)
    assert "stages[0] (EmitNumbers)" in msg and "'cout'" in msg and "count" in msg


def test_non_stage_component_at_top_level_is_explained(registry):
    with pytest.raises(ConfigError, match="not a stage"):
        pipeline_from_spec({"stages": [{"stage": "Threshold"}]})


def test_unknown_executor_and_top_level_key(registry):
    with pytest.raises(UnknownNameError, match="executor"):
        executor_from_spec({"stages": []}, "locl")
    with pytest.raises(ConfigError, match="unknown top-level"):
        pipeline_from_spec({"stages": [], "stagez": []})


def test_cli_run_and_config_error_exit_code(tmp_path, registry, capsys):
    from curator.cli import main

    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    assert main(["run", str(path), "--set", "stages.0.count=1"]) == 0
    assert main(["run", str(path), "--set", "stages.0.cout=1"]) == 2
    assert "unknown parameter 'cout'" in capsys.readouterr().err
