import pytest
from curator import Pipeline, StagePerf, Task, TaskPerfUtils, create_pipeline_from_yaml
from curator.errors import ConfigError
from curator.migrate import migrate_source


def task(*perfs):
    return Task(task_id="t", dataset_name="d", data=None, stage_perf=list(perfs))


def test_task_perf_utils_aggregates_stage_records():
    shared = StagePerf("reader", 1.0, 4, 4)
    tasks = [task(shared, StagePerf("filter_a", 2.0, 4, 2, custom_metrics={"kept": 2})),
             task(shared, StagePerf("filter_b", 3.0, 2, 1))]
    metrics = TaskPerfUtils.collect_stage_metrics(tasks)
    assert metrics["reader"]["process_time"].tolist() == [1.0]  # a shared record counts once
    assert metrics["filter_a"]["custom.kept"].tolist() == [2.0]
    assert TaskPerfUtils.get_aggregated_stage_stat(tasks, "filter", "process_time") == 5.0
    assert TaskPerfUtils.get_aggregated_stage_stat(tasks, "nope", "process_time") == 0.0
    agg = TaskPerfUtils.aggregate_task_metrics(tasks, prefix="run")
    assert agg["run_reader_num_items_processed_sum"] == 4.0
    two = TaskPerfUtils.aggregate_task_metrics({"pipeline_tasks": {"a": tasks, "b": None}})
    assert "a_filter_b_process_time_mean" in two
    assert TaskPerfUtils.collect_stage_metrics(None) == {}
    with pytest.raises(TypeError, match="list of tasks"):
        TaskPerfUtils.collect_stage_metrics(3)


def test_create_pipeline_from_hydra_style_config(tmp_path):
    cfg = {"stages": [
        {"_target_": "nemo_curator.stages.file_partitioning.FilePartitioningStage",
         "file_paths": str(tmp_path), "files_per_partition": 2,
         "resources": {"cpus": 2.0}}]}
    pipe = create_pipeline_from_yaml(cfg, log_config=True)
    assert isinstance(pipe, Pipeline) and pipe.name == "yaml_pipeline"
    (stage,) = pipe.stages
    assert type(stage).__name__ == "FilePartitioningStage" and stage.resources.cpus == 2.0
    with pytest.raises(ConfigError, match="both stages and workflow"):
        create_pipeline_from_yaml({"stages": [], "workflow": []})
    with pytest.raises(ConfigError, match="neither stages nor workflow"):
        create_pipeline_from_yaml({})
    with pytest.raises(ConfigError, match="exactly one workflow"):
        create_pipeline_from_yaml({"workflow": []})
    with pytest.raises(ConfigError, match="not supported"):
        create_pipeline_from_yaml({"stages": [{"_target_": "x.FilePartitioningStage",
                                               "_partial_": True}]})


def test_nemo_imports_migrate():
    res = migrate_source("from nemo_curator.tasks.utils import TaskPerfUtils\n"
                         "from nemo_curator.config.run import create_pipeline_from_yaml\n", "s.py")
    assert not res.unmapped and "nemo_curator" not in res.text
    exec(res.text, {})
