"""``setup()`` is guaranteed by ``invoke_stage`` (:func:`curator.executors.base.ensure_setup`):
once per stage object per process, on every executor, with ``teardown()`` once at the end
(:func:`curator.executors.base.release_stage`)."""

from __future__ import annotations

import copy
import multiprocessing as mp
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import cloudpickle
import pytest
from curator import LocalExecutor, Pipeline, ProcessingStage, Task
from curator.executors.base import ensure_setup, invoke_stage, release_stage


@dataclass
class SetupProbe(ProcessingStage):
    """Fails unless ``setup()`` ran on this object in this process; logs every ``setup()`` and
    ``teardown()`` as a line ``"<object id>"`` in ``setup-<pid>`` / ``teardown-<pid>`` files."""

    log_dir: str = ""
    fail_setups: int = 0  # how many setup() calls raise before one succeeds
    name: str = "SetupProbe"

    def setup(self, worker_metadata=None) -> None:
        time.sleep(0.02)  # widens the window for two threads racing into setup()
        attempts = sum(1 for _ in Path(self.log_dir).glob("attempt-*"))
        Path(self.log_dir, f"attempt-{os.getpid()}-{attempts}").touch()
        if attempts < self.fail_setups:
            raise OSError("model file not there yet")
        self._log("setup")
        self._ready = os.getpid()

    def teardown(self) -> None:
        self._log("teardown")
        self._ready = None

    def process(self, task: Task) -> Task:
        if getattr(self, "_ready", None) != os.getpid():
            raise RuntimeError("setup() did not run in this process")
        return task.derive([os.getpid()])

    def __getstate__(self) -> dict:  # like a model: never shipped, loaded by setup()
        return {k: v for k, v in self.__dict__.items() if k != "_ready"}

    def _log(self, what: str) -> None:
        with open(Path(self.log_dir, f"{what}-{os.getpid()}"), "a") as f:
            f.write(f"{id(self)}\n")


def _log(log_dir: Path, what: str) -> Counter:
    """``{(pid, object id): calls}`` of ``setup`` or ``teardown``."""
    return Counter((int(p.name.split("-")[1]), line) for p in log_dir.glob(f"{what}-*")
                   for line in p.read_text().split())


def _tasks(n: int = 6) -> list[Task]:
    return [Task(f"t{i}", "probe", [i]) for i in range(n)]


def test_invoke_stage_runs_setup_once_per_object(tmp_path):
    stage = SetupProbe(str(tmp_path))
    for task in _tasks(3):
        call = invoke_stage(stage, [task], "w")
        assert call.error is None and call.outputs[0].data == [os.getpid()]
    assert list(_log(tmp_path, "setup").values()) == [1]
    ensure_setup(stage)  # already set up: nothing happens
    assert sum(_log(tmp_path, "setup").values()) == 1

    # a copy (deepcopy, with_, pickled) is another object: it is set up on its own
    for clone in (copy.deepcopy(stage), stage.with_(name="renamed"),
                  cloudpickle.loads(cloudpickle.dumps(stage))):
        assert invoke_stage(clone, _tasks(1), "w").error is None
    assert sum(_log(tmp_path, "setup").values()) == 4

    release_stage(stage)
    release_stage(stage)  # teardown once
    assert list(_log(tmp_path, "teardown").values()) == [1]
    assert invoke_stage(stage, _tasks(1), "w").error is None  # set up again after teardown
    assert sum(_log(tmp_path, "setup").values()) == 5


def test_setup_error_comes_back_as_the_call_error_and_is_retried(tmp_path):
    stage = SetupProbe(str(tmp_path), fail_setups=1)
    call = invoke_stage(stage, _tasks(1), "w")
    assert call.outputs == [] and "model file not there yet" in call.error
    assert not _log(tmp_path, "setup")
    again = invoke_stage(stage, _tasks(1), "w")  # the retry sets it up
    assert again.error is None and sum(_log(tmp_path, "setup").values()) == 1


def test_threads_sharing_a_stage_set_it_up_once(tmp_path):
    stage = SetupProbe(str(tmp_path))
    start = threading.Barrier(4)
    calls = []

    def work(task: Task) -> None:
        start.wait()
        calls.append(invoke_stage(stage, [task], threading.current_thread().name))

    threads = [threading.Thread(target=work, args=(t,)) for t in _tasks(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [c.error for c in calls] == [None] * 4
    assert list(_log(tmp_path, "setup").values()) == [1]


def _invoke_in_child(stage: SetupProbe, out: str) -> None:
    call = invoke_stage(stage, _tasks(1), "child")
    Path(out).write_text(call.error or "ok")


def test_a_forked_child_sets_the_stage_up_again(tmp_path):
    stage = SetupProbe(str(tmp_path))
    ensure_setup(stage)
    child = mp.get_context("fork").Process(target=_invoke_in_child,
                                           args=(stage, str(tmp_path / "out")))
    child.start()
    child.join()
    assert (tmp_path / "out").read_text() == "ok"
    assert {pid for pid, _ in _log(tmp_path, "setup")} == {os.getpid(), child.pid}


def _check_run(result, log_dir: Path, teardown: bool = True) -> set[int]:
    """The run is ok, every (worker process, stage copy) ran setup() exactly once and, with
    ``teardown``, teardown() exactly once; returns the pids that processed tasks."""
    assert result.ok, result.failed
    pids = {t.data[0] for t in result}
    assert len(result) == 6
    setups = _log(log_dir, "setup")
    assert setups and set(setups.values()) == {1}, setups
    assert pids <= {pid for pid, _ in setups}
    if teardown:
        assert _log(log_dir, "teardown") == setups
    return pids


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_local_executor_sets_up_each_worker_once(tmp_path, mode):
    stage = SetupProbe(str(tmp_path)).with_(worker_mode=mode)
    result = Pipeline("p", stages=[stage]).run(LocalExecutor(num_workers=2),
                                               initial_tasks=_tasks(), summary=False)
    pids = _check_run(result, tmp_path)
    assert (os.getpid() in pids) == (mode == "thread")
    assert sum(_log(tmp_path, "setup").values()) == 2  # one per worker


@pytest.mark.ray
@pytest.mark.parametrize("kind", ["ray_data", "ray_actor_pool"])
def test_ray_executors_set_up_each_actor_once(tmp_path, kind, ray_cluster):
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    executor = RayDataExecutor() if kind == "ray_data" else RayActorPoolExecutor()
    result = Pipeline("p", stages=[SetupProbe(str(tmp_path))]).run(
        executor, initial_tasks=_tasks(), summary=False)
    # Ray Data ends its actors with the dataset (teardown from __del__ is best effort)
    pids = _check_run(result, tmp_path, teardown=kind == "ray_actor_pool")
    assert os.getpid() not in pids


class _Slotted:
    """A helper object (no ``__dict__``, no weak references) with setup/teardown counters."""

    __slots__ = ("setups", "teardowns")

    def __init__(self) -> None:
        self.setups = self.teardowns = 0

    def setup(self) -> None:
        self.setups += 1

    def teardown(self) -> None:
        self.teardowns += 1


def test_any_object_with_setup_is_set_up_once_and_returned():
    helper = _Slotted()
    assert ensure_setup(helper) is helper and ensure_setup(helper) is helper
    assert helper.setups == 1
    release_stage(helper)
    release_stage(helper)
    assert helper.teardowns == 1
    ensure_setup(helper)
    assert helper.setups == 2
