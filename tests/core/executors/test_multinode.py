"""Curator on a real two-node Ray cluster: a head (1 CPU) and a second node (1 CPU, 2 fake GPUs
of a known type) started with ``ray start`` on this machine, in a temp dir of their own, and
stopped by process id at the end of the module (never ``ray stop``: it would stop every cluster
on the machine). Drivers run as subprocesses in a directory of their own, like a user's script,
and join the cluster through ``RAY_ADDRESS`` or ``address=``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.ray

RAY = str(Path(sys.executable).with_name("ray"))
# Ray's token authentication on (its default for new clusters), with a token of the test's own
ENV = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0", "RAY_AUTH_MODE": "token",
       "RAY_AUTH_TOKEN": secrets.token_hex(32)}
for _key in ("RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH"):
    ENV.pop(_key, None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    """``{"address", "temp_dir"}`` of a running two-node cluster."""
    from curator.cluster.ray_client import end_processes, session_processes

    temp_dir = tempfile.mkdtemp(prefix="cmn", dir="/tmp")  # short: Ray's socket paths
    port = _free_port()
    common = ["--num-cpus=1", "--object-store-memory=80000000", f"--temp-dir={temp_dir}",
              "--disable-usage-stats"]
    try:
        for args in (["--head", f"--port={port}", "--include-dashboard=false"],
                     [f"--address=127.0.0.1:{port}", "--num-gpus=2",
                      '--resources={"node2": 1, "accelerator_type:T4": 1}']):
            proc = subprocess.run([RAY, "start", *args, *common], cwd=temp_dir, env=ENV,
                                  capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr[-3000:]
        yield {"address": f"127.0.0.1:{port}", "temp_dir": temp_dir}
    finally:
        end_processes(session_processes(temp_dir))
        assert not session_processes(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _driver(code: str, cwd: Path, **env: str) -> dict:
    """Run ``code`` as a driver script in ``cwd``; returns the JSON of its last output line."""
    cwd.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd,
                          env={**ENV, **env}, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_join_via_ray_address_and_address_and_stop_leaves_the_cluster_up(cluster, tmp_path):
    info = _driver(f"""
        import json
        import ray
        from curator import RayClient

        out = []
        for kwargs in ({{}}, {{"address": "{cluster["address"]}"}}):
            client = RayClient(timeout_s=120, **kwargs).start()
            out.append({{"how": client.how, "owns": client.owns_cluster,
                        "nodes": len([n for n in ray.nodes() if n["Alive"]]),
                        "gpus": client.cluster_resources().get("GPU")}})
            client.stop()
            out[-1]["connected_after_stop"] = ray.is_initialized()
        print(json.dumps(out))
    """, tmp_path, RAY_ADDRESS=cluster["address"])
    assert [i["how"] for i in info] == ["env", "explicit"]
    assert all(not i["owns"] and i["nodes"] == 2 and i["gpus"] == 2 for i in info)
    # the second join found the cluster up: stop() after the first only disconnected
    assert not any(i["connected_after_stop"] for i in info)
    from curator.cluster.ray_client import session_processes

    names = {p.name() for p in session_processes(cluster["temp_dir"])}
    assert {"gcs_server", "raylet"} <= names  # still running after both drivers left


def test_a_join_without_the_token_names_authentication_as_the_cause(cluster, tmp_path):
    env = {k: v for k, v in ENV.items() if not k.startswith("RAY_AUTH")}
    env["HOME"] = str(tmp_path)  # no ~/.ray/auth_token either
    code = textwrap.dedent(f"""
        from curator import RayClient
        from curator.cluster.ray_client import RayStartError
        try:
            RayClient(address="{cluster["address"]}", timeout_s=120).start()
        except RayStartError as exc:
            print(exc)
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "token authentication" in proc.stdout and "RAY_AUTH_TOKEN" in proc.stdout, proc.stdout
    assert "check the address" not in proc.stdout.lower()


PIPELINE = """
    import json, os, time, warnings
    from dataclasses import dataclass
    import pyarrow as pa
    from curator import Pipeline, ProcessingStage, Resources
    from curator_text import JsonlReader, JsonlWriter

    @dataclass
    class NodeTag(ProcessingStage):
        '''Adds the Ray node id and the GPUs Ray assigned to the worker to every row.'''
        name: str = "NodeTag"

        def process(self, task):
            import ray
            node, gpu = "local", 0.0
            if ray.is_initialized():
                ctx = ray.get_runtime_context()
                node, gpu = ctx.get_node_id(), ctx.get_assigned_resources().get("GPU", 0.0)
            table = task.to_pyarrow()
            n = table.num_rows
            table = table.append_column("node", pa.array([node] * n))
            return task.derive(table.append_column("gpu", pa.array([gpu] * n, pa.float64())))

    @dataclass
    class NodeTagTogether(NodeTag):
        '''NodeTag whose workers wait in setup() until two of them are up, so that a pool of
        two cannot finish all work on its first worker before the second one starts.'''
        name: str = "NodeTagTogether"

        def setup(self, worker_metadata=None):
            import time, uuid
            os.makedirs(BARRIER, exist_ok=True)
            open(os.path.join(BARRIER, uuid.uuid4().hex), "w").close()
            for _ in range(1200):
                if len(os.listdir(BARRIER)) >= 2:
                    return
                time.sleep(0.1)

        def process(self, task):
            # the driver hands a ready actor its next batch only when it asks: slow batches
            # keep the first actor busy until the second one's driver thread has asked too
            time.sleep(0.5)
            return super().process(task)

    BARRIER = os.path.abspath("barrier")
    os.makedirs("in", exist_ok=True)
    for i in range(PARTS):
        with open(f"in/part{i}.jsonl", "w") as f:
            for j in range(3):
                f.write(json.dumps({"id": f"{i}-{j}", "text": "word " * (i + j + 1)}) + "\\n")

    def run(executor, out, tag=None):
        tag = tag or NodeTag()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = Pipeline("p", stages=[JsonlReader(file_paths="in/"), tag,
                                    JsonlWriter(path=out)]).run(executor)
        files = sorted(p for t in result for p in t.data)
        rows = [json.loads(line) for p in files for line in open(p)]
        return {"ok": result.ok, "files": files, "rows": rows,
                "warnings": [str(w.message) for w in caught if "node-local" in str(w.message)]}
"""


def test_pipeline_runs_on_both_nodes_with_relative_paths_and_local_records(cluster, tmp_path):
    info = _driver(PIPELINE.replace("PARTS", "8") + """
    import ray
    from curator import RayActorPoolExecutor, RayDataExecutor
    res = {"local": run("local", "out_local/"), "ray_data": run(RayDataExecutor(), "out_data/")}
    ray.init()  # joins via RAY_ADDRESS, to name the nodes
    # Ray Data's workers release their CPUs asynchronously: let them go before the pool places
    # its actors, else the head still looks full and both actors land on node2.
    for _ in range(600):
        if ray.available_resources().get("CPU", 0) >= ray.cluster_resources().get("CPU", 0):
            break
        time.sleep(0.1)
    res["actor_pool"] = run(RayActorPoolExecutor(num_workers=2), "out_pool/", NodeTagTogether())
    res["nodes"] = {n["NodeID"]: "node2" if "node2" in n["Resources"] else "head"
                    for n in ray.nodes() if n["Alive"]}
    print(json.dumps(res))
    """, tmp_path / "driver", RAY_ADDRESS=cluster["address"])
    drv = tmp_path / "driver"
    local = sorted((r["id"], r["text"]) for r in info["local"]["rows"])
    assert len(local) == 24
    for kind in ("ray_data", "actor_pool"):
        run = info[kind]
        assert run["ok"]
        # relative paths mean the driver's directory, not each worker's (the nodes run in the
        # cluster's temp dir): every file the result lists exists there
        assert run["files"] and all(f.startswith(str(drv / f"out_{kind.split('_')[-1]}"))
                                    for f in run["files"])
        assert not list(Path(cluster["temp_dir"]).glob("out_*"))
        assert sorted((r["id"], r["text"]) for r in run["rows"]) == local  # same records
        used = {info["nodes"][r["node"]] for r in run["rows"]}
        assert used == {"head", "node2"}, kind  # the work spread over both nodes
        # the writer's local directory on a 2-node cluster is called out
        assert any("JsonlWriter.path" in w for w in run["warnings"]), run["warnings"]
    assert not info["local"]["warnings"]


def test_gpu_memory_sized_from_the_cluster_and_ignore_head_node(cluster, tmp_path):
    info = _driver(PIPELINE.replace("PARTS", "4") + """
    import ray
    from curator import RayActorPoolExecutor, RayDataExecutor
    gpu_tag = NodeTag().with_(resources=Resources(cpus=0.25, gpu_memory_gb=4))
    res = {
        # node2's GPUs are T4s (16 GB): 4 GB is a quarter of one
        "data_t4": run(RayDataExecutor(), "out_gpu/", gpu_tag),
        # the override sizes unknown or fake GPUs: 4 GB of 8 is a half
        "pool_override": run(RayActorPoolExecutor(gpu_memory_gb_per_gpu=8), "out_gpu2/", gpu_tag),
        # CPU work kept off the head node
        "pool_no_head": run(RayActorPoolExecutor(ignore_head_node=True),
                            "out_nohead/"),
    }
    ray.init()
    res["nodes"] = {n["NodeID"]: "node2" if "node2" in n["Resources"] else "head"
                    for n in ray.nodes() if n["Alive"]}
    print(json.dumps(res))
    """, tmp_path, RAY_ADDRESS=cluster["address"])
    nodes = info["nodes"]
    for key, share in (("data_t4", 0.25), ("pool_override", 0.5)):
        rows = info[key]["rows"]
        assert info[key]["ok"] and len(rows) == 12
        assert {r["gpu"] for r in rows} == {share}, key  # not a whole GPU per worker
        assert {nodes[r["node"]] for r in rows} == {"node2"}  # the only node with GPUs
    rows = info["pool_no_head"]["rows"]
    assert len(rows) == 12 and {nodes[r["node"]] for r in rows} == {"node2"}


def test_ray_data_ignore_head_node_keeps_work_on_the_other_nodes(cluster, tmp_path):
    info = _driver(PIPELINE.replace("PARTS", "4") + """
    import ray
    from curator import RayDataExecutor
    from curator.cluster.ray_client import RayClient
    res = {"config": run(RayDataExecutor(config={"ignore_head_node": True}), "out_cfg/"),
           "kwarg": run(RayDataExecutor(ignore_head_node=True), "out_kw/")}
    ray.init()
    res["usable"] = RayDataExecutor(config={"ignore_head_node": True}).usable_resources({})
    res["nodes"] = {n["NodeID"]: "node2" if "node2" in n["Resources"] else "head"
                    for n in ray.nodes() if n["Alive"]}
    print(json.dumps(res))
    """, tmp_path, RAY_ADDRESS=cluster["address"])
    for key in ("config", "kwarg"):
        rows = info[key]["rows"]
        assert info[key]["ok"] and len(rows) == 12
        assert {info["nodes"][r["node"]] for r in rows} == {"node2"}, key
    assert info["usable"]["CPU"] == 1.0 and info["usable"]["GPU"] == 2.0  # node2's only
