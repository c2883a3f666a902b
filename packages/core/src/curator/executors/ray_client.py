"""RayClient: start a local Ray cluster, or connect to a running one, without ever hanging."""

from __future__ import annotations

import _thread
import os
import sys
import threading
import time
from typing import Any

__all__ = ["RayClient", "RayStartError"]

_RAY_PROCESS_NAMES = ("raylet", "gcs_server", "plasma_store", "ray::", "dashboard", "log_monitor",
                      "runtime_env", "default_worker", "monitor.py")


class RayStartError(RuntimeError):
    """Ray did not start or answer within the timeout."""


def _ray_descendants() -> list[Any]:
    """Ray processes (raylet, GCS, workers, agents) below this process."""
    import psutil  # noqa: PLC0415

    found = []
    for proc in psutil.Process().children(recursive=True):
        try:
            text = proc.name() + " " + " ".join(proc.cmdline()[:3])
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        if any(n in text for n in _RAY_PROCESS_NAMES) or "/ray/" in text:
            found.append(proc)
    return found


class RayClient:
    """Starts a local Ray cluster (or connects to one) for the Ray executors.

    Parameters:
        address: ``None`` starts a new local cluster; ``"auto"``, ``"host:port"`` or
            ``"ray://host:port"`` connects to a running one.
        num_cpus, num_gpus: cores and GPUs of a local cluster (default: this machine's).
        object_store_memory: object store size in bytes for a local cluster (default: Ray's).
        timeout_s: the longest any start, connect or ping waits before raising
            :class:`RayStartError` with what to do.
        include_dashboard: start Ray's dashboard (off: it is slow to start and rarely needed).
        ray_init_kwargs: extra arguments for ``ray.init``.

    Clients are pointed at the address Ray actually bound (:attr:`address`, read back from Ray),
    never at a guessed 127.0.0.1: Ray 2.x resolves 127.0.0.1 to the machine's own IP when it
    binds, which is what made other clients wait on an address nothing listened on. ``stop()`` shuts down only what ``start()``
    started and leaves no Ray process behind. Use it as a context manager::

        with RayClient(num_cpus=2):
            pipeline.run(RayDataExecutor())
    """

    def __init__(self, address: str | None = None, num_cpus: int | None = None,
                 num_gpus: int | None = None, object_store_memory: int | None = None,
                 timeout_s: float = 120.0, include_dashboard: bool = False,
                 **ray_init_kwargs: Any) -> None:
        self.address = address
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.object_store_memory = object_store_memory
        self.timeout_s = timeout_s
        self.include_dashboard = include_dashboard
        self.ray_init_kwargs = ray_init_kwargs
        self.owns_cluster = False
        self._connected = False

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> RayClient:
        """Start (or connect to) the cluster and check that it runs a task; returns ``self``."""
        # Under `uv run`, Ray would ship the project to every worker and re-run `uv` there:
        # slow and needless on one machine (workers use this interpreter).
        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        import ray  # noqa: PLC0415

        if ray.is_initialized():
            self._connected = False  # someone else's connection: use it, never shut it down
            return self
        kwargs: dict[str, Any] = {"include_dashboard": self.include_dashboard,
                                  "log_to_driver": False, **self.ray_init_kwargs}
        if self._address is None:
            kwargs["address"] = "local"  # a new cluster, never someone's `ray start` one
            for key in ("num_cpus", "num_gpus", "object_store_memory"):
                if getattr(self, key) is not None:
                    kwargs[key] = getattr(self, key)
            what = "start a local Ray cluster"
            hint = ("check that /tmp is writable and has space, that no firewall blocks "
                    "the machine's own IP, and see /tmp/ray/session_latest/logs")
        else:
            kwargs["address"] = self._address
            what = f"connect to the Ray cluster at {self._address!r}"
            hint = ("check the address (`ray status` on the head node prints it) and that this "
                    "machine can reach the head node's GCS port")
        self._call_with_timeout(lambda: ray.init(**kwargs), what, hint)
        self.owns_cluster = self._address is None
        self._connected = True
        try:
            self.ping()
        except BaseException:
            self.stop()
            raise
        return self

    def ping(self) -> None:
        """Run one tiny task; raises :class:`RayStartError` if no worker answers in time."""
        import ray  # noqa: PLC0415

        @ray.remote(num_cpus=0)
        def _ping() -> int:
            return 1

        try:
            ray.get(_ping.remote(), timeout=self.timeout_s)
        except ray.exceptions.GetTimeoutError as exc:
            raise RayStartError(
                f"Ray started but no worker ran a task within {self.timeout_s:.0f}s. Check the "
                f"worker logs in /tmp/ray/session_latest/logs, or raise RayClient(timeout_s=...)"
            ) from exc

    def stop(self, timeout_s: float = 15.0) -> None:
        """Shut down what :meth:`start` started and wait until its processes are gone."""
        if not self._connected:
            return
        import ray  # noqa: PLC0415

        procs = _ray_descendants() if self.owns_cluster else []
        ray.shutdown()
        self._connected = False
        if not procs:
            return
        import psutil  # noqa: PLC0415

        _, alive = psutil.wait_procs(procs, timeout=timeout_s)
        for proc in alive:  # stragglers: a worker stuck in user code
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(alive, timeout=5)
        self.owns_cluster = False

    @property
    def address(self) -> str | None:
        """The cluster's GCS address once started (what ``RayClient(address=...)`` joins)."""
        import ray  # noqa: PLC0415

        if not ray.is_initialized():
            return self._address
        return ray.get_runtime_context().gcs_address

    @address.setter
    def address(self, value: str | None) -> None:
        self._address = value

    @property
    def is_running(self) -> bool:
        import ray  # noqa: PLC0415

        return ray.is_initialized()

    def cluster_resources(self) -> dict[str, float]:
        import ray  # noqa: PLC0415

        return dict(ray.cluster_resources())

    def __enter__(self) -> RayClient:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers -----------------------------------------------------------------------------
    def _call_with_timeout(self, fn: Any, what: str, hint: str) -> None:
        """Run ``fn`` in this thread (Ray ties its daemons' lifetime to the starting thread, so
        it cannot run in a helper thread); a watchdog interrupts it after ``timeout_s`` when this
        is the main thread, and otherwise at least says on stderr what is wrong."""
        fired = threading.Event()
        in_main = threading.current_thread() is threading.main_thread()
        message = (f"could not {what} within {self.timeout_s:.0f}s: {hint}; or raise "
                   f"RayClient(timeout_s=...)")

        def fire() -> None:
            fired.set()
            print(f"curator: {message}", file=sys.stderr, flush=True)
            if in_main:
                _thread.interrupt_main()

        watchdog = threading.Timer(self.timeout_s, fire)
        watchdog.daemon = True
        start = time.monotonic()
        watchdog.start()
        try:
            fn()
        except KeyboardInterrupt:
            if fired.is_set():
                raise RayStartError(message) from None
            raise
        except Exception as exc:
            raise RayStartError(f"could not {what} ({time.monotonic() - start:.1f}s): {exc}. "
                                f"{hint}") from exc
        finally:
            watchdog.cancel()
