"""XennaExecutor (cosmos-xenna): the same records as the local executor in streaming and batch
mode, rejected records and failed tasks in the sink, the checkpoint, and its config keys.

Xenna lists actors through Ray's dashboard (the session ``ray_cluster`` runs one, as every
``RayClient`` by default). The Xenna runs happen in one subprocess (``python -m
tests.core.executors.test_xenna OUT``) that starts its own small cluster with
:class:`XennaRayClient` (both modes from a clean cluster) and stops it; the test kills that
process group by id if it overruns. Xenna keeps ``floor(CPUs x 0.95)`` CPUs for stages, so on a
2-CPU machine the stages share one CPU (their shares are scaled down).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from curator import Pipeline, ProcessingStage, Resources, Task
from curator.run.tracker import CheckpointStore
from curator.task_files import load_task

from tests.core.executors.stages import (
    DieOnce,
    JsonWriter,
    Numbers,
    RaiseOn,
    SplitInTwo,
    Square,
    StreamedNumbers,
    make_partitions,
    read_records,
)

ROOT = Path(__file__).resolve().parents[3]
MODES = ("streaming", "batch")
QUIET = {"logging_interval": 5, "autoscale_interval_s": 5, "log_worker_allocation_layout": False,
         **{k: "NONE" for k in ("actor_pool_verbosity_level", "monitoring_verbosity_level",
                                "autoscaler_verbosity_level", "executor_verbosity_level")}}


@dataclass
class RejectOdd(ProcessingStage):
    """Keeps even records; sends each odd one to the rejected sink (rejected by design)."""

    name: str = "RejectOdd"

    def process(self, task: Task) -> Task:
        for x in task.data:
            if x % 2:
                self.reject(task, "odd", record={"x": x})
        return task.derive([x for x in task.data if x % 2 == 0])


def pipeline(out: str, source: ProcessingStage | None = None) -> Pipeline:
    # two groups of fused stages (different resources), so two Xenna stages
    half = Resources(cpus=0.5)
    return Pipeline("xenna", stages=[source or Numbers(n=6), Square(), SplitInTwo(),
                                     RejectOdd().with_(resources=half),
                                     RaiseOn().with_(resources=half),
                                     JsonWriter(out).with_(resources=half)])


def summarize(result, out: str, rejected: str, ckpt: str) -> dict:
    """What the tests compare between executors (JSON-friendly)."""
    return {"records": read_records(out), "outputs": sorted(t.task_id for t in result),
            "num_outputs": result.num_outputs,
            "stats": {s.name: [s.tasks_in, s.tasks_out, s.items_in, s.items_out, s.rejected,
                               s.failed_tasks] for s in result.stats.stages},
            "workers": {s.name: s.workers for s in result.stats.stages},
            "ok": result.ok, "failed": sorted(f.task_id for f in result.failed),
            "rejected_files": sorted(str(p.relative_to(rejected))
                                     for p in Path(rejected).rglob("*.jsonl")),
            "done": sorted(CheckpointStore(ckpt).done()), "executor": result.stats.executor}


def run_one(executor, base: Path, source: ProcessingStage | None = None) -> dict:
    out, rej, ckpt = (str(base / d) for d in ("out", "rejected", "ckpt"))
    result = pipeline(out, source).run(executor, rejected_dir=rej, checkpoint_dir=ckpt,
                                       summary=False, raise_on_failure=False)
    return json.loads(json.dumps(summarize(result, out, rej, ckpt)))  # as the job reports it


@pytest.fixture(scope="module")
def xenna_runs(tmp_path_factory) -> dict:
    """Both modes on Xenna, run by one subprocess on its own cluster (see module docstring)."""
    pytest.importorskip("cosmos_xenna", reason="cosmos-xenna not installed: curator-core[xenna]")
    base = tmp_path_factory.mktemp("xenna")
    env = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0", "CURATOR_PROGRESS": "0"}
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.Popen([sys.executable, "-m", "tests.core.executors.test_xenna", str(base)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=420)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"the Xenna job did not finish in 420s:\n{stderr[-4000:]}")
    assert proc.returncode == 0, f"the Xenna job failed:\n{stderr[-6000:]}"
    return json.loads(stdout.strip().splitlines()[-1])


@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_same_records_and_stats_as_local(xenna_runs, mode, tmp_path):
    from curator import LocalExecutor

    local = run_one(LocalExecutor(num_workers=2), tmp_path)
    got = xenna_runs[mode]
    assert got["executor"] == "xenna"
    assert local["records"] and got["records"] == local["records"]
    assert got["outputs"] == local["outputs"]
    assert got["stats"] == local["stats"]
    assert all(n >= 1 for n in got["workers"].values()), got["workers"]


@pytest.mark.ray
@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_rejected_records_failed_tasks_and_checkpoint(xenna_runs, mode):
    got = xenna_runs[mode]
    # RaiseOn fails both halves of part002 for good: kept whole, the run is not ok
    assert got["ok"] is False
    assert got["failed"] == ["part002_0", "part002_1"]
    assert "RaiseOn/part002_0.failed.jsonl" in got["rejected_files"]
    # odd squares were rejected by design, one file per task that had one
    assert got["stats"]["RejectOdd"][4] == 9
    assert any(f.startswith("RejectOdd/") for f in got["rejected_files"])
    # every partition but the failed one is checkpointed as done
    assert got["done"] == sorted(CheckpointStore.key(f"part{i:03d}") for i in range(6) if i != 2)


@pytest.mark.ray
@pytest.mark.slow
def test_source_listed_window_by_window(xenna_runs):
    """A lazy source with ``source_window=3``: two Xenna pipelines of 3 partitions, the same
    records, statistics, failures and checkpoint as one of 6."""
    windows, whole = xenna_runs["windows"], xenna_runs["streaming"]
    for key in ("records", "outputs", "stats", "failed", "done", "rejected_files"):
        assert windows[key] == whole[key], key


@pytest.mark.ray
@pytest.mark.slow
def test_outputs_counted_not_collected(xenna_runs):
    """collect_outputs=False: the workers send counts and paths, the result holds no task."""
    lean, full = xenna_runs["lean"], xenna_runs["streaming"]
    assert lean["outputs"] == [] and lean["records"] == full["records"]
    assert lean["num_outputs"] == full["num_outputs"] == len(full["outputs"]) > 0


def fault_runs(base: Path) -> dict:
    """The dead-worker policy on Xenna (which stops the whole pipeline when a worker dies): a
    worker killed once mid-task, and a task that kills every worker it runs on."""
    def run(name: str, stages: list[ProcessingStage], n: int) -> dict:
        out, rej, ckpt = (str(base / name / d) for d in ("out", "rejected", "ckpt"))
        result = Pipeline(name, stages=stages + [JsonWriter(out)]).run(
            XennaExecutor(config=QUIET), initial_tasks=make_partitions(n), rejected_dir=rej,
            checkpoint_dir=ckpt, max_retries=1, summary=False, raise_on_failure=False)
        return {"records": read_records(out), "ok": result.ok,
                "failed": [str(f).split(":")[0] for f in result.failed],
                "counts": result.rejected.counts,
                "stats": {s.name: {"tasks_in": s.tasks_in, "retries": s.retries,
                                   "restarts": s.worker_restarts, "failed": s.failed_tasks}
                          for s in result.stats.stages},
                "done": sorted(CheckpointStore(ckpt).done())}

    from curator.executors.xenna import XennaExecutor

    markers = base / "markers"
    markers.mkdir(parents=True)
    once = run("once", [Square(), DieOnce(str(markers), victim="part001", worker_mode="thread"),
                        RaiseOn(victim="part002")], 5)
    once["markers"] = sorted(os.listdir(markers))
    killer = DieOnce(str(markers), victim="part001", worker_mode="thread")
    killer.process = lambda task: os._exit(3) if task.task_id == "part001" else task
    every = run("every", [Square(), killer], 3)
    kept = base / "every" / "rejected" / "Square" / "part001.failed.task.json"
    every["kept"] = load_task(str(kept)).data
    return {"once": once, "every": every}


@pytest.mark.ray
@pytest.mark.slow
def test_dead_worker_partitions_redone_each_record_once(xenna_runs):
    """A worker killed once mid-task stops Xenna's pipeline: the unfinished partitions are
    redone, every record written once, nothing booked twice, the failing task rejected once."""
    got = xenna_runs["faults"]["once"]
    assert got["markers"] == ["died-part001"]  # the first attempt really died
    expected = [[f"part{i:03d}", x * x] for i in (0, 1, 3, 4) for x in range(3 * i, 3 * i + 3)]
    assert got["records"] == expected
    assert got["counts"] == {"RaiseOn": 1} and got["failed"] == ["RaiseOn/part002"]
    stats = got["stats"]
    assert stats["Square"]["tasks_in"] == 5 and stats["JsonWriter"]["tasks_in"] == 4
    assert stats["RaiseOn"]["retries"] == 1 and stats["RaiseOn"]["failed"] == 1
    assert sum(s["restarts"] for s in stats.values()) == 1
    assert got["done"] == sorted(CheckpointStore.key(f"part{i:03d}") for i in (0, 1, 3, 4))


@pytest.mark.ray
@pytest.mark.slow
def test_task_that_kills_every_worker_is_kept_whole(xenna_runs):
    """The same policy as every executor: run alone, retried max_retries times, then kept whole
    (as it entered its group) in the rejected sink; the others written once; not ok."""
    got = xenna_runs["faults"]["every"]
    squares = [[f"part{i:03d}", x * x] for i in (0, 2) for x in range(3 * i, 3 * i + 3)]
    assert got["records"] == squares  # each once
    assert got["ok"] is False and got["failed"] == ["Square/part001"]
    assert got["kept"] == [3, 4, 5]
    # the pipeline's death, then the task alone twice (one retry), each death counted once
    assert got["stats"]["Square"] == {"tasks_in": 3, "retries": 1, "restarts": 3, "failed": 1}
    assert got["done"] == sorted(CheckpointStore.key(f"part{i:03d}") for i in (0, 2))


def test_config_keys_are_checked():
    from curator.executors.xenna import XennaExecutor

    ex = XennaExecutor(config={"execution_mode": "batch", "logging_interval": 10,
                               "autoscale_interval_s": 30, "cpu_allocation_percentage": 0.9})
    assert ex.setting("execution_mode") == "batch"
    assert XennaExecutor().setting("execution_mode") == "streaming"  # NeMo's default
    # as on NeMo Curator, an unknown key is ignored, with a warning that names it
    with pytest.warns(UserWarning, match=r"keys \['execution_mod'\] are ignored.*execution_mode"):
        ex = XennaExecutor(config={"execution_mod": "batch"})
    assert ex.setting("execution_mode") == "streaming"
    with pytest.raises(ValueError, match="execution_mode='fast'.*streaming"):
        XennaExecutor(config={"execution_mode": "fast"})
    with pytest.raises(ValueError, match="cpu_allocation_percentage"):
        XennaExecutor(config={"cpu_allocation_percentage": 1.5})
    with pytest.raises(ValueError, match="monitoring_verbosity_level"):
        XennaExecutor(config={"monitoring_verbosity_level": "LOUD"})
    # NeMo's docs pass it: accepted, and the warning says where failed tasks go instead
    with pytest.warns(UserWarning, match="ignore_failures has no effect.*rejected sink"):
        XennaExecutor(config={"ignore_failures": True})
    with pytest.raises(ValueError, match="ignore_head_node"):
        XennaExecutor(ignore_head_node=True)


def test_many_tiny_partitions_reach_xenna_several_per_call():
    """Each Xenna call costs ~18 ms of scheduling: beyond 16 tasks per CPU, tasks go several per
    call (as Ray Data's blocks); a stage that gathers bigger batches keeps its own size."""
    pytest.importorskip("cosmos_xenna", reason="cosmos-xenna not installed: curator-core[xenna]")
    from curator.executors.fusion import StageGroup
    from curator.executors.ray_common import tasks_per_block
    from curator.executors.xenna import XennaExecutor, _stage_class, _xenna

    def batch(group: StageGroup, n_tasks: int) -> int:
        per_call = tasks_per_block(n_tasks, {"CPU": 2.0})
        return _stage_class(group, _xenna())(group, 1, 0, 1.0, 0.0, None, True,
                                             per_call).stage_batch_size

    one = StageGroup(0, [Square()])
    assert batch(one, 6) == 1 and batch(one, 10_000) == 64
    gather = StageGroup(0, [Square().with_(batch_size=128)])
    assert batch(gather, 10_000) == 128
    XennaExecutor(tasks_per_block=8)  # a known config key


def test_registered_by_name():
    from curator import XennaExecutor
    from curator.pipeline import make_executor

    ex = make_executor("xenna", {"execution_mode": "batch"})
    assert isinstance(ex, XennaExecutor) and ex.setting("execution_mode") == "batch"


CLUSTER_ERRORS = """
import json, sys
from curator import Resources
from curator.cluster.ray_client import RayClient, RayStartError
from curator.executors.xenna import XennaExecutor
from tests.core.executors.test_xenna import pipeline

def run(out, gpu=False):
    p = pipeline(out)
    if gpu:
        p.stages[1] = p.stages[1].with_(resources=Resources(cpus=0.5, gpus=1))
    try:
        p.run(XennaExecutor(), summary=False)
    except RayStartError as exc:
        return str(exc)

with RayClient(num_cpus=1, object_store_memory=80 * 1024**2, dashboard=False):
    no_dashboard = run(sys.argv[1])
with RayClient(num_cpus=2, num_gpus=1, object_store_memory=80 * 1024**2):  # a fake GPU
    gpu = run(sys.argv[1], gpu=True)
print(json.dumps({"no_dashboard": no_dashboard, "gpu": gpu}))
"""


@pytest.mark.ray
def test_clusters_xenna_cannot_use_are_a_clear_error(tmp_path):
    """Run in a subprocess (the session cluster suits Xenna): a cluster started with
    RayClient(dashboard=False) serves no state API, so Xenna could not list its actors;
    a cluster whose workers hide GPUs (Ray's default) cannot run Xenna's GPU workers. Both stop
    the run before any data is read, saying how to fix it."""
    pytest.importorskip("cosmos_xenna", reason="cosmos-xenna not installed: curator-core[xenna]")
    env = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    for key in ("RAY_ADDRESS", "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES"):
        env.pop(key, None)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", CLUSTER_ERRORS, str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    errors = json.loads(proc.stdout.strip().splitlines()[-1])
    assert errors["no_dashboard"] and "runs no Ray dashboard" in errors["no_dashboard"], errors
    assert "RayClient() does by default" in errors["no_dashboard"]
    assert "--include-dashboard=true" in errors["no_dashboard"]
    assert errors["gpu"] and "RAY_EXPERIMENTAL_NOSET_CUDA_VISIBLE_DEVICES=1" in errors["gpu"]
    assert "XennaRayClient()" in errors["gpu"]
    assert not out.exists()


if __name__ == "__main__":  # the Xenna job of the xenna_runs fixture: OUT_DIR
    from curator.executors.xenna import XennaExecutor, XennaRayClient

    base = Path(sys.argv[1])
    results = {}
    with XennaRayClient(num_cpus=2, object_store_memory=200 * 1024**2, timeout_s=120):
        for run_mode in MODES:
            # batch mode: one worker per stage (each pool starts after the last one stopped)
            fixed = {"num_workers": 1} if run_mode == "batch" else {}
            results[run_mode] = run_one(
                XennaExecutor(config={"execution_mode": run_mode, **QUIET, **fixed}),
                base / run_mode)
        results["lean"] = run_one(XennaExecutor(config={**QUIET, "collect_outputs": False}),
                                  base / "lean")
        results["windows"] = run_one(XennaExecutor(config={**QUIET, "source_window": 3}),
                                     base / "windows",
                                     StreamedNumbers(n=6, chunk=3).with_(name="Numbers"))
        results["faults"] = fault_runs(base / "faults")
    print(json.dumps(results))
