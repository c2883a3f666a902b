"""Stage workers for the local executor: in a thread of this process, or in a child process."""

from __future__ import annotations

import copy
import multiprocessing as mp
import signal
import sys
import threading
import traceback
from typing import Any

import cloudpickle

from curator.executors.base import StageCall, invoke_stage
from curator.stages.base import ProcessingStage
from curator.tasks import Task

__all__ = ["WorkerDied", "StageSetupError", "ThreadWorker", "ProcessWorker"]


class WorkerDied(RuntimeError):
    """A worker process exited while it held a task."""


class StageSetupError(RuntimeError):
    """A stage's ``setup()`` raised: the run cannot go on without that stage."""


_SETUP_LOCK = threading.Lock()
"""Serialises ``setup()`` of thread workers: libraries such as torch fail when several threads
import them for the first time at once."""


class ThreadWorker:
    """Runs its own copy of a stage in the calling thread."""

    def __init__(self, stage: ProcessingStage, name: str) -> None:
        self.name = name
        self.stage = copy.deepcopy(stage)
        try:
            with _SETUP_LOCK:
                self.stage.setup({"worker": name})
        except Exception as exc:
            raise StageSetupError(f"{stage.name}.setup() failed in worker {name}:\n"
                                  f"{traceback.format_exc()}") from exc

    def call(self, tasks: list[Task]) -> StageCall:
        return invoke_stage(self.stage, tasks, self.name)

    def restart(self) -> None:  # a thread cannot die without taking the process with it
        pass

    def close(self) -> None:
        self.stage.teardown()


def _child_main(conn: Any, stage_bytes: bytes, name: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops us
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: atomic writes clean up
    try:
        stage: ProcessingStage = cloudpickle.loads(stage_bytes)
        stage.setup({"worker": name})
    except BaseException:  # noqa: BLE001
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
        conn.send_bytes(cloudpickle.dumps(invoke_stage(stage, tasks, name)))
    stage.teardown()


class ProcessWorker:
    """Runs a stage in a child process; tasks and results cross a pipe (cloudpickle).

    If the child dies (crash, ``os._exit``, OOM kill) :meth:`call` raises :class:`WorkerDied`
    and :meth:`restart` starts a fresh one (running ``setup()`` again).
    """

    def __init__(self, stage: ProcessingStage, name: str, context: mp.context.BaseContext,
                 setup_timeout: float = 600.0) -> None:
        self.stage_name = stage.name
        self.name = name
        self.ctx = context
        self.setup_timeout = setup_timeout
        self.stage_bytes = cloudpickle.dumps(stage)
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_child_main, args=(child, self.stage_bytes, self.name),
                                     name=f"curator-{self.name}", daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        if not parent.poll(self.setup_timeout):
            self.kill()
            raise StageSetupError(f"{self.stage_name}: worker {self.name} did not finish setup() "
                                  f"within {self.setup_timeout:.0f}s")
        try:
            status, detail = cloudpickle.loads(parent.recv_bytes())
        except (EOFError, OSError) as exc:
            self.proc.join(5)
            raise StageSetupError(f"{self.stage_name}: worker {self.name} exited during setup() "
                                  f"(exit code {self.proc.exitcode})") from exc
        if status != "ready":
            self.proc.join(5)
            raise StageSetupError(f"{self.stage_name}.setup() failed in worker {self.name}:\n"
                                  f"{detail}")

    def call(self, tasks: list[Task]) -> StageCall:
        try:
            self.conn.send_bytes(cloudpickle.dumps(tasks))
            data = self.conn.recv_bytes()
        except (EOFError, OSError, BrokenPipeError) as exc:
            self.proc.join(5)
            raise WorkerDied(f"worker process {self.name} of stage {self.stage_name} died "
                             f"(exit code {self.proc.exitcode})") from exc
        return cloudpickle.loads(data)

    def restart(self) -> None:
        self.kill()
        self.restarts += 1
        self._start()

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join(5)
            if self.proc.is_alive():
                self.proc.kill()
                self.proc.join(5)
        self.conn.close()

    def close(self, timeout: float = 30.0) -> None:
        try:
            self.conn.send_bytes(cloudpickle.dumps(None))
        except (OSError, BrokenPipeError):
            pass
        self.proc.join(timeout)
        self.kill()
