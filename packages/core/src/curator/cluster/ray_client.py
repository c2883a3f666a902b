"""RayClient: find, join or start a Ray cluster, without ever hanging or leaking processes."""

from __future__ import annotations

import _thread
import contextlib
import json
import os
import socket
import sys
import threading
import time
from itertools import zip_longest
from pathlib import Path
from typing import Any

from curator.errors import CuratorError

__all__ = ["RayClient", "RayStartError", "alive_nodes", "resolve_address", "session_processes",
           "end_processes", "sweep_orphans", "node_slots", "environ", "DEFAULT_DASHBOARD_PORT",
           "DEFAULT_DASHBOARD_HOST", "STATE_API_ENV"]

_RAY_PROCESS_NAMES = ("raylet", "gcs_server", "plasma_store", "ray::", "dashboard", "log_monitor",
                      "runtime_env", "default_worker", "monitor.py")
_OWNED_DIR = "curator_owned"  # under Ray's temp dir: one JSON file per cluster a driver started
DEFAULT_DASHBOARD_PORT = 8265  # NeMo Curator's (and Ray's) defaults
DEFAULT_DASHBOARD_HOST = "127.0.0.1"
# The dashboard of a started cluster serves Ray's state API with Xenna's actor limit (Xenna lists
# every actor through it); the limits are read by the dashboard process at its start.
STATE_API_ENV = {"RAY_MAX_LIMIT_FROM_API_SERVER": "40000",
                 "RAY_MAX_LIMIT_FROM_DATA_SOURCE": "40000"}
# NeMo Curator's RayClient options for its `ray start` subprocess, which ray.init has no use for
_RAY_START_ONLY = ("ray_port", "ray_metrics_port", "ray_client_server_port",
                   "enable_object_spilling", "ray_stdouterr_capture_file")


class RayStartError(CuratorError, RuntimeError):
    """Ray did not start, could not be joined, or did not answer within the timeout."""


def _ray_descendants() -> list[Any]:
    """Ray processes (raylet, GCS, workers, agents) below this process."""
    import psutil

    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            text = proc.name() + " " + " ".join(proc.cmdline()[:3])
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        if any(n in text for n in _RAY_PROCESS_NAMES) or "/ray/" in text:
            found.append(proc)
    return found


def resolve_address(address: str | None) -> tuple[str, str | None]:
    """How :class:`RayClient` finds its cluster, in Ray's own order.

    Returns ``(how, address)`` with ``how`` one of ``"explicit"`` (``address`` given),
    ``"env"`` (``RAY_ADDRESS``, which ``ray job submit`` also sets), ``"initialized"`` (this
    process is already connected), ``"auto"`` (join the running local cluster) or ``"start"``
    (start a new local cluster; also for ``address="local"``).
    """
    if address not in (None, "auto", "local"):
        return "explicit", address
    env = os.environ.get("RAY_ADDRESS", "").strip()
    if env and address != "local":
        return "env", env
    if "ray" in sys.modules and sys.modules["ray"].is_initialized():
        return "initialized", None
    if address == "auto":
        return "auto", "auto"
    return "start", None


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``host:port`` or ``ray://host:port`` (``None`` when not of that form)."""
    rest = address.split("://", 1)[-1].rstrip("/")
    host, _, port = rest.rpartition(":")
    return (host.strip("[]"), int(port)) if host and port.isdigit() else None


def _wait_for_port(host: str, port: int, deadline: float) -> None:
    """Wait until something accepts a TCP connection at ``host:port``, at most until ``deadline``
    (``time.monotonic``); raises :class:`OSError` (the last refusal) when nothing did."""
    while True:
        remaining = deadline - time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=max(0.1, min(2.0, remaining))):
                return
        except OSError:
            if time.monotonic() + 0.25 >= deadline:
                raise
            time.sleep(0.25)


@contextlib.contextmanager
def environ(values: dict[str, str | None]) -> Any:
    """Set environment variables for the block (processes started in it inherit them; ``None``
    unsets one); afterwards each is as before, whatever the block did to it."""
    old = {k: os.environ.get(k) for k in values}
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _require_free_port(host: str, port: int, param: str) -> int:
    """``port`` when nothing is bound to it on ``host`` (``0``: the system picks one); else a
    :class:`RayStartError` naming ``param``."""
    if port:
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError as exc:
                raise RayStartError(f"RayClient: {param}={port} is already in use on {host} "
                                    f"({exc.strerror}); pass a free port, or 0 to let the "
                                    f"system pick one") from exc
    return port


def _dashboard_installed() -> bool:
    """Whether Ray's dashboard can run here (package ``ray[default]``); warns when not."""
    from ray._private.utils import get_dashboard_dependency_error

    error = get_dashboard_dependency_error()
    if error is not None:
        import warnings

        warnings.warn(f"RayClient: starting the cluster without Ray's dashboard, whose packages "
                      f"are not installed ({error}); XennaExecutor cannot run on it. Install "
                      f"'ray[default]' (or 'curator-core[xenna]') for the dashboard, or pass "
                      f"dashboard=False to start without it quietly", UserWarning,
                      stacklevel=4)
    return error is None


def _causes(exc: BaseException) -> str:
    """The last line of each exception under ``exc`` (``ray.init`` wraps the real cause, e.g.
    a refused token, in "Failed to connect to Ray cluster")."""
    lines, seen, cur = [], set(), exc.__cause__ or exc.__context__
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        text = [ln.strip() for ln in str(cur).strip().splitlines() if ln.strip()]
        if text:
            lines.append(f"{type(cur).__name__}: {text[-1]}")
        cur = cur.__cause__ or cur.__context__
    return "; caused by ".join(lines)


def _auth_hint(exc: BaseException | None = None) -> str:
    """What to say when a connect fails on a cluster that may use Ray's token authentication."""
    text = f"{exc!r} {_causes(exc)}".lower() if exc is not None else ""
    if (os.environ.get("RAY_AUTH_MODE", "").lower() == "token"
            or any(w in text for w in ("unauthenticated", "authentication", "auth token"))):
        token = ("RAY_AUTH_TOKEN / RAY_AUTH_TOKEN_PATH is set" if
                 os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")
                 else "no RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH is set")
        return (f"the cluster may require Ray's token authentication (RAY_AUTH_MODE="
                f"{os.environ.get('RAY_AUTH_MODE', '')!r}; {token}): export the cluster's token "
                f"(RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH) and RAY_AUTH_MODE=token")
    return ""


def alive_nodes(ignore_head_node: bool = False) -> list[dict[str, Any]]:
    """``ray.nodes()`` of the connected cluster that are alive (without the head node when
    ``ignore_head_node``; raises ``ValueError`` when that leaves none)."""
    import ray

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    if ignore_head_node:
        nodes = [n for n in nodes if "node:__internal_head__" not in (n.get("Resources") or {})]
        if not nodes:
            raise ValueError("ignore_head_node=True, but the cluster has no node besides its "
                             "head node: add worker nodes or set ignore_head_node=False")
    return nodes


def node_slots(nodes: list[dict[str, Any]], cpus: float, gpus: float = 0.0) -> list[str]:
    """Node ids, one per worker of ``cpus`` CPUs (and ``gpus`` GPUs) each node can hold, taken
    node by node in turn, so that worker ``w`` can be pinned to ``slots[w % len(slots)]`` and
    workers spread over every node that has the resources."""
    per_node = []
    for node in nodes:
        res = node.get("Resources") or {}
        fits = int(res.get("CPU", 0.0) / cpus) if cpus else 1 << 10
        if gpus:
            fits = min(fits, int(res.get("GPU", 0.0) / gpus + 1e-9))
        per_node.append([node["NodeID"]] * fits)
    slots = [n for turn in zip_longest(*per_node) for n in turn if n]
    return slots or [n["NodeID"] for n in nodes]


# -- processes of a cluster, and orphans of dead drivers -----------------------------------------
def session_processes(session_dir: str | os.PathLike[str],
                      pids: list[tuple[int, float]] = ()) -> list[Any]:
    """Live processes of one Ray session (or of every session under a ``--temp-dir``): those
    whose command line or open files name ``session_dir``, plus the recorded ``(pid,
    create_time)`` pairs still alive (Ray's agents retitle themselves ``ray::...``)."""
    import psutil

    key = os.path.abspath(str(session_dir)).rstrip("/")
    if not str(session_dir) or key.count("/") < 2 or key in ("/tmp", "/tmp/ray", "/var/tmp"):
        raise ValueError(f"session_processes: {session_dir!r} is not one session's directory")
    me = os.getpid()
    found: dict[int, Any] = {}
    for pid, created in pids:
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(pid)
            if abs(proc.create_time() - created) < 1e-3:
                found[pid] = proc
    for proc in psutil.process_iter(["cmdline", "uids"]):
        if proc.pid == me or proc.pid in found:
            continue
        try:
            if proc.info["uids"] and proc.info["uids"].real != os.getuid():
                continue
            cmd = " ".join(proc.info["cmdline"] or ()) + " "
            if any(key + c in cmd for c in "/ =\"'") or (cmd.startswith("ray::")
                              and any(f.path.startswith(key + "/") for f in proc.open_files())):
                found[proc.pid] = proc
        except psutil.Error:
            continue
    return list(found.values())


def end_processes(procs: list[Any], timeout_s: float = 10.0) -> None:
    """SIGTERM ``procs``, then SIGKILL the ones still alive after ``timeout_s``."""
    import psutil

    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _, alive = psutil.wait_procs(procs, timeout=timeout_s)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=5)


def _owner_alive(record: dict[str, Any]) -> bool:
    import psutil

    try:
        return abs(psutil.Process(int(record["owner_pid"])).create_time()
                   - float(record["owner_create_time"])) < 1e-3
    except psutil.Error:
        return False
    except (KeyError, TypeError, ValueError):
        return True  # not a record of ours: never act on it


def _sweep_record(path: Path, temp_dir: str | os.PathLike[str]) -> int:
    """End the processes of the cluster recorded in ``path`` if its owner is gone; returns how
    many were ended."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return 0
    session = os.path.realpath(str(record.get("session_dir") or "/"))
    if _owner_alive(record) or not session.startswith(os.path.realpath(temp_dir) + "/session_"):
        return 0  # a live driver's cluster, or a record naming no session of this temp dir
    procs = session_processes(session, [tuple(p) for p in record.get("pids", [])])
    end_processes(procs)
    path.unlink(missing_ok=True)
    return len(procs)


def sweep_orphans(temp_dir: str | os.PathLike[str] = "/tmp/ray") -> int:
    """End the processes of clusters a Curator driver started and then died without stopping
    (kill -9). Only clusters recorded in ``<temp_dir>/curator_owned/*.json`` whose owner process
    is gone are touched: other users' clusters, ``ray start`` ones and those of live drivers are
    never. Returns how many processes were ended."""
    owned = Path(temp_dir) / _OWNED_DIR
    if not owned.is_dir():
        return 0
    return sum(_sweep_record(path, temp_dir) for path in owned.glob("*.json"))


def _watch_owner(record: str, temp_dir: str) -> None:
    """Body of the watchdog process a started cluster gets: wait for the driver that started it
    to exit, then end what is left of its cluster (nothing, after a clean ``stop()``)."""
    import psutil

    with contextlib.suppress(psutil.Error, OSError, ValueError, KeyError):
        owner = psutil.Process(int(json.loads(Path(record).read_text())["owner_pid"]))
        owner.wait()
    _sweep_record(Path(record), temp_dir)


class RayClient:
    """Finds, joins or starts the Ray cluster the Ray executors run on.

    Discovery follows Ray's own tools: an explicit ``address``; else ``RAY_ADDRESS`` (what
    ``ray job submit`` sets for its entrypoint); else the Ray this process already initialised;
    else, with ``address="auto"``, the cluster running on this machine; else a new local
    cluster (``address="local"`` always starts one). Joining never takes ownership: ``stop()``
    only disconnects from a cluster it joined and leaves it running, and shuts down (and waits
    for every process of) only a cluster ``start()`` started.

    Parameters:
        address: ``None`` / ``"auto"`` / ``"local"`` (see above), ``"host:port"`` (the GCS
            address ``ray start --head`` prints) or ``"ray://host:port"`` (Ray Client).
        num_cpus, num_gpus: cores and GPUs of a started cluster (default: this machine's).
        object_store_memory: object store size in bytes for a started cluster (default: Ray's).
        timeout_s: the longest a whole start or join (address probe, ``ray.init`` and a test
            task) may take before :class:`RayStartError` says what to do.
        dashboard: a started cluster runs Ray's dashboard, which serves Ray's state API
            (``XennaExecutor`` needs it; on by default, as NeMo Curator's ``ray start --head``
            always runs it; it needs the package ``ray[default]``, without which the cluster
            starts without it, with a warning). ``False`` saves a little memory where only the
            Ray Data / actor pool executors run.
        include_dashboard: NeMo Curator's switch for adding the cluster to a running
            Prometheus' service discovery (its monitoring scripts). Curator has no such
            integration (its per-stage figures go to Ray's own metrics endpoint), so the flag
            is accepted and changes nothing: as in NeMo, ``False`` does not turn Ray's dashboard
            off (``dashboard=False`` does).
        ray_dashboard_port: the dashboard's port (8265, as NeMo Curator). When the default port
            is taken the next free one is used (:attr:`dashboard_url` tells which); a port given
            explicitly that is taken is an error; ``0`` lets the system pick.
        ray_dashboard_host: the interface the dashboard listens on (``"127.0.0.1"``: this machine
            only; ``"0.0.0.0"`` to reach it from other machines).
        ray_init_kwargs: extra arguments for ``ray.init``; NeMo Curator's ``ray_temp_dir`` is
            taken as Ray's temp dir; its ``ray start`` options (``ray_port``,
            ``ray_metrics_port``, ``ray_client_server_port``, ``enable_object_spilling``,
            ``ray_stdouterr_capture_file``) are an error.

    A started cluster is recorded in ``<ray temp dir>/curator_owned/`` with this process's id,
    and a small watchdog process waits for this process to exit: should the driver die without
    ``stop()`` (kill -9), the watchdog ends that cluster's leftover processes (and only those);
    should the watchdog be killed too, the next ``RayClient.start()`` on the machine does. Clients are pointed at the
    address Ray actually bound (:attr:`address`). Use it as a context manager::

        with RayClient(num_cpus=2):
            pipeline.run(RayDataExecutor())
    """

    def __init__(self, address: str | None = None, num_cpus: int | None = None,
                 num_gpus: int | None = None, object_store_memory: int | None = None,
                 timeout_s: float = 120.0, include_dashboard: bool = True,
                 ray_dashboard_port: int = DEFAULT_DASHBOARD_PORT,
                 ray_dashboard_host: str = DEFAULT_DASHBOARD_HOST, dashboard: bool = True,
                 **ray_init_kwargs: Any) -> None:
        if "ray_temp_dir" in ray_init_kwargs:
            ray_init_kwargs["_temp_dir"] = ray_init_kwargs.pop("ray_temp_dir")
        unsupported = [k for k in _RAY_START_ONLY if k in ray_init_kwargs]
        if unsupported:
            raise TypeError(f"RayClient: {', '.join(unsupported)} (NeMo Curator's options for "
                            f"its `ray start` subprocess) are not supported: the cluster starts "
                            f"in this process with ray.init and picks its ports itself; drop "
                            f"them")
        self.address = address
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.object_store_memory = object_store_memory
        self.timeout_s = timeout_s
        self.include_dashboard = include_dashboard
        self.dashboard = dashboard
        self.ray_dashboard_port = ray_dashboard_port
        self.ray_dashboard_host = ray_dashboard_host
        self.dashboard_url: str | None = None  # host:port of the dashboard, once started
        self.ray_init_kwargs = ray_init_kwargs
        self.owns_cluster = False
        self.how: str | None = None  # how start() found the cluster (see resolve_address)
        self._connected = False
        self._record: Path | None = None
        self._watchdog: Any = None  # the process that ends a started cluster if we are killed

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> RayClient:
        """Join or start the cluster and check that it runs a task; returns ``self``."""
        deadline = time.monotonic() + self.timeout_s  # the whole start, `import ray` included
        # Under `uv run`, Ray would ship the project to every worker and re-run `uv` there:
        # slow and needless on one machine (workers use this interpreter), and the workers'
        # compiled kernels would be rebuilt for every new copy (10 s at a run's start here).
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        import ray

        if os.environ["RAY_ENABLE_UV_RUN_RUNTIME_ENV"] == "0":  # Ray reads it when imported,
            with contextlib.suppress(Exception):  # which may have been before this start
                from ray._private import ray_constants

                ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False

        how, address = resolve_address(self._address)
        self.how = how
        if how == "initialized" or ray.is_initialized():
            self._connected = False  # someone else's connection: use it, never shut it down
            return self
        with contextlib.suppress(Exception):  # best effort: never blocks a start
            sweep_orphans(self._temp_dir())
        from curator.executors.ray_quiet import quiet_known_ray_lines

        quiet_known_ray_lines()
        kwargs: dict[str, Any] = {"include_dashboard": self.dashboard,
                                  "log_to_driver": False, **self.ray_init_kwargs}
        if how == "start":
            kwargs["address"] = "local"  # a new cluster, never someone's `ray start` one
            for key in ("num_cpus", "num_gpus", "object_store_memory"):
                if getattr(self, key) is not None:
                    kwargs[key] = getattr(self, key)
            if self.dashboard and not _dashboard_installed():
                kwargs["include_dashboard"] = False
            elif self.dashboard:
                kwargs.setdefault("dashboard_host", self.ray_dashboard_host)
                if self.ray_dashboard_port != DEFAULT_DASHBOARD_PORT:
                    kwargs.setdefault("dashboard_port", _require_free_port(
                        kwargs["dashboard_host"], self.ray_dashboard_port, "ray_dashboard_port"))
                # the default port: Ray's dashboard binds 8265 or, when taken, the next free
                # port itself (no race with another cluster starting at the same time)
            what = "start a local Ray cluster"
            hint = ("check that /tmp is writable and has space, that no firewall blocks "
                    "the machine's own IP, and see /tmp/ray/session_latest/logs")
        else:
            kwargs.pop("include_dashboard")
            address = self._probe(how, address, deadline)
            kwargs["address"] = address
            what = f"join the Ray cluster at {address!r} (from {how} address)"
            hint = (_auth_hint() or "check that the cluster is up (`ray status` on its head "
                    "node) and that this machine can reach the head node's GCS port")
        # the dashboard ray.init starts reads the state API limits from its environment
        with environ(STATE_API_ENV if how == "start" else {}):
            context = self._call_with_timeout(lambda: ray.init(**kwargs), what, hint, deadline)
        self.dashboard_url = getattr(context, "dashboard_url", None) or None
        self.owns_cluster = how == "start"
        self._connected = True
        try:
            if self.owns_cluster:
                self._record_ownership()
            self.ping(max(1.0, deadline - time.monotonic()))
        except BaseException:
            self.stop()
            raise
        return self

    def ping(self, timeout_s: float | None = None) -> None:
        """Run one tiny task; raises :class:`RayStartError` if no worker answers in time."""
        import ray

        timeout_s = self.timeout_s if timeout_s is None else timeout_s

        @ray.remote(num_cpus=0)
        def _ping() -> int:
            return 1

        try:
            ray.get(_ping.remote(), timeout=timeout_s)
        except ray.exceptions.GetTimeoutError as exc:
            raise RayStartError(
                f"Ray started but no worker ran a task within {self.timeout_s:.0f}s. Check the "
                f"worker logs in /tmp/ray/session_latest/logs, or raise RayClient(timeout_s=...)"
            ) from exc

    def stop(self, timeout_s: float = 15.0) -> None:
        """Shut down what :meth:`start` started and wait until its processes are gone; a joined
        cluster is only disconnected from and keeps running."""
        if not self._connected:
            return
        import ray

        procs = _ray_descendants() if self.owns_cluster else []
        ray.shutdown()
        self._connected = False
        if procs:
            end_processes(procs, timeout_s)
        if self._record is not None:
            self._record.unlink(missing_ok=True)
            self._record = None
        if self._watchdog is not None:
            self._watchdog.kill()
            self._watchdog.wait()
            self._watchdog = None
        self.owns_cluster = False

    @property
    def address(self) -> str | None:
        """The cluster's GCS address once started (what ``RayClient(address=...)`` joins)."""
        import ray

        # Only a client that started or joined (or found) the connection reports Ray's address;
        # an idle one keeps what it was given, whatever else this process is connected to.
        if self.how is None or not ray.is_initialized():
            return self._address
        return ray.get_runtime_context().gcs_address

    @address.setter
    def address(self, value: str | None) -> None:
        self._address = value

    @property
    def is_running(self) -> bool:
        import ray

        return ray.is_initialized()

    def cluster_resources(self) -> dict[str, float]:
        import ray

        return dict(ray.cluster_resources())

    def __enter__(self) -> RayClient:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers -----------------------------------------------------------------------------
    def _temp_dir(self) -> str:
        return str(self.ray_init_kwargs.get("_temp_dir") or os.environ.get("RAY_TMPDIR")
                   or "/tmp/ray")

    def _record_ownership(self) -> None:
        """Write ``<temp dir>/curator_owned/<session>.json``: this process and the processes of
        the cluster it started, so a later start can end them should this process be killed."""
        import psutil
        import ray

        session_dir = ray._private.worker._global_node.get_session_dir_path()
        owned = Path(self._temp_dir()) / _OWNED_DIR
        owned.mkdir(parents=True, exist_ok=True)
        me = psutil.Process()
        pids = []
        for proc in _ray_descendants():
            with contextlib.suppress(psutil.Error):
                pids.append((proc.pid, proc.create_time()))
        record = {"owner_pid": me.pid, "owner_create_time": me.create_time(),
                  "session_dir": session_dir, "pids": pids}
        path = owned / f"{Path(session_dir).name}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(record))
        tmp.replace(path)
        self._record = path
        # a watchdog in a session of its own ends the cluster should this process be killed
        # (kill -9 gives Ray no chance to); the next start sweeps should it be killed too
        import subprocess

        code = ("from curator.cluster.ray_client import _watch_owner; "
                f"_watch_owner({str(path)!r}, {self._temp_dir()!r})")
        self._watchdog = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)

    def _probe(self, how: str, address: str, deadline: float) -> str:
        """The address to join, after checking within the deadline that its GCS port answers
        (``ray.init`` itself cannot be interrupted while it waits on a dead address)."""
        if address == "auto":
            from ray._private.services import canonicalize_bootstrap_address

            found = None
            with contextlib.suppress(Exception):
                found = canonicalize_bootstrap_address("auto", self._temp_dir())
            if not found:
                raise RayStartError("RayClient(address='auto'): no Ray cluster runs on this "
                                    "machine; start one with `ray start --head`, give its "
                                    "address, or use address=None to start one for the run")
            address = found
        hp = _host_port(address)
        if hp is None:
            raise RayStartError(f"RayClient: cannot read a host:port from the {how} address "
                                f"{address!r}; give e.g. '10.0.0.1:6379' or 'ray://host:10001'")
        try:
            _wait_for_port(*hp, deadline)
        except OSError as exc:
            raise RayStartError(
                f"could not join the Ray cluster at {address!r} (from {how} address): nothing "
                f"accepted a connection at {hp[0]}:{hp[1]} within {self.timeout_s:.0f}s ({exc}). "
                f"Check the address (`ray status` on the head node prints it), that the "
                f"cluster is up and that no firewall blocks the port") from exc
        return address

    def _call_with_timeout(self, fn: Any, what: str, hint: str, deadline: float) -> Any:
        """Run ``fn`` and return its result, in this thread (Ray ties its daemons' lifetime to
        the starting thread, so it cannot run in a helper thread); a watchdog interrupts it at
        ``deadline`` when this is the main thread, and otherwise at least says on stderr what
        is wrong."""
        fired = threading.Event()
        in_main = threading.current_thread() is threading.main_thread()
        message = (f"could not {what} within {self.timeout_s:.0f}s: {hint}; or raise "
                   f"RayClient(timeout_s=...)")

        def fire() -> None:
            fired.set()
            print(f"curator: {message}", file=sys.stderr, flush=True)
            if in_main:
                _thread.interrupt_main()

        watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), fire)
        watchdog.daemon = True
        start = time.monotonic()
        watchdog.start()
        try:
            return fn()
        except KeyboardInterrupt:
            if fired.is_set():
                raise RayStartError(message) from None
            raise
        except Exception as exc:
            if self.how != "start":  # a cluster we started cannot refuse our token
                hint = _auth_hint(exc) or hint
            cause = _causes(exc)
            raise RayStartError(f"could not {what} ({time.monotonic() - start:.1f}s): {exc}"
                                f"{f' (caused by {cause})' if cause else ''}. {hint}") from exc
        finally:
            watchdog.cancel()
