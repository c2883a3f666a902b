"""The same pipeline gives the same output and statistics on every executor."""

from __future__ import annotations

import pytest
from curator import Pipeline

from tests.core.executors.stages import (
    JsonWriter,
    Numbers,
    SplitInTwo,
    Square,
    make_executor,
    read_records,
)

EXECUTORS = ["local", "local_fused_thread", "local_fused_process",
             pytest.param("ray_data", marks=pytest.mark.ray),
             pytest.param("ray_actor_pool", marks=pytest.mark.ray)]

EXPECTED = sorted((f"part{i:03d}_{half}", (3 * i + k) ** 2)
                  for i in range(6) for k, half in ((0, 0), (1, 1), (2, 1)))


@pytest.fixture
def executor(request, ray_cluster_if_needed):
    return make_executor(request.param)


@pytest.fixture
def ray_cluster_if_needed(request):
    if request.node.get_closest_marker("ray"):
        return request.getfixturevalue("ray_cluster")
    return None


@pytest.mark.parametrize("executor", EXECUTORS, indirect=True)
def test_same_records_and_stats_on_every_executor(executor, tmp_path):
    out = tmp_path / "out"
    pipe = Pipeline("parity", stages=[Numbers(n=6), Square(), SplitInTwo(), JsonWriter(str(out))])
    result = pipe.run(executor, summary=False)

    assert read_records(str(out)) == EXPECTED
    assert sorted(t.task_id for t in result) == sorted({r[0] for r in EXPECTED})
    stats = {s.name: (s.tasks_in, s.tasks_out, s.items_in, s.items_out)
             for s in result.stats.stages}
    assert stats == {"Numbers": (1, 6, 0, 18), "Square": (6, 6, 18, 18),
                     "SplitInTwo": (6, 12, 18, 18), "JsonWriter": (12, 12, 18, 12)}
    assert all(s.workers >= 1 for s in result.stats.stages)
    assert result.stats.executor == executor.name
    assert "JsonWriter" in result.summary()


@pytest.mark.parametrize("executor", EXECUTORS, indirect=True)
def test_source_stage_skips_partitions_done_in_checkpoint(executor, tmp_path):
    ckpt, out = tmp_path / "ckpt", tmp_path / "out"
    from curator.run.tracker import CheckpointStore

    store = CheckpointStore(str(ckpt))
    for part in ("part000", "part003"):
        store.mark_done(part)
    pipe = Pipeline("parity", stages=[Numbers(n=6), Square(), SplitInTwo(), JsonWriter(str(out))])
    result = pipe.run(executor, checkpoint_dir=str(ckpt), summary=False)

    assert {r[0][:7] for r in read_records(str(out))} == {"part001", "part002", "part004",
                                                          "part005"}
    assert result.stats.stages[0].skipped == 2
    assert CheckpointStore(str(ckpt)).done() == {f"part{i:03d}" for i in range(6)}
