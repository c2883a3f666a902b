"""SlurmRayClient: a Ray cluster over the nodes of the Slurm allocation the driver runs in."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

from curator.cluster.ray_client import RayClient, RayStartError, alive_nodes

__all__ = ["SlurmRayClient", "slurm_nodes"]


def slurm_nodes(nodelist: str) -> list[str]:
    """The host names of a Slurm node list (``node[01-03,07],gpu1``): ``scontrol show
    hostnames`` when it is there, else a parser of the usual compact forms."""
    scontrol = shutil.which("scontrol")
    if scontrol:
        done = subprocess.run([scontrol, "show", "hostnames", nodelist], capture_output=True,
                              text=True, check=False, timeout=30)
        names = done.stdout.split()
        if done.returncode == 0 and names:
            return names
    nodes: list[str] = []
    for token in re.split(r",(?![^\[]*\])", nodelist):
        m = re.fullmatch(r"(.*?)\[(.+)\](.*)", token)
        if not m:
            nodes += [token] if token else []
            continue
        prefix, ranges, suffix = m.groups()
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            for n in range(int(lo), int(hi or lo) + 1):
                nodes.append(f"{prefix}{str(n).zfill(len(lo))}{suffix}")
    return nodes


class SlurmRayClient(RayClient):
    """Starts a Ray cluster over the Slurm allocation this process runs in, and stops it.

    Run the driver script once, from the ``sbatch`` script (it runs on the allocation's first
    node), or under ``salloc`` (then the driver's machine need not be one of the allocated
    nodes). :meth:`start` starts the Ray head here (in this process, as :class:`RayClient`
    does), then one ``ray start --address=<head> --block`` per allocated node other than this
    one, launched with ``srun`` as one job step, and waits until every node has joined.
    :attr:`address` (also exported as ``RAY_ADDRESS`` while the cluster runs, so executors and
    child processes join it) is the head's GCS address. :meth:`stop` shuts the head down and
    ends the ``srun`` step (by its process id), so nothing is left behind. Outside Slurm (no
    ``SLURM_JOB_ID``) it is a plain :class:`RayClient`; with ``address`` or ``RAY_ADDRESS``
    set it joins that cluster and starts nothing.

    Parameters:
        num_cpus, num_gpus: CPUs and GPUs Ray uses per node (default: ``SLURM_CPUS_ON_NODE``
            and ``SLURM_GPUS_ON_NODE`` of the allocation, else the node's own).
        worker_connect_timeout_s: how long to wait for every node to join (NeMo Curator's
            name); past it the cluster is torn down and :class:`TimeoutError` raised.
        srun_args: extra ``srun`` arguments for the worker step (e.g. ``["--mpi=none"]``).
        address, object_store_memory, timeout_s, include_dashboard, dashboard, ray_init_kwargs:
            as for
            :class:`RayClient`.
    """

    def __init__(self, address: str | None = None, num_cpus: int | None = None,
                 num_gpus: int | None = None, object_store_memory: int | None = None,
                 timeout_s: float = 120.0, include_dashboard: bool = True,
                 worker_connect_timeout_s: float = 300.0, srun_args: list[str] | None = None,
                 dashboard: bool = True, **ray_init_kwargs: Any) -> None:
        if num_cpus is None and os.environ.get("SLURM_CPUS_ON_NODE"):
            num_cpus = int(os.environ["SLURM_CPUS_ON_NODE"])
        if num_gpus is None and os.environ.get("SLURM_GPUS_ON_NODE"):
            num_gpus = int(os.environ["SLURM_GPUS_ON_NODE"])
        super().__init__(address=address, num_cpus=num_cpus, num_gpus=num_gpus,
                         object_store_memory=object_store_memory, timeout_s=timeout_s,
                         include_dashboard=include_dashboard, dashboard=dashboard,
                         **ray_init_kwargs)
        self.worker_connect_timeout_s = worker_connect_timeout_s
        self.srun_args = list(srun_args or [])
        self.nodes: list[str] = []
        self._workers: subprocess.Popen | None = None
        self._workers_log: Any = None
        self._old_ray_address: str | None = None

    def start(self) -> SlurmRayClient:
        """Start the head here and a Ray worker on every other node of the allocation (see the
        class docstring); returns ``self``."""
        job = os.environ.get("SLURM_JOB_ID")
        if not job or self._address is not None or os.environ.get("RAY_ADDRESS"):
            super().start()  # outside Slurm, or joining a given cluster
            return self
        if int(os.environ.get("SLURM_STEP_NUM_NODES", "1")) > 1:
            raise RayStartError(
                "SlurmRayClient: this script runs in a job step on several nodes (srun); run it "
                "once, straight from the sbatch script (`python pipeline.py`): SlurmRayClient "
                "starts the Ray workers on the other nodes itself")
        self.nodes = slurm_nodes(os.environ.get("SLURM_JOB_NODELIST", socket.gethostname()))
        # the batch script runs on a node of the allocation; under salloc the driver may run
        # outside it (a login node), and then every allocated node gets a Ray worker
        here = os.environ.get("SLURMD_NODENAME") or socket.gethostname()
        others = [n for n in self.nodes if n != here]
        super().start()
        self._old_ray_address = os.environ.get("RAY_ADDRESS")
        os.environ["RAY_ADDRESS"] = self.address or ""
        if others:
            try:
                expected = len(alive_nodes()) + len(others)
                self._start_workers(others)
                self._wait_for_nodes(expected)
            except BaseException:
                self.stop()
                raise
        return self

    def stop(self, timeout_s: float = 15.0) -> None:
        """Shut the head down and end the worker step; a joined cluster keeps running."""
        try:
            super().stop(timeout_s)
        finally:
            self._stop_workers(timeout_s)
            if self.nodes:
                if self._old_ray_address is None:
                    os.environ.pop("RAY_ADDRESS", None)
                else:
                    os.environ["RAY_ADDRESS"] = self._old_ray_address
                self.nodes = []

    # -- workers ---------------------------------------------------------------------------------
    def worker_command(self, others: list[str]) -> list[str]:
        """The ``srun`` command that starts one Ray worker on each of ``others``."""
        ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
        if not os.access(ray_bin, os.X_OK):
            ray_bin = shutil.which("ray") or "ray"
        cmd = ["srun", "--overlap", f"--nodes={len(others)}", f"--ntasks={len(others)}",
               "--ntasks-per-node=1", f"--nodelist={','.join(others)}", *self.srun_args,
               ray_bin, "start", f"--address={self.address}", "--block",
               "--disable-usage-stats"]
        for flag, value in (("--num-cpus", self.num_cpus), ("--num-gpus", self.num_gpus),
                            ("--object-store-memory", self.object_store_memory)):
            if value is not None:
                cmd.append(f"{flag}={value}")
        return cmd

    def _start_workers(self, others: list[str]) -> None:
        if not shutil.which("srun"):
            raise RayStartError("SlurmRayClient: `srun` is not on PATH, so Ray workers cannot "
                                f"be started on the other nodes ({others})")
        self._workers_log = tempfile.TemporaryFile(mode="w+")
        self._workers = subprocess.Popen(self.worker_command(others), stdout=self._workers_log,
                                         stderr=subprocess.STDOUT, start_new_session=True)

    def _wait_for_nodes(self, expected: int) -> None:
        deadline = time.monotonic() + self.worker_connect_timeout_s
        while True:
            alive = len(alive_nodes())
            if alive >= expected:
                return
            if self._workers is not None and self._workers.poll() is not None:
                raise RayStartError(f"SlurmRayClient: the srun step starting the Ray workers "
                                    f"exited ({self._workers.returncode}) with {alive}/{expected}"
                                    f" nodes joined:\n{self._log_tail()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"SlurmRayClient: only {alive}/{expected} nodes joined the Ray "
                                   f"cluster within {self.worker_connect_timeout_s:.0f}s "
                                   f"(worker_connect_timeout_s); the cluster was torn down. "
                                   f"srun output:\n{self._log_tail()}")
            time.sleep(1.0)

    def _log_tail(self) -> str:
        if self._workers_log is None:
            return ""
        self._workers_log.seek(0)
        return self._workers_log.read()[-3000:]

    def _stop_workers(self, timeout_s: float) -> None:
        """End the worker step: SIGTERM to srun (it forwards it to every ``ray start --block``,
        which stops its node), then SIGKILL to its process group if it lingers."""
        proc, self._workers = self._workers, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if self._workers_log is not None:
            self._workers_log.close()
            self._workers_log = None
