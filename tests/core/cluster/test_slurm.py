"""SlurmRayClient against a real single-node Slurm (Debian's slurm-wlm: slurmctld + slurmd on
localhost, started and stopped by this module by process id), running examples/slurm/ with
``sbatch --wait`` and a two-node Ray cluster from ``salloc``. Skipped, with the reason, where
Slurm is not installed (``apt-get install -y slurm-wlm``) or cannot be started here. Slurm runs
without authentication where it still has the auth/none plugin, else with a munged of our own
(``CURATOR_TEST_SLURM_AUTH=munge`` forces that).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from curator.cluster.ray_client import RayStartError
from curator.cluster.slurm import SlurmRayClient, slurm_nodes

ROOT = Path(__file__).resolve().parents[3]

CONF = """\
ClusterName=curatortest
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
{auth}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=localhost CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _has_auth_none() -> bool:
    """Whether this Slurm has the auth/none plugin (gone from newer releases)."""
    return any(glob.glob(pattern) for pattern in (
        "/usr/lib/*/slurm-wlm/auth_none.so", "/usr/lib*/slurm/auth_none.so",
        "/usr/local/lib*/slurm/auth_none.so"))


def _start_munge(d: Path) -> tuple[str, subprocess.Popen]:
    """A munged of our own (generated key, socket under ``d``): the slurm.conf auth lines and
    the process, or a skip when munge is missing or will not start."""
    if not shutil.which("munged") or not shutil.which("mungekey"):
        pytest.skip("this Slurm has no auth/none plugin and munge is not installed")
    m = d / "munge"
    m.mkdir(mode=0o700)
    key, sock = m / "munge.key", m / "munge.sock"
    subprocess.run(["mungekey", "-c", "-f", "-k", str(key)], check=True, capture_output=True)
    proc = subprocess.Popen(
        ["munged", "-F", "-f", f"--key-file={key}", f"--socket={sock}",
         f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}",
         f"--seed-file={m / 'munged.seed'}"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 20
    while not sock.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    if not sock.exists():
        _stop(proc)
        log = (m / "munged.log").read_text()[-1500:] if (m / "munged.log").exists() else ""
        pytest.skip(f"munged did not start here:\n{log}")
    return (f"AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={sock}"), proc


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A single-node Slurm cluster on localhost; yields the environment that reaches it."""
    if not shutil.which("slurmctld") or not shutil.which("slurmd"):
        pytest.skip("Slurm is not installed (slurmctld/slurmd not on PATH): "
                    "apt-get install -y slurm-wlm")
    if os.geteuid() != 0:
        pytest.skip("slurmd must run as root to launch jobs; run the tests as root")
    d = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (d / sub).mkdir()
    conf = d / "slurm.conf"
    env = {**os.environ, "SLURM_CONF": str(conf)}
    for key in [k for k in env if k.startswith("SLURM_") and k != "SLURM_CONF"] + ["RAY_ADDRESS"]:
        env.pop(key, None)
    procs: list[subprocess.Popen] = []
    try:
        if _has_auth_none() and os.environ.get("CURATOR_TEST_SLURM_AUTH") != "munge":
            auth = "AuthType=auth/none\nCredType=cred/none"
        else:  # newer Slurm: authenticate with a munged of our own
            auth, munged = _start_munge(d)
            procs.append(munged)
        conf.write_text(CONF.format(d=d, ctld_port=_free_port(), d_port=_free_port(),
                                    auth=auth, cpus=min(os.cpu_count() or 1, 2)))
        for cmd, extra in (("slurmctld", []), ("slurmd", ["-N", "localhost"])):
            procs.append(subprocess.Popen([cmd, "-D", *extra, "-f", str(conf)], env=env,
                                          stdout=open(d / f"{cmd}.out", "w"),
                                          stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline and state != "idle":
            if any(p.poll() is not None for p in procs):
                break
            state = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True,
                                   text=True, check=False).stdout.strip()
            time.sleep(0.5)
        if state != "idle":
            logs = "\n".join(f"{p.name}: {p.read_text()[-1500:]}"
                             for p in sorted(d.glob("*.log")) + sorted(d.glob("*.out")))
            pytest.skip(f"Slurm could not be started here (node state {state!r}):\n{logs}")
        yield env
    finally:
        if len(procs) > 1:
            subprocess.run(["scancel", "--full", "--partition=debug"], env=env,
                           capture_output=True, check=False)
        for p in reversed(procs):
            _stop(p)


@pytest.mark.ray
@pytest.mark.slow
def test_sbatch_example_runs_pipeline_on_slurm_ray_cluster(slurm, tmp_path):
    work = tmp_path / "work"
    out = tmp_path / "job.out"
    env = {**slurm, "CURATOR_PYTHON": sys.executable, "CURATOR_WORKDIR": str(work),
           "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0", "CURATOR_PROGRESS": "0"}
    done = subprocess.run(
        ["sbatch", "--wait", "--nodes=1", "--cpus-per-task=2", f"--output={out}",
         "examples/slurm/run.sbatch", "--docs", "80"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=420, check=False)
    log = out.read_text() if out.exists() else ""
    assert done.returncode == 0, f"{done.stdout}{done.stderr}\n{log[-5000:]}"
    job = done.stdout.split()[-1]
    summary = json.loads(log.strip().splitlines()[-1])
    # the job ran inside the allocation, on a Ray cluster SlurmRayClient started there
    assert summary["job"] == job
    assert summary["nodes"] == 1 and summary["address"]
    assert summary["ok"] is True
    assert summary["ray_running_after"] is False  # stop() shut down what start() started
    texts = [json.loads(line)["text"] for f in sorted((work / "raw").glob("*.jsonl"))
             for line in f.read_text().splitlines()]
    kept = [t for t in texts if len(t.split()) >= 3]
    assert 0 < len(kept) < len(texts)
    assert summary["kept"] == len(kept)
    written = [json.loads(line)["text"] for f in (work / "out").rglob("*.jsonl")
               for line in f.read_text().splitlines()]
    assert sorted(written) == sorted(kept)
    assert summary["rejected"] == 0  # no malformed line; filtered documents are just dropped
    assert sorted(summary["files"]) == sorted(map(str, (work / "out").rglob("*.jsonl")))


def test_worker_step_command():
    client = SlurmRayClient(num_cpus=8, num_gpus=2, srun_args=["--mpi=none"])
    client.address = "10.0.0.1:6379"
    cmd = client.worker_command(["node02", "node03"])
    assert cmd[:7] == ["srun", "--overlap", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1",
                       "--nodelist=node02,node03", "--mpi=none"]
    assert cmd[7].endswith("ray") and cmd[8] == "start"
    assert {"--address=10.0.0.1:6379", "--block", "--num-cpus=8", "--num-gpus=2"} <= set(cmd)


def test_resources_default_to_the_allocation(monkeypatch):
    monkeypatch.setenv("SLURM_CPUS_ON_NODE", "6")
    monkeypatch.setenv("SLURM_GPUS_ON_NODE", "1")
    client = SlurmRayClient()
    assert (client.num_cpus, client.num_gpus) == (6, 1)
    assert SlurmRayClient(num_cpus=3).num_cpus == 3


def test_node_lists_expand():
    assert slurm_nodes("gpu[01-03,07],cpu5") == ["gpu01", "gpu02", "gpu03", "gpu07", "cpu5"]


def test_script_launched_on_several_nodes_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("SLURM_STEP_NUM_NODES", "2")
    with pytest.raises(RayStartError, match="run it once"):
        SlurmRayClient().start()


SALLOC_DRIVER = """
import json, os, subprocess
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy as Pin
from curator import SlurmRayClient

@ray.remote(num_cpus=0)
def where():
    return ray.get_runtime_context().get_node_id()

def steps():
    return subprocess.run(["squeue", "-h", "-s", "-j", os.environ["SLURM_JOB_ID"], "-o", "%i"],
                          capture_output=True, text=True).stdout.split()

with SlurmRayClient(object_store_memory=100 * 1024**2, worker_connect_timeout_s=240) as client:
    nodes = sorted(n["NodeID"] for n in ray.nodes() if n.get("Alive"))
    ran = sorted(ray.get([where.options(scheduling_strategy=Pin(n, soft=False)).remote()
                          for n in nodes]))
    out = {"address": client.address, "env": os.environ.get("RAY_ADDRESS"), "nodes": nodes,
           "ran": ran, "slurm_nodes": client.nodes, "steps": steps()}
out.update(env_after=os.environ.get("RAY_ADDRESS"), running_after=ray.is_initialized(),
           steps_after=steps())
print(json.dumps(out))
"""


@pytest.mark.ray
@pytest.mark.slow
def test_salloc_driver_gets_a_ray_worker_on_the_allocated_node_via_srun(slurm):
    """Under salloc the driver runs outside the allocation's node ("localhost" in slurm.conf),
    so SlurmRayClient starts its head here and a Ray worker on the allocated node with srun:
    a real two-node Ray cluster, every node runs a task, and stop() ends the srun step."""
    if socket.gethostname() == "localhost":
        pytest.skip("this machine's host name is the Slurm node's name (localhost)")
    env = {**slurm, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    done = subprocess.run(["salloc", "--nodes=1", "--cpus-per-task=2", sys.executable, "-c",
                           SALLOC_DRIVER], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=420, check=False)
    assert done.returncode == 0, done.stderr[-5000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["slurm_nodes"] == ["localhost"]
    assert len(got["nodes"]) == 2 and got["ran"] == got["nodes"]  # head here + worker via srun
    assert got["env"] == got["address"]  # exposed to executors and child processes
    assert got["env_after"] is None and got["running_after"] is False
    def worker_steps(steps: list[str]) -> list[str]:
        return [s for s in steps if "." in s and not s.endswith((".extern", ".interactive"))]

    assert len(worker_steps(got["steps"])) == 1, got["steps"]  # one srun step for the workers
    assert worker_steps(got["steps_after"]) == [], got["steps_after"]  # stop() ended it
