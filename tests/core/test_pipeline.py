from __future__ import annotations

import pytest
from curator import EmptyTask, Pipeline, PipelineValidationError, ProcessingStage, Resources, Task


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


def test_columns_the_first_stage_reads_are_there_for_the_stages_after_it():
    # a pipeline run on given tasks (no reader): NeMo's Nemotron-CC tutorial filters first
    p = Pipeline("p", stages=[Stage("Filter", reads=["text"], writes=["score"]),
                              Stage("Rewrite", reads=["text", "score"])])
    assert [s.name for s in p.build()] == ["Filter", "Rewrite"]
    with pytest.raises(PipelineValidationError, match="'other'"):
        Pipeline("p", stages=[Stage("Filter", reads=["text"]), Stage("X", reads=["other"])]).build()


def test_duplicate_names_are_made_unique():
    built = Pipeline("p", stages=[Stage("S"), Stage("S"), Stage("T")]).build()
    assert [s.name for s in built] == ["S_1", "S_2", "T"]


def test_describe_lists_stages_resources_and_columns():
    p = Pipeline("demo", "does things", stages=[
        Stage("R", writes=["text"]),
        Stage("G", reads=["text"]).with_(resources=Resources(cpus=0.5, gpus=1), batch_size=8)])
    text = p.describe()  # NeMo Curator's layout
    assert "Pipeline: demo\nDescription: does things\nStages: 2" in text
    assert "Stage 2: G [Stage]\n  Resources: 0.5 CPUs, 1 GPUs\n  Batch size: 8" in text
    assert "  Inputs:\n    Required attributes: data\n    Required columns: text" in text
    assert "  Outputs:\n    Output attributes: data\n    Output columns: text" in text


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


# ---- NeMo Curator's pipeline behaviour --------------------------------------------------------

class FailOn(ProcessingStage):
    """Raises on the task with id ``victim``; counts what it passes on."""

    name = "FailOn"

    def __init__(self, victim: str) -> None:
        self.victim = victim

    def process(self, task):
        if task.task_id == self.victim:
            raise RuntimeError(f"cannot handle {task.task_id}")
        return task


class Writer(ProcessingStage):
    """Writes each task's data to ``{out}/{task_id}.json`` (the work done by the others)."""

    name = "Writer"

    def __init__(self, out) -> None:
        self.out = out

    def process(self, task):
        (self.out / f"{task.task_id}.json").write_text(str(task.data))
        return task


def test_run_raises_after_finishing_the_other_work_and_writing_the_report(tmp_path):
    from curator import PipelineFailedError
    from curator.errors import PipelineFailedError as from_errors

    assert PipelineFailedError is from_errors
    out = tmp_path / "out"
    out.mkdir()
    report, rejected = tmp_path / "run.json", tmp_path / "rejected"
    tasks = [Task(f"t{i}", "d", [i]) for i in range(4)]
    with pytest.raises(PipelineFailedError, match=r"(?s)1 task\(s\) failed.*FailOn/t2") as err:
        Pipeline("p", stages=[FailOn("t2"), Writer(out)]).run(
            initial_tasks=tasks, rejected_dir=str(rejected), report=str(report), summary=False)
    assert sorted(p.name for p in out.iterdir()) == ["t0.json", "t1.json", "t3.json"]
    result = err.value.result
    assert result.ok is False and sorted(t.task_id for t in result) == ["t0", "t1", "t3"]
    assert [(f.stage, f.task_id) for f in err.value.failed] == [("FailOn", "t2")]
    assert report.is_file() and '"ok": false' in report.read_text()
    assert any(p.name.startswith("t2.failed") for p in (rejected / "FailOn").iterdir())
    kept = Pipeline("p", stages=[FailOn("t2")]).run(  # opting out returns the result
        initial_tasks=[Task("t2", "d", [2])], summary=False, raise_on_failure=False)
    assert kept.ok is False and kept.failed[0].task.data == [2]  # kept whole


class Rebuild(ProcessingStage):
    """NeMo style: builds new tasks without ids (``times`` of them per input)."""

    name = "Rebuild"

    def __init__(self, times: int = 1) -> None:
        self.times = times

    def process(self, task):
        made = [Task(dataset_name=task.dataset_name, data=task.data) for _ in range(self.times)]
        return made if self.times > 1 else made[0]


def test_tasks_built_without_ids_are_named_deterministically():
    pipe = Pipeline("p", stages=[Rebuild(), Rebuild(times=2)])
    out = pipe.run(initial_tasks=[Task(dataset_name="d", data=[i]) for i in range(2)],
                   summary=False)
    assert sorted(t.task_id for t in out) == ["0_0_0", "0_0_1", "0_1_0", "0_1_1"]
    named = pipe.run(initial_tasks=[Task("a", "d", [1])], summary=False)
    assert sorted(t.task_id for t in named) == ["a_0", "a_1"]  # given ids are kept
    from curator.pipeline import assign_root_task_ids

    mixed = [EmptyTask(), Task(dataset_name="d", data=[1])]
    assign_root_task_ids(mixed)
    assert [t.task_id for t in mixed] == ["0", "0_1"]


def test_build_marks_source_and_sink_stages():
    a, b, c = Stage("a"), Stage("b"), Stage("c")
    Pipeline("p", stages=[a, b, c]).build()
    assert [(s.is_source_stage, s.is_sink_stage) for s in (a, b, c)] == [
        (True, False), (False, False), (False, True)]
    x, y = Stage("x"), Stage("y")
    x.is_source_stage = y.is_source_stage = True
    with pytest.raises(PipelineValidationError, match="multiple source stages marked"):
        Pipeline("p", stages=[x, y]).build()
    assert issubclass(PipelineValidationError, ValueError)  # NeMo raises ValueError


def test_nemo_config_and_checkpoint_path(tmp_path):
    p = Pipeline("p", stages=[Stage("S")], config={"anything": 1})
    assert p.config == {"anything": 1}
    tasks = [Task("a", "d", [1])]
    p.run(initial_tasks=tasks, checkpoint_path=str(tmp_path / "ckpt"), summary=False)
    again = p.run(initial_tasks=tasks, checkpoint_path=str(tmp_path / "ckpt"), summary=False)
    assert again.stats.stages[0].skipped == 1  # the checkpoint was used
    with pytest.raises(TypeError, match="checkpoint_path"):
        p.run(initial_tasks=tasks, checkpoint_path="x", checkpoint_dir="y", summary=False)


def test_describe_renders_dict_input_specs_per_task_type():
    class PerType(Stage):
        def inputs(self):
            return {Task: (["data"], ["values"])}

    text = Pipeline("p", stages=[Stage("R", writes=["values"]), PerType("T")]).describe()
    assert "  Inputs:\n    Task:\n      Required attributes: data\n" \
           "      Required columns: values" in text


def test_stage_custom_metrics_reach_the_task_stage_perf():
    class Timed(ProcessingStage):
        name = "Timed"

        def process(self, task):
            with self._time_metric("step_s"):
                self._log_metric("rows", len(task.data))
            return task

    out = Pipeline("p", stages=[Timed()]).run(initial_tasks=[Task("a", "d", [1, 2])],
                                              summary=False)
    perf = out[0].stage_perf[-1]
    assert perf.stage_name == "Timed" and perf.num_items_processed == 2
    assert perf.custom_metrics["rows"] == 2.0 and perf.custom_metrics["step_s"] >= 0


RUN_AND_REPORT = """
import sys
from curator import EmptyTask, Pipeline, ProcessingStage
from curator.plugins import manager

class Echo(ProcessingStage):
    name = "echo"
    def process(self, task):
        return task

Pipeline("p", stages=[Echo()]).run(initial_tasks=[EmptyTask(task_id="t")], summary=False,
                                   **({"executor": sys.argv[1]} if len(sys.argv) > 1 else {}))
print(manager._registry is None)
"""


@pytest.mark.parametrize("args", [[], ["local"]])
def test_a_run_on_a_builtin_executor_loads_no_plugin(args):
    """Core's executors are taken without importing every installed plugin (a run on a laptop
    does not pay for the video, audio and web packages it does not use)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", RUN_AND_REPORT, *args], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_a_builtin_executor_name_follows_the_plugin_switches(monkeypatch):
    """With core's plugin switched off its executors are not there (as every registered name)."""
    from curator.pipeline import make_executor
    from curator.plugins import reset_registry

    monkeypatch.setenv("CURATOR_DISABLE_PLUGINS", "core")
    reset_registry()
    try:
        with pytest.raises(Exception, match="local"):
            make_executor("local")
    finally:
        monkeypatch.delenv("CURATOR_DISABLE_PLUGINS")
        reset_registry()
