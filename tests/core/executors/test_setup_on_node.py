"""``setup_on_node`` runs once on every node that runs the stage (NeMo Curator's ``NodeInfo`` /
``WorkerMetadata``), once per run however many source windows, on every executor; an unknown
executor config key is a warning that names it. The cluster test starts a two-node localhost
cluster as :mod:`tests.core.executors.test_multinode` does (one per module, stopped by process
id), with Ray's dashboard on, which Xenna needs."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest
from curator import NodeInfo, Pipeline, ProcessingStage, Task, WorkerMetadata
from curator.executors.local import LocalExecutor

from tests.core.executors.test_multinode import ENV, RAY, _driver, _free_port


@pytest.fixture(scope="module")
def cluster():
    """``{"address"}`` of a running two-node cluster (1 CPU each; the second has the custom
    resource ``node2``), its head with a dashboard for Xenna's use of Ray's state API."""
    from curator.cluster.ray_client import end_processes, session_processes

    temp_dir = tempfile.mkdtemp(prefix="cson", dir="/tmp")  # short: Ray's socket paths
    port = _free_port()
    env = {**ENV, "RAY_MAX_LIMIT_FROM_API_SERVER": "40000",
           "RAY_MAX_LIMIT_FROM_DATA_SOURCE": "40000"}
    common = ["--num-cpus=1", "--object-store-memory=80000000", f"--temp-dir={temp_dir}",
              "--disable-usage-stats"]
    try:
        for args in (["--head", f"--port={port}", "--include-dashboard=true",
                      "--dashboard-host=127.0.0.1", f"--dashboard-port={_free_port()}"],
                     [f"--address=127.0.0.1:{port}", '--resources={"node2": 1}']):
            proc = subprocess.run([RAY, "start", *args, *common], cwd=temp_dir, env=env,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr[-3000:]
        yield {"address": f"127.0.0.1:{port}"}
    finally:
        end_processes(session_processes(temp_dir))
        assert not session_processes(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)


@dataclass
class Chunks(ProcessingStage):
    """Source: 6 tasks listed 2 at a time (several source windows)."""

    name: str = "Chunks"

    @property
    def is_source(self) -> bool:
        return True

    def process(self, task: Task) -> list[Task]:
        return [t for chunk in self.process_stream(task) for t in chunk]

    def process_stream(self, task: Task) -> Iterator[list[Task]]:
        for k in range(3):
            yield [Task(f"p{k}{j}", "x", [k, j]) for j in range(2)]


@dataclass
class NodeSetupLog(ProcessingStage):
    """Records every ``setup_on_node`` call it gets."""

    name: str = "NodeSetupLog"
    calls: ClassVar[list[tuple[object, object]]] = []
    lock: ClassVar[threading.Lock] = threading.Lock()

    def setup_on_node(self, node_info: NodeInfo | None = None,
                      worker_metadata: WorkerMetadata | None = None) -> None:
        with NodeSetupLog.lock:
            NodeSetupLog.calls.append((node_info, worker_metadata))

    def process(self, task: Task) -> Task:
        return task


def test_local_setup_on_node_once_per_run_with_node_info():
    NodeSetupLog.calls.clear()
    result = Pipeline("p", stages=[Chunks(), NodeSetupLog()]).run(LocalExecutor(num_workers=3))
    assert result.ok and len(result) == 6
    assert NodeSetupLog.calls == [(NodeInfo(node_id="local"), WorkerMetadata())]
    Pipeline("p", stages=[Chunks(), NodeSetupLog()]).run(LocalExecutor())
    assert len(NodeSetupLog.calls) == 2  # once per run, not once for the process


@pytest.mark.parametrize("name", ["LocalExecutor", "RayDataExecutor", "RayActorPoolExecutor"])
def test_unknown_config_key_is_a_warning_naming_it(name):
    import curator

    with pytest.warns(UserWarning, match=r"unknown config keys \['num_wrokers'\] are ignored"):
        ex = getattr(curator, name)(config={"num_wrokers": 2, "num_workers": 1})
    assert ex.config["num_workers"] == 1


CLUSTER_RUN = """
    import json, os, threading
    from dataclasses import dataclass
    import ray
    from curator import (NodeInfo, Pipeline, ProcessingStage, RayActorPoolExecutor,
                         RayDataExecutor, Task, WorkerMetadata, XennaExecutor)

    LOGS = os.path.abspath("logs")
    os.makedirs(LOGS, exist_ok=True)

    def note(log, node_info, worker_metadata):
        assert isinstance(node_info, NodeInfo), type(node_info)
        assert isinstance(worker_metadata, WorkerMetadata), type(worker_metadata)
        with open(os.path.join(LOGS, log), "a") as f:
            f.write(node_info.node_id + "\\n")

    @dataclass
    class Chunks(ProcessingStage):
        log: str = ""
        name: str = "Chunks"

        @property
        def is_source(self):
            return True

        def setup_on_node(self, node_info=None, worker_metadata=None):
            note(self.log, node_info, worker_metadata)

        def process(self, task):
            return [t for c in self.process_stream(task) for t in c]

        def process_stream(self, task):
            for k in range(3):
                yield [Task(f"p{k}{j}", "x", [k, j]) for j in range(2)]

    @dataclass
    class NodeSetup(ProcessingStage):
        log: str = ""
        name: str = "NodeSetup"

        def setup_on_node(self, node_info=None, worker_metadata=None):
            note(self.log, node_info, worker_metadata)

        def process(self, task):
            return task

    ray.init()  # joins via RAY_ADDRESS; the executors use this connection
    res = {"nodes": {n["NodeID"]: "node2" if "node2" in n["Resources"] else "head"
                     for n in ray.nodes() if n["Alive"]},
           "driver": ray.get_runtime_context().get_node_id(), "runs": {}}
    executors = {"ray_data": lambda: RayDataExecutor(source_window=2),
                 "actor_pool": lambda: RayActorPoolExecutor(source_window=2)}
    if XENNA:
        executors["xenna"] = lambda: XennaExecutor(source_window=2,
                                                   cpu_allocation_percentage=1.0)
    for kind, make in executors.items():
        result = Pipeline("p", stages=[Chunks(log=f"{kind}.source"),
                                       NodeSetup(log=f"{kind}.stage")]).run(make())
        res["runs"][kind] = {"ok": result.ok, "n": len(result)}
        for part in ("source", "stage"):
            path = os.path.join(LOGS, f"{kind}.{part}")
            res["runs"][kind][part] = open(path).read().split() if os.path.exists(path) else []
    print(json.dumps(res))
"""


@pytest.mark.ray
def test_setup_on_node_once_on_each_node_of_a_two_node_cluster(cluster, tmp_path):
    xenna = importlib.util.find_spec("cosmos_xenna") is not None
    info = _driver(CLUSTER_RUN.replace("XENNA", str(xenna)), tmp_path,
                   RAY_ADDRESS=cluster["address"])
    nodes = info["nodes"]
    assert sorted(nodes.values()) == ["head", "node2"]
    kinds = ["ray_data", "actor_pool"] + (["xenna"] if xenna else [])
    assert sorted(info["runs"]) == sorted(kinds)
    for kind in kinds:
        run = info["runs"][kind]
        assert run["ok"] and run["n"] == 6, (kind, run)
        # exactly one line per node, not one per source window (there were 3) nor per worker
        assert sorted(run["stage"]) == sorted(nodes), (kind, run["stage"])
        # the source runs on the driver: set up once there
        assert run["source"] == [info["driver"]], (kind, run["source"])
    if not xenna:
        pytest.skip("cosmos-xenna is not installed: Xenna's setup_on_node not checked")
