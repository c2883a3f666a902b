from __future__ import annotations

import pytest
from curator import Pipeline, PipelineValidationError, ProcessingStage, Resources, Task


class Stage(ProcessingStage):
    def __init__(self, name="S", reads=(), writes=()):
        self.name = name
        self.reads = list(reads)
        self.writes = list(writes)

    def inputs(self):
        return ["data"], self.reads

    def outputs(self):
        return ["data"], self.writes

    def process(self, task):
        return task


def test_add_stage_chains_and_checks_type():
    p = Pipeline("p")
    assert p.add_stage(Stage("a")).add_stage(Stage("b")) is p
    assert [s.name for s in p.stages] == ["a", "b"]
    with pytest.raises(TypeError, match="instantiate it"):
        p.add_stage(Stage)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs a ProcessingStage"):
        p.add_stage("nope")  # type: ignore[arg-type]


def test_build_error_names_stage_column_and_upstream():
    p = Pipeline("p", stages=[Stage("Reader", writes=["text", "id"]),
                              Stage("Scorer", reads=["text"], writes=["score"]),
                              Stage("Filter", reads=["quality"])])
    with pytest.raises(PipelineValidationError) as err:
        p.build()
    msg = str(err.value)
    assert "'Filter'" in msg and "'quality'" in msg
    assert "'text' (from Reader)" in msg and "'score' (from Scorer)" in msg


def test_build_passes_when_columns_are_produced():
    p = Pipeline("p", stages=[Stage("R", writes=["text"]), Stage("F", reads=["text"])])
    assert [s.name for s in p.build()] == ["R", "F"]


def test_open_schema_lets_anything_through():
    p = Pipeline("p", stages=[Stage("R", writes=["*"]), Stage("F", reads=["anything"])])
    assert len(p.build()) == 2


def test_first_stage_inputs_are_not_checked_and_empty_pipeline_fails():
    assert len(Pipeline("p", stages=[Stage("F", reads=["text"])]).build()) == 1
    with pytest.raises(PipelineValidationError, match="no stages"):
        Pipeline("empty").build()


def test_duplicate_names_are_made_unique():
    built = Pipeline("p", stages=[Stage("S"), Stage("S"), Stage("T")]).build()
    assert [s.name for s in built] == ["S_1", "S_2", "T"]


def test_describe_lists_stages_resources_and_columns():
    p = Pipeline("demo", "does things", stages=[
        Stage("R", writes=["text"]),
        Stage("G", reads=["text"]).with_(resources=Resources(cpus=0.5, gpus=1), batch_size=8)])
    text = p.describe()
    assert "Pipeline 'demo': does things" in text
    assert "2 stages" in text
    assert "1. G [Stage] (cpus=0.5, gpus=1, batch_size=8, thread)" in text
    assert "reads ['text']" in text


def test_run_returns_output_tasks_and_rejects_bad_executor_options():
    p = Pipeline("p", stages=[Stage("S")])
    out = p.run(initial_tasks=[Task("a", "d", [1]), Task("b", "d", [2])], summary=False)
    assert sorted(t.task_id for t in out) == ["a", "b"]
    assert out.stats.stages[0].tasks_in == 2
    out = p.run("local", initial_tasks=[Task("a", "d", [1])], summary=False, num_workers=1)
    assert len(out) == 1
    from curator import LocalExecutor
    with pytest.raises(TypeError, match="only accepted with an executor name"):
        p.run(LocalExecutor(), summary=False, num_workers=1)
