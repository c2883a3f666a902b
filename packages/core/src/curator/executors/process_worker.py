"""The local executor's worker processes: a stage group's job run in a fresh Python process
(:class:`ProcessWorker`) and that process's body (:func:`child_main`). Imported only by a run
that starts one (see :mod:`curator.executors.workers` for thread workers)."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import traceback
from multiprocessing import spawn
from multiprocessing.connection import Connection
from typing import Any

import cloudpickle

from curator.executors.retry import WorkerDied
from curator.executors.workers import StageSetupError
from curator.tasks import Task

__all__ = ["ProcessWorker", "child_main", "worker_command"]


def child_main(fd: int) -> None:
    """Body of a worker process (``python -m curator.executors._worker FD``).

    Receives the parent's ``sys.path`` and its name, then the job (cloudpickle), runs its
    ``setup()`` and answers one result (the job's: outcomes and passed-on tasks) per list of tasks until it
    gets ``None`` or the pipe closes. It never imports the parent's ``__main__``: stages arrive
    by value.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: atomic writes clean up
    conn = Connection(fd)
    try:
        sys.path[:], name = cloudpickle.loads(conn.recv_bytes())
    except (EOFError, OSError):
        return
    try:
        job = cloudpickle.loads(conn.recv_bytes())
        job.setup(name)
    except BaseException:
        conn.send_bytes(cloudpickle.dumps(("setup_error", traceback.format_exc())))
        return
    conn.send_bytes(cloudpickle.dumps(("ready", None)))
    while True:
        try:
            msg = conn.recv_bytes()
        except (EOFError, OSError):
            break
        tasks = cloudpickle.loads(msg)
        if tasks is None:
            break
        conn.send_bytes(cloudpickle.dumps(job(tasks, name)))
    job.release()


def worker_command(fd: int) -> list[str] | None:
    """Command line of a worker process, or ``None`` when this interpreter cannot start one."""
    exe = spawn.get_executable() or sys.executable
    if not exe or not os.path.exists(exe):
        return None
    return [exe, *subprocess._args_from_interpreter_flags(),
            "-m", "curator.executors._worker", str(fd)]


class ProcessWorker:
    """Runs a job in a fresh Python process; tasks and results cross a pipe
    (cloudpickle).

    The process runs ``python -m curator.executors._worker``, not the user's script, so a script
    without ``if __name__ == "__main__":``, ``python -c``, stdin and notebooks all work. If it
    dies (crash, ``os._exit``, OOM kill) :meth:`call` raises :class:`WorkerDied` and
    :meth:`restart` starts a fresh one (running ``setup()`` again).
    """

    def __init__(self, job: Any, name: str, setup_timeout: float = 600.0) -> None:
        self.stage_name = job.name
        self.name = name
        self.setup_timeout = setup_timeout
        self.stage_bytes = cloudpickle.dumps(job)
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        parent, child = mp.Pipe()
        cmd = worker_command(child.fileno())
        if cmd is None:
            raise StageSetupError(f"{self.stage_name}: cannot start worker {self.name}: no Python "
                                  f"executable (sys.executable={sys.executable!r})")
        try:
            self.proc = subprocess.Popen(cmd, pass_fds=[child.fileno()], stdin=subprocess.DEVNULL)
        finally:
            child.close()
        self.conn = parent
        try:
            parent.send_bytes(cloudpickle.dumps((list(sys.path), self.name)))
            parent.send_bytes(self.stage_bytes)
        except (OSError, BrokenPipeError):
            pass  # the worker died at start: reported below with its exit code
        if not parent.poll(self.setup_timeout):
            self.kill()
            raise StageSetupError(f"{self.stage_name}: worker {self.name} did not finish setup() "
                                  f"within {self.setup_timeout:.0f}s")
        try:
            status, detail = cloudpickle.loads(parent.recv_bytes())
        except (EOFError, OSError) as exc:
            raise StageSetupError(f"{self.stage_name}: worker {self.name} exited during setup() "
                                  f"(exit code {self._wait(5)}); its stderr is above") from exc
        if status != "ready":
            self._wait(5)
            raise StageSetupError(f"{self.stage_name}.setup() failed in worker {self.name}:\n"
                                  f"{detail}")

    def _wait(self, timeout: float) -> int | None:
        """The exit code once the process ended within ``timeout`` seconds, else ``None``."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def call(self, tasks: list[Task]) -> Any:
        try:
            self.conn.send_bytes(cloudpickle.dumps(tasks))
            data = self.conn.recv_bytes()
        except (EOFError, OSError, BrokenPipeError) as exc:
            raise WorkerDied(f"worker process {self.name} of stage {self.stage_name} died "
                             f"(exit code {self._wait(5)})") from exc
        return cloudpickle.loads(data)

    def restart(self) -> None:
        self.kill()
        self.restarts += 1
        self._start()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            if self._wait(5) is None:
                self.proc.kill()
                self._wait(5)
        self.conn.close()

    def close(self, timeout: float = 30.0) -> None:
        try:
            self.conn.send_bytes(cloudpickle.dumps(None))
        except (OSError, BrokenPipeError):
            pass
        self._wait(timeout)
        self.kill()
