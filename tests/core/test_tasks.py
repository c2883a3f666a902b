from __future__ import annotations

from curator import EMPTY_TASK, EmptyTask, FileGroupTask, StagePerf, Task, stable_id


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
