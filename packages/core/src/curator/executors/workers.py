"""Stage workers for the local executor: in a thread of this process, or in a worker process
(:mod:`curator.executors.process_worker`).
A worker runs a *job*: a stage group's chain (:class:`curator.executors.fusion.ChainJob`), or
anything with its four members (``setup(worker)``, ``job(tasks, worker)``, ``release()``,
``name``)."""

from __future__ import annotations

import copy
import traceback
from typing import Any

from curator.executors.retry import WorkerDied
from curator.tasks import Task

__all__ = ["WorkerDied", "StageSetupError", "ThreadWorker"]

# the worker-process side (multiprocessing, subprocess, cloudpickle: ~20 ms of a run's start)
# is imported only by a run that starts worker processes (curator.executors.process_worker);
# its names are still found here
_PROCESS_NAMES = ("ProcessWorker", "child_main", "worker_command")


def __getattr__(name: str) -> Any:
    if name in _PROCESS_NAMES:
        from curator.executors import process_worker

        return getattr(process_worker, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class StageSetupError(RuntimeError):
    """A stage's ``setup()`` raised: the run cannot go on without that stage."""


class ThreadWorker:
    """Runs its own copy of a job in the calling thread."""

    def __init__(self, work: Any, name: str) -> None:
        self.name = name
        self.job = copy.deepcopy(work)
        try:
            self.job.setup(name)  # serialised across threads
        except Exception as exc:
            raise StageSetupError(f"{self.job.name}.setup() failed in worker {name}:\n"
                                  f"{traceback.format_exc()}") from exc

    def call(self, tasks: list[Task]) -> Any:
        return self.job(tasks, self.name)

    def restart(self) -> None:  # a thread cannot die without taking the process with it
        pass

    def close(self) -> None:
        self.job.release()
