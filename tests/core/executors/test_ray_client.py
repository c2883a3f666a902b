"""RayClient starts a real local cluster, runs work on it and leaves no Ray process behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import json
    from curator.executors.ray_client import RayClient, _ray_descendants

    with RayClient(num_cpus=2, object_store_memory=100 * 1024**2, timeout_s=120) as client:
        import ray

        during = len(_ray_descendants())
        cpus = client.cluster_resources()["CPU"]
        address = client.address
        node_ip = ray.nodes()[0]["NodeManagerAddress"]

        @ray.remote
        def double(x):
            return 2 * x

        answer = ray.get([double.remote(i) for i in range(4)], timeout=60)
    print(json.dumps({"during": during, "after": len(_ray_descendants()), "cpus": cpus,
                      "answer": answer, "address": address, "node_ip": node_ip, "running": client.is_running}))
""")


def _run(code: str) -> dict:
    env = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.ray
def test_local_cluster_runs_tasks_and_stop_leaves_no_process():
    info = _run(SCRIPT)
    assert info["answer"] == [0, 2, 4, 6]
    assert info["cpus"] == 2
    # clients are given the address the node really bound (Ray rewrites 127.0.0.1 to the IP)
    assert info["address"].rsplit(":", 1)[0] == info["node_ip"]
    assert info["during"] >= 2  # gcs_server, raylet, workers ...
    assert info["after"] == 0
    assert info["running"] is False


@pytest.mark.ray
def test_client_reuses_a_running_connection_and_leaves_it_running(ray_cluster):
    import ray
    from curator import RayClient

    with RayClient(num_cpus=1) as client:
        assert client.owns_cluster is False
    assert ray.is_initialized()  # the session cluster is still up
    assert ray_cluster.address == ray.get_runtime_context().gcs_address


def test_importing_curator_and_plugins_does_not_import_ray():
    code = textwrap.dedent("""
        import json, sys
        import curator
        from curator.plugins import get_registry
        reg = get_registry()
        names = {e.name for e in reg.list(kind="executor")}
        entry = reg.get("ray_data", kind="executor")
        import curator.executors.ray_data, curator.executors.ray_actor_pool
        import curator.executors.ray_client
        print(json.dumps({"ray": "ray" in sys.modules, "names": sorted(names), "entry": entry.obj.__name__,
                          "cls": curator.RayDataExecutor.__name__}))
    """)
    info = _run(code)
    assert info["ray"] is False
    assert info["cls"] == "RayDataExecutor"
    assert {"local", "ray_data", "ray_actor_pool"} <= set(info["names"])
    assert info["entry"] == "RayDataExecutor"
