"""Stage fusion: which stages share a worker, and a chain run inside one worker."""

from __future__ import annotations

from curator import Resources
from curator.executors.fusion import ChainJob, StageGroup, group_stages, run_chain

from tests.core.executors.stages import RaiseOn, SplitInTwo, Square, make_partitions


def test_equal_resources_fuse_and_different_ones_split():
    stages = [Square(), SplitInTwo(), Square().with_(name="gpu", resources=Resources(gpus=0.5)),
              Square().with_(name="after")]
    groups = group_stages(stages)
    assert [list(g.indices) for g in groups] == [[0, 1], [2], [3]]
    assert [len(g.stages) for g in group_stages(stages, fuse=False)] == [1, 1, 1, 1]
    assert list(group_stages(stages[1:], first=1)[0].indices) == [1]


def test_a_stage_gathering_bigger_batches_starts_its_own_group():
    stages = [Square(), SplitInTwo(), Square().with_(name="dedup", batch_size=64),
              Square().with_(name="after", batch_size=64), Square().with_(name="write")]
    assert [[s.name for s in g.stages] for g in group_stages(stages)] == [
        ["Square", "SplitInTwo"], ["dedup", "after"], ["write"]]


def test_group_workers_are_the_largest_fixed_count():
    group = group_stages([Square().with_(num_workers=2), SplitInTwo().with_(num_workers=3),
                          Square().with_(name="s2")])[0]
    assert group.num_workers(lambda s: None) == 3
    assert group.num_workers(lambda s: 5 if s.name == "s2" else None) == 5
    assert group_stages([Square()])[0].num_workers(lambda s: None) is None


def test_chain_runs_every_stage_and_reports_each_batch():
    stages = [Square(), SplitInTwo().with_(batch_size=2), RaiseOn(victim="part001")]
    for s in stages:
        s.setup()
    group = StageGroup(0, stages)  # a batch stage inside a chain gets what the chain has
    reports = list(run_chain(group, make_partitions(2, per=4), max_retries=1, worker="w"))
    by_stage = [[o.index for o in reports].count(k) for k in range(3)]
    assert by_stage == [2, 1, 4]  # one per task; SplitInTwo: one batch of 2; 4 halves
    failed = [o for o in reports if o.failed is not None]
    assert [o.failed_task.task_id for o in failed] == ["part001_0", "part001_1"]
    assert [[tid for _, tid in o.consumed] for o in failed] == [["part001_0"], ["part001_1"]]
    assert all(o.retries == 1 for o in failed)
    outputs = [t for o in reports if o.index == 2 for t in o.call.outputs]
    assert sorted(x for t in outputs for x in t.data) == [0, 1, 4, 9]


def test_chain_sends_stubs_of_final_outputs_when_not_collecting(tmp_path):
    """collect_outputs=False: the last stage's outputs leave the worker as path-only stubs
    (counts and paths), not as the tasks themselves."""
    from curator.tasks import FileGroupTask

    from tests.core.executors.stages import JsonWriter

    def parts():
        tasks = make_partitions(2, per=4)
        for t in tasks:
            t.metadata["source"] = t.task_id  # the real outputs carry it, the stubs do not
        return tasks

    group = StageGroup(0, [Square(), SplitInTwo(), JsonWriter(str(tmp_path))])
    reports, passed_on = ChainJob(group, max_retries=0, n_stages=3, collect=False)(parts(), "w")
    final = [t for r in reports if r.index == 2 for t in r.call.outputs]
    assert len(final) == 4 and passed_on == []
    assert all(type(t) is FileGroupTask and "source" not in t.metadata for t in final)
    assert sorted(p for t in final for p in t.data) == sorted(
        str(tmp_path / f"part{i:03d}_{h}.jsonl") for i in range(2) for h in (0, 1))
    full = ChainJob(group, max_retries=0, n_stages=3)(parts(), "w")[0]
    assert sorted(t.metadata["source"] for r in full if r.index == 2
                  for t in r.call.outputs) == ["part000"] * 2 + ["part001"] * 2
