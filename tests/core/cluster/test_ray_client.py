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
    from curator.cluster.ray_client import RayClient, _ray_descendants

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
def test_workers_run_this_interpreter_even_when_ray_was_imported_first():
    """Ray reads RAY_ENABLE_UV_RUN_RUNTIME_ENV when it is imported: a script that imports ray
    before starting a cluster still gets workers on its own interpreter, not a copy of the
    project run by `uv` (which rebuilds every compiled kernel for each new cluster)."""
    code = textwrap.dedent("""
        import json, sys
        import ray
        from curator.cluster.ray_client import RayClient

        with RayClient(num_cpus=1, object_store_memory=100 * 1024**2, timeout_s=120,
                       dashboard=False):
            worker = ray.get(ray.remote(lambda: sys.executable).remote(), timeout=60)
        print(json.dumps({"worker": worker, "driver": sys.executable}))
    """)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ENABLE_UV_RUN_RUNTIME_ENV"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    assert info["worker"] == info["driver"]


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
        import curator.cluster.ray_client
        print(json.dumps({"ray": "ray" in sys.modules, "names": sorted(names), "entry": entry.obj.__name__,
                          "cls": curator.RayDataExecutor.__name__}))
    """)
    info = _run(code)
    assert info["ray"] is False
    assert info["cls"] == "RayDataExecutor"
    assert {"local", "ray_data", "ray_actor_pool"} <= set(info["names"])
    assert info["entry"] == "RayDataExecutor"


def test_discovery_order_follows_rays_own_tools(monkeypatch):
    from curator.cluster.ray_client import resolve_address

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert resolve_address("10.0.0.1:6379") == ("explicit", "10.0.0.1:6379")
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.2:6379")  # also what `ray job submit` sets
    assert resolve_address("10.0.0.1:6379") == ("explicit", "10.0.0.1:6379")  # explicit wins
    assert resolve_address(None) == ("env", "10.0.0.2:6379")
    assert resolve_address("auto") == ("env", "10.0.0.2:6379")
    monkeypatch.delenv("RAY_ADDRESS")
    import ray

    if not ray.is_initialized():  # (a Ray test earlier in the session may have connected)
        assert resolve_address("auto") == ("auto", "auto")
        assert resolve_address(None) == ("start", None)
    assert resolve_address("local")[0] in ("start", "initialized")


def test_cli_address_reaches_the_client_with_the_specs_executor_settings(tmp_path):
    """`curator run --executor ray_data --address A` joins A, keeping the spec's settings of
    another Ray executor (here its ray_timeout_s); nothing listens at A, so the run fails with
    an error that names A instead of starting a cluster of its own."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text('{"id": 1, "text": "hello"}\n')
    spec = tmp_path / "spec.yaml"
    spec.write_text(textwrap.dedent("""
        name: join
        executor: {name: ray_actor_pool, config: {ray_timeout_s: 3}}
        stages:
          - stage: JsonlReader
            file_paths: in/
          - stage: JsonlWriter
            path: out/
    """))
    env = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    env.pop("RAY_ADDRESS", None)
    proc = subprocess.run([sys.executable, "-m", "curator", "run", str(spec), "--executor",
                           "ray_data", "--address", f"127.0.0.1:{port}"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert f"127.0.0.1:{port}" in proc.stderr and "within 3s" in proc.stderr, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr


ORPHAN_DRIVER = textwrap.dedent("""
    import json, sys, time
    from curator.cluster.ray_client import RayClient, _ray_descendants

    client = RayClient(num_cpus=1, object_store_memory=80 * 1024**2, timeout_s=200,
                       _temp_dir=sys.argv[1]).start()
    import ray
    session = ray._private.worker._global_node.get_session_dir_path()
    procs = [[p.pid, p.create_time()] for p in _ray_descendants() if p.pid != client._watchdog.pid]
    print(json.dumps({"session": session, "procs": procs, "watchdog": client._watchdog.pid}),
          flush=True)
    time.sleep(600)
""")


def _killed_driver(temp_dir: str, kill_watchdog: bool) -> dict:
    """Start a driver that starts a cluster in ``temp_dir``, then kill -9 it (and its watchdog);
    returns what the driver printed, with ``left``: how many of its Ray processes were alive
    just after."""
    import time

    from curator.cluster.ray_client import session_processes

    env = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    env.pop("RAY_ADDRESS", None)
    driver = subprocess.Popen([sys.executable, "-c", ORPHAN_DRIVER, temp_dir], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        info = json.loads(driver.stdout.readline())
        assert len(info["procs"]) >= 3
        if kill_watchdog:
            os.kill(info["watchdog"], 9)
        driver.kill()  # SIGKILL: no atexit, no ray.shutdown()
        driver.wait(30)
    finally:
        if driver.poll() is None:
            driver.kill()
    time.sleep(1)
    info["left"] = len(session_processes(info["session"], info["procs"]))
    return info


def _gone(info: dict) -> bool:
    import psutil
    from curator.cluster.ray_client import session_processes

    return not session_processes(info["session"], info["procs"]) and not any(
        psutil.pid_exists(pid) and abs(psutil.Process(pid).create_time() - t) < 1e-3
        for pid, t in info["procs"])


@pytest.mark.ray
def test_a_killed_driver_leaves_no_process_of_the_cluster_it_started():
    """kill -9 of a driver that started a cluster: its watchdog ends every process of that
    cluster; and when the watchdog is killed too, the next RayClient start does. Found by the
    record the driver left in Ray's temp dir (the test uses a temp dir of its own, so no other
    cluster on the machine is touched)."""
    import shutil
    import tempfile
    import time

    from curator.cluster.ray_client import end_processes, session_processes

    temp_dir = tempfile.mkdtemp(prefix="cor", dir="/tmp")  # our own: short socket paths
    try:
        info = _killed_driver(temp_dir, kill_watchdog=False)
        for _ in range(600):  # the watchdog's bounded wait (at most a minute)
            if _gone(info):
                break
            time.sleep(0.1)
        assert _gone(info), f"{info['left']} of {len(info['procs'])} still alive"

        info = _killed_driver(temp_dir, kill_watchdog=True)
        print(f"alive 1s after kill -9 of driver and watchdog: {info['left']} of "
              f"{len(info['procs'])}")
        info2 = _run(textwrap.dedent(f"""
            import json
            from curator.cluster.ray_client import RayClient
            with RayClient(num_cpus=1, object_store_memory=80 * 1024**2, timeout_s=200,
                           _temp_dir={temp_dir!r}) as client:
                alive = client.is_running
            print(json.dumps({{"alive": alive}}))
        """))
        assert info2["alive"]
        assert _gone(info)  # the next start ended the orphans
    finally:
        end_processes(session_processes(temp_dir))
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.mark.ray
def test_started_cluster_serves_rays_state_api_as_xenna_needs(ray_cluster):
    """RayClient starts Ray's dashboard by default (NeMo Curator's defaults: port 8265 on
    127.0.0.1), with the state API limit Xenna lists actors with."""
    from curator import RayClient
    from curator.cluster.ray_client import STATE_API_ENV
    from ray.util.state import list_actors

    client = RayClient()
    assert (client.include_dashboard, client.ray_dashboard_port,
            client.ray_dashboard_host) == (True, 8265, "127.0.0.1")
    assert ray_cluster.dashboard_url and ray_cluster.dashboard_url.startswith("127.0.0.1:")
    limit = int(STATE_API_ENV["RAY_MAX_LIMIT_FROM_API_SERVER"])
    assert limit > 10_000  # more than Ray's default, which the dashboard would refuse
    assert isinstance(list_actors(address=ray_cluster.address, limit=limit, timeout=60), list)


DASHBOARD_PORTS = textwrap.dedent("""
    import json, socket
    from curator.cluster.ray_client import RayClient, RayStartError
    from ray.util.state import list_actors

    held = []
    def hold(port):
        s = socket.socket()
        s.bind(("127.0.0.1", port))
        s.listen()
        held.append(s)
        return s.getsockname()[1]

    taken = hold(0)
    try:
        RayClient(ray_dashboard_port=taken, timeout_s=120).start()
        explicit = None
    except RayStartError as exc:
        explicit = str(exc)
    try:
        hold(8265)  # the default port is busy (by us, or by another cluster already)
    except OSError:
        pass
    with RayClient(num_cpus=1, object_store_memory=80 * 1024**2, timeout_s=200) as client:
        url = client.dashboard_url
        actors = len(list_actors(address=client.address, limit=40000, timeout=60))
    print(json.dumps({"taken": taken, "explicit": explicit, "url": url, "actors": actors}))
""")


@pytest.mark.ray
def test_dashboard_port_taken():
    """A dashboard port given explicitly that is in use is an error naming the parameter
    (before anything starts); when the default port 8265 is in use, the next free one serves."""
    info = _run(DASHBOARD_PORTS)
    assert f"ray_dashboard_port={info['taken']} is already in use" in info["explicit"]
    host, port = info["url"].rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) != 8265
    assert info["actors"] >= 0


def test_nemo_ray_start_options_are_mapped_or_refused():
    from curator import RayClient

    assert RayClient(ray_temp_dir="/tmp/curator_rt")._temp_dir() == "/tmp/curator_rt"
    with pytest.raises(TypeError, match=r"ray_port, ray_metrics_port .*`ray start`"):
        RayClient(ray_port=6380, ray_metrics_port=8080)


def test_without_rays_dashboard_packages_a_cluster_starts_without_it_and_says_so():
    """curator-core needs only ray[data]; where ray[default]'s packages are missing (here:
    aiohttp made unimportable) RayClient() starts without the dashboard, with a warning that
    names the fix, instead of failing."""
    code = textwrap.dedent("""
        import json, sys, warnings
        sys.modules["aiohttp"] = None  # as if ray[default] were not installed
        from curator.cluster.ray_client import _dashboard_installed
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ok = _dashboard_installed()
        print(json.dumps({"ok": ok, "warnings": [str(w.message) for w in caught]}))
    """)
    info = _run(code)
    assert info["ok"] is False
    assert any("ray[default]" in w and "dashboard=False" in w for w in info["warnings"])
    assert _run(code.replace('sys.modules["aiohttp"] = None', "pass"))["ok"] is True
