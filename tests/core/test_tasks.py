from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from curator import EMPTY_TASK, EmptyTask, FileGroupTask, StagePerf, Task, stable_id
from curator.tasks import get_deterministic_hash


def test_stable_id_is_deterministic_and_distinguishes_inputs():
    assert stable_id("a", 1) == stable_id("a", 1)
    assert stable_id("a", 1) != stable_id("a", 2)
    assert stable_id("ab", "c") != stable_id("a", "bc")  # parts are separated
    assert len(stable_id("x")) == 16 and len(stable_id("x", length=8)) == 8
    int(stable_id("x"), 16)  # hex


def test_task_fields_and_num_items():
    t = Task(task_id="t1", dataset_name="ds", data=[1, 2, 3])
    assert t.num_items == 3
    assert t.metadata == {} and t.stage_perf == []
    assert t._metadata is t.metadata and t._stage_perf is t.stage_perf
    assert Task("t2", "ds", data=42).num_items == 1  # no len(): one item
    assert t.partition is None
    t.metadata["partition"] = "p0"
    assert t.partition == "p0"
    assert t.validate()


def test_derive_keeps_identity_and_copies_metadata():
    t = Task("t1", "ds", data=[1], metadata={"source_files": ["a"]},
             stage_perf=[StagePerf("s", 0.1, 1, 1)])
    d = t.derive([1, 2])
    assert (d.task_id, d.dataset_name, d.data) == ("t1", "ds", [1, 2])
    assert d.metadata == t.metadata and d.metadata is not t.metadata
    d.metadata["x"] = 1
    d.stage_perf.append(StagePerf("s2", 0.1, 1, 1))
    assert "x" not in t.metadata and len(t.stage_perf) == 1
    assert t.derive([], suffix=3).task_id == "t1_3"
    g = t.derive(["f.txt"], cls=FileGroupTask)
    assert isinstance(g, FileGroupTask) and g.task_id == "t1"


def test_file_group_task_records_source_files():
    t = FileGroupTask("g0", "ds", data=["a.jsonl", "b.jsonl"])
    assert t.metadata["source_files"] == ["a.jsonl", "b.jsonl"]
    assert t.num_items == 2
    kept = FileGroupTask("g1", "ds", data=["x"], metadata={"source_files": ["orig"]})
    assert kept.metadata["source_files"] == ["orig"]


def test_empty_task():
    assert isinstance(EMPTY_TASK, EmptyTask)
    assert EMPTY_TASK.num_items == 0 and EMPTY_TASK.data is None


# ---- NeMo Curator's construction forms ------------------------------------------------------

def test_task_without_task_id_is_unnamed_until_the_executor_names_it():
    a = Task(dataset_name="ds", data=[1, 2])
    assert a.task_id == ""  # NeMo Curator: the framework assigns ids
    a._set_task_id("", 3)
    assert a.task_id == "3"
    a._set_task_id("0", 7)  # always overwrites: parent id, "_", own segment
    assert a.task_id == "0_7" and a.get_source_id() == "7"
    a._set_task_id("root", "abc")
    assert a.task_id == "root_abc"
    assert EmptyTask().task_id == "0" == EMPTY_TASK.task_id  # NeMo's implicit root


def test_stage_perf_has_nemo_stage_perf_stats_names():
    a = StagePerf("s", 0.5, 4, 3)
    assert (a.stage_name, a.process_time, a.num_items_processed) == ("s", 0.5, 4)
    b = StagePerf(stage_name="s", process_time=0.25, num_items_processed=2,
                  custom_metrics={"tokenize_s": 1.0})
    total = sum([a, b])
    assert (total.process_time, total.num_items_processed) == (0.75, 6)
    assert total.custom_metrics == {"tokenize_s": 1.0}
    assert b.to_dict() == {"stage_name": "s", "process_time": 0.25, "actor_idle_time": 0.0,
                           "input_data_size_mb": 0.0, "num_items_processed": 2,
                           "custom_metrics": {"tokenize_s": 1.0}}
    assert ("custom.tokenize_s", 1.0) in b.items()
    b.reset()
    assert (b.process_time, b.num_items_processed, b.custom_metrics) == (0.0, 0, {})


def test_nemo_positional_order_and_underscore_keywords():
    perf = [StagePerf("s", 0.1, 1, 1)]
    t = Task("ds", [1], _stage_perf=perf)  # NeMo's positional order: dataset_name, data
    assert (t.dataset_name, t.data, t.stage_perf) == ("ds", [1], perf)
    assert t.task_id == ""
    nemo = Task("ds", [1], perf, {"m": 1})  # NeMo's order: (…, _stage_perf, _metadata)
    assert (nemo.stage_perf, nemo.metadata, nemo.task_id) == (perf, {"m": 1}, "")

    @dataclass
    class ListTask(Task[list]):
        data: list = field(default_factory=list)

    lt = ListTask("t7", "ds")  # two strings: our (task_id, dataset_name), data defaulted
    assert (lt.task_id, lt.dataset_name, lt.data) == ("t7", "ds", [])
    k = Task(dataset_name="ds", data=[1], _metadata={"x": 1}, _stage_perf=perf)
    assert k.metadata == {"x": 1} and k.stage_perf == perf
    assert k._metadata is k.metadata
    k._metadata = {"y": 2}  # NeMo's processing_stage assigns these
    k._stage_perf = []
    assert k.metadata == {"y": 2} and k.stage_perf == []
    # our own forms keep working, and giving both spellings is an error
    assert Task("t1", "ds", [1]).task_id == "t1"
    with pytest.raises(TypeError, match="metadata"):
        Task(dataset_name="ds", data=[1], metadata={}, _metadata={})


def test_empty_task_needs_no_arguments():
    e = EmptyTask()
    assert e.data is None and e.num_items == 0
    assert (e.task_id, e.dataset_name) == (EMPTY_TASK.task_id, EMPTY_TASK.dataset_name)


def test_get_deterministic_id_and_hash():
    assert Task("t", "ds", [1]).get_deterministic_id() is None
    g1 = FileGroupTask(dataset_name="ds", data=["b.jsonl", "a.jsonl"])
    g2 = FileGroupTask(dataset_name="ds", data=["a.jsonl", "b.jsonl"])
    # NeMo: 12 hex digits of sha256 over the sorted paths, independent of their order
    assert g1.get_deterministic_id() == g2.get_deterministic_id() == get_deterministic_hash(
        ["a.jsonl", "b.jsonl"])
    assert len(g1.get_deterministic_id()) == 12
    assert g1.task_id == ""  # a source's output without an id is named by the executor
    assert get_deterministic_hash(["x"], seed="s") != get_deterministic_hash(["x"])


def test_add_stage_perf():
    t = Task("t", "ds", [1])
    t.add_stage_perf(StagePerf("s", 0.1, 1, 1))
    assert [p.stage for p in t._stage_perf] == ["s"]
