from __future__ import annotations

import json

import pytest
from curator import ConfigError, PipelineValidationError, ProcessingStage, Task, UnknownNameError
from curator.spec import (
    apply_overrides,
    build_component,
    executor_from_spec,
    load_spec,
    pipeline_from_spec,
)


class Numbers(ProcessingStage):
    """Emit ``count`` tasks holding one number each."""

    def __init__(self, count: int = 3) -> None:
        self.count = count

    def outputs(self):
        return ["data"], ["n"]

    def process(self, task):
        return [Task(f"n{i}", "ds", [{"n": i}]) for i in range(self.count)]


class Threshold:
    """A filter object (not a stage)."""

    def __init__(self, minimum: int = 0) -> None:
        self.minimum = minimum


class KeepAbove(ProcessingStage):
    """Keep records whose ``n`` passes ``filter_obj``."""

    def __init__(self, filter_obj: Threshold, column: str = "n") -> None:
        self.filter_obj = filter_obj
        self.column = column

    def inputs(self):
        return ["data"], [self.column]

    def process(self, task):
        kept = [r for r in task.data if r["n"] >= self.filter_obj.minimum]
        return task.derive(kept) if kept else None


@pytest.fixture
def reg(curator_registry):
    curator_registry.register(Numbers, "stage")
    curator_registry.register(KeepAbove, "filter")
    curator_registry.register(Threshold, "filter")
    return curator_registry.registry


SPEC = {
    "name": "nums",
    "stages": [
        {"stage": "Numbers", "count": 5},
        {"filter": "KeepAbove", "filter_obj": {"filter": "Threshold", "minimum": 3},
         "with": {"batch_size": 2, "resources": {"cpus": 0.5}}},
    ],
}


def test_pipeline_from_spec_builds_nested_components_and_with(reg):
    p = pipeline_from_spec(SPEC, reg)
    numbers, keep = p.stages
    assert numbers.count == 5 and keep.filter_obj.minimum == 3
    assert keep.batch_size == 2 and keep.resources.cpus == 0.5
    out = p.run(summary=False)
    assert sorted(t.task_id for t in out) == ["n3", "n4"]


def test_unknown_name_suggests_close_matches(reg):
    spec = {"stages": [{"stage": "Numbrs"}]}
    with pytest.raises(UnknownNameError, match=r"stages\[0\].*Did you mean 'Numbers'"):
        pipeline_from_spec(spec, reg)


def test_bad_parameter_names_stage_and_parameter(reg):
    spec = {"stages": [{"stage": "Numbers", "cuont": 2}]}
    with pytest.raises(ConfigError, match=r"Numbers.*unknown parameter 'cuont'.*'count'"):
        pipeline_from_spec(spec, reg)
    spec = {"stages": [{"stage": "Numbers"}, {"filter": "KeepAbove"}]}
    with pytest.raises(ConfigError, match=r"KeepAbove.*filter_obj"):
        pipeline_from_spec(spec, reg)


def test_spec_validates_chain_and_shape(reg):
    spec = {"stages": [{"stage": "Numbers"},
                       {"filter": "KeepAbove", "filter_obj": {"filter": "Threshold"},
                        "column": "missing"}]}
    with pytest.raises(PipelineValidationError, match="'missing'"):
        pipeline_from_spec(spec, reg)
    with pytest.raises(ConfigError, match="not a stage"):
        pipeline_from_spec({"stages": [{"filter": "Threshold"}]}, reg)
    with pytest.raises(ConfigError, match="unknown top-level keys"):
        pipeline_from_spec({"stages": [], "stagse": []}, reg)


def test_overrides_by_index_and_name():
    spec = apply_overrides(SPEC, ["stages.Numbers.count=9", "stages.1.filter_obj.minimum=7",
                                  "name=other"])
    assert spec["stages"][0]["count"] == 9
    assert spec["stages"][1]["filter_obj"]["minimum"] == 7
    assert spec["name"] == "other" and SPEC["name"] == "nums"  # the input is not modified
    with pytest.raises(ConfigError, match="expected key.path=value"):
        apply_overrides(SPEC, ["stages.0.count"])
    with pytest.raises(ConfigError, match="no list item named 'Nope'"):
        apply_overrides(SPEC, ["stages.Nope.x=1"])


def test_load_yaml_and_json(tmp_path):
    (tmp_path / "s.json").write_text(json.dumps(SPEC))
    assert load_spec(tmp_path / "s.json") == SPEC
    (tmp_path / "s.yaml").write_text("name: x\nstages:\n  - stage: Numbers\n    count: 2\n")
    assert load_spec(tmp_path / "s.yaml")["stages"] == [{"stage": "Numbers", "count": 2}]
    (tmp_path / "bad.yaml").write_text("name: x\n")
    with pytest.raises(ConfigError, match="'stages' list"):
        load_spec(tmp_path / "bad.yaml")


def test_executor_from_spec(reg):
    ex = executor_from_spec({"executor": {"name": "local", "config": {"queue_size": 3}}},
                            registry=reg)
    assert type(ex).__name__ == "LocalExecutor" and ex.config == {"queue_size": 3}
    with pytest.raises(UnknownNameError, match="Did you mean 'local'"):
        executor_from_spec({}, "locl", reg)
    with pytest.warns(UserWarning, match=r"unknown config keys \['x'\] are ignored"):
        executor_from_spec({"executor": {"name": "local", "config": {"x": 1}}}, registry=reg)


def test_build_component_instance(reg):
    assert build_component({"filter": "Threshold", "minimum": 2}, reg).minimum == 2
