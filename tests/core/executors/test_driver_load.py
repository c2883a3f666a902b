"""The driver does not carry data: with ``collect_outputs=False`` a run's result holds counts and
output paths, not the output tasks, on every executor; and the actor pool keeps several batches
in flight per actor without losing its dead-actor handling."""

from __future__ import annotations

import os
import warnings

import pytest
from curator import LocalExecutor, Pipeline

from tests.core.executors.stages import (
    DieOnce,
    JsonWriter,
    SplitInTwo,
    Square,
    expected_records,
    make_partitions,
    read_records,
)


def _pipeline(out_dir) -> Pipeline:
    return Pipeline("driver", stages=[Square(), SplitInTwo(), JsonWriter(str(out_dir))])


def _executor(kind: str, **config):
    if kind == "local":
        return LocalExecutor(num_workers=2, **config)
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    return (RayDataExecutor if kind == "ray_data" else RayActorPoolExecutor)(config)


@pytest.mark.parametrize("kind", ["local", pytest.param("ray_data", marks=pytest.mark.ray),
                                  pytest.param("ray_actor_pool", marks=pytest.mark.ray)])
def test_outputs_counted_not_collected(kind, tmp_path, request):
    if kind != "local":
        request.getfixturevalue("ray_cluster")
    parts = make_partitions(7)
    written = sorted(str(tmp_path / "out" / f"part{i:03d}_{h}.jsonl") for i in range(7)
                     for h in (0, 1))
    lean = _pipeline(tmp_path / "out").run(_executor(kind, collect_outputs=False),
                                           initial_tasks=parts, summary=False)
    assert lean.ok and list(lean) == []  # no output task reached the driver's result
    assert lean.num_outputs == 14 and sorted(lean.output_paths) == written
    assert read_records(str(tmp_path / "out")) == expected_records(parts)  # nothing lost
    assert lean.stats.stages[-1].tasks_out == 14
    if kind != "local":  # collection by default is covered by every other Ray test
        return
    full = _pipeline(tmp_path / "out2").run(_executor(kind), initial_tasks=make_partitions(7),
                                            summary=False)
    assert len(full) == full.num_outputs == 14  # small runs: outputs collected by default
    assert sorted(full.output_paths) == sorted(p for t in full for p in t.data)


def test_collect_outputs_is_a_known_config_key():
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # known keys: no "unknown config keys" warning
        for cls in (LocalExecutor, RayDataExecutor):
            cls(collect_outputs=False)
        RayActorPoolExecutor(collect_outputs=False, batches_in_flight=3)
    with pytest.warns(UserWarning, match=r"\['collect_output'\] are ignored"):
        LocalExecutor(collect_output=False)


@pytest.mark.ray
def test_actor_pool_in_flight_batches_survive_a_dead_actor(ray_cluster, tmp_path):
    """Batches queued behind the one that kills its actor are re-sent, none lost or doubled."""
    from curator.executors.ray_actor_pool import RayActorPoolExecutor

    markers = tmp_path / "markers"
    markers.mkdir()
    parts = make_partitions(8)
    pipe = Pipeline("inflight", stages=[Square(), DieOnce(str(markers), victim="part001"),
                                        SplitInTwo(), JsonWriter(str(tmp_path / "out"))])
    result = pipe.run(RayActorPoolExecutor({"num_workers": 1, "batches_in_flight": 3,
                                            "fuse_stages": False}),
                      initial_tasks=parts, summary=False)
    assert result.ok and os.listdir(markers) == ["died-part001"]
    assert read_records(str(tmp_path / "out")) == expected_records(parts)
    stats = {s.name: s for s in result.stats.stages}
    assert stats["DieOnce"].worker_restarts == 1 and stats["DieOnce"].tasks_out == 8


def test_ray_data_blocks_hold_many_tasks_only_when_there_are_many():
    from curator.executors.ray_common import tasks_per_block

    assert tasks_per_block(32, {"CPU": 2.0}) == 1  # small runs: every task its own block
    assert tasks_per_block(33, {"CPU": 2.0}) == 2
    assert tasks_per_block(100_000, {"CPU": 2.0}) == 64  # 1,563 blocks, not 100,000
    assert tasks_per_block(100_000, {"CPU": 2.0}, 5) == 5


@pytest.mark.ray
def test_ray_data_chunked_blocks_keep_failures_per_task(ray_cluster, tmp_path):
    """Four tasks per block: a failing task is rejected alone, its block mates are written once,
    and every partition is checkpointed (a resume has nothing left to do)."""
    from curator.executors.ray_data import RayDataExecutor

    from tests.core.executors.stages import RaiseOn

    parts = make_partitions(10)
    pipe = Pipeline("blocks", stages=[Square(), RaiseOn(victim="part005"), SplitInTwo(),
                                      JsonWriter(str(tmp_path / "out"))])
    ckpt = str(tmp_path / "ckpt")
    result = pipe.run(RayDataExecutor(tasks_per_block=4), initial_tasks=parts,
                      checkpoint_dir=ckpt, max_retries=0, summary=False, raise_on_failure=False)
    kept = [p for p in parts if p.task_id != "part005"]
    assert read_records(str(tmp_path / "out")) == expected_records(kept)
    assert [str(f).split(":")[0] for f in result.failed] == ["RaiseOn/part005"]
    again = pipe.run(RayDataExecutor(tasks_per_block=4), initial_tasks=make_partitions(10),
                     checkpoint_dir=ckpt, max_retries=0, summary=False,
                     raise_on_failure=False)
    assert again.stats.stages[0].skipped == 9  # only the failed partition is redone
    assert [str(f).split(":")[0] for f in again.failed] == ["RaiseOn/part005"]
