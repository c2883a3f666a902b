"""LocalExecutor behaviour: streaming, bounded queues, batching, worker lifecycle, failures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import psutil
import pytest
from curator import LocalExecutor, Pipeline, ProcessingStage, Resources, Task
from curator.executors.local import plan_workers
from curator.executors.workers import StageSetupError

ROOT = Path(__file__).resolve().parents[2]


class Shared:
    """An event log shared by every thread worker (stages are deep-copied per worker)."""

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.lock = threading.Lock()
        self.counters: dict[str, int] = {}

    def __deepcopy__(self, memo):
        return self

    def log(self, *event) -> None:
        with self.lock:
            self.events.append(event)

    def bump(self, key: str) -> int:
        with self.lock:
            self.counters[key] = self.counters.get(key, 0) + 1
            return self.counters[key]


def tasks(n: int, items: int = 1) -> list[Task]:
    return [Task(f"t{i}", "ds", data=list(range(items))) for i in range(n)]


class Logged(ProcessingStage):
    def __init__(self, name: str, shared: Shared, delay: float = 0.0) -> None:
        self.name, self.shared, self.delay = name, shared, delay
        self.num_workers = 1

    def process(self, task):
        self.shared.log(self.name, "start", task.task_id)
        if self.delay:
            time.sleep(self.delay)
        self.shared.log(self.name, "done", task.task_id)
        return task


def test_streaming_later_stage_handles_first_task_before_first_stage_finishes():
    shared = Shared()
    n = 30
    out = Pipeline("p", stages=[Logged("A", shared), Logged("B", shared)]).run(
        initial_tasks=tasks(n), summary=False)
    assert len(out) == n
    ev = shared.events
    b_first = ev.index(("B", "done", "t0"))
    a_last = ev.index(("A", "done", f"t{n - 1}"))
    assert b_first < a_last, "stage B only started after stage A had processed every task"


def test_bounded_queue_limits_how_far_the_first_stage_runs_ahead():
    shared = Shared()
    queue_size = 3

    class Count(ProcessingStage):
        def num_workers(self) -> int:
            return 1

        def __init__(self, s):
            self.s = s

        def process(self, task):
            self.s.bump("a_done")
            return task

    class Slow(ProcessingStage):
        def num_workers(self) -> int:
            return 1

        def __init__(self, s):
            self.s = s

        def process(self, task):
            started = self.s.bump("b_started")
            self.s.log(self.s.counters["a_done"] - started)
            time.sleep(0.002)

    out = Pipeline("p", stages=[Count(shared), Slow(shared)]).run(
        LocalExecutor(queue_size=queue_size), initial_tasks=tasks(60), summary=False)
    assert out == []  # the last stage returned None: nothing kept
    ahead = max(e[0] for e in shared.events)
    assert ahead <= queue_size + 1  # queue + the one finished task waiting to be put


def test_batch_size_is_honoured():
    shared = Shared()

    class Batched(ProcessingStage):
        batch_size = 4
        def num_workers(self) -> int:
            return 1

        def __init__(self, s):
            self.s = s

        def process_batch(self, batch):
            self.s.log(len(batch))
            return batch

        def process(self, task):
            raise AssertionError("process_batch should be called")

    out = Pipeline("p", stages=[Logged("src", Shared()), Batched(shared)]).run(
        initial_tasks=tasks(10), summary=False)
    assert len(out) == 10
    assert [e[0] for e in shared.events] == [4, 4, 2]


class LifecycleFiles(ProcessingStage):
    """Writes a file per setup() and teardown() call (works across processes)."""

    def __init__(self, path: str, mode: str, workers: int) -> None:
        self.path, self.worker_mode, self.num_workers = path, mode, workers
        self.ready = False

    def setup(self, worker_metadata=None):
        self.ready = True
        self.token = f"{os.getpid()}-{uuid.uuid4().hex}"  # thread idents can be reused
        Path(self.path, f"setup-{self.token}").touch()

    def process(self, task):
        assert self.ready, "process() before setup()"
        return task.derive([x * 2 for x in task.data])

    def teardown(self):
        Path(self.path, f"teardown-{self.token}").touch()


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_setup_once_per_worker_and_teardown_at_end(tmp_path, mode):
    stage = LifecycleFiles(str(tmp_path), mode, workers=2)
    out = Pipeline("p", stages=[stage]).run(initial_tasks=tasks(8, items=2), summary=False)
    assert sorted(t.task_id for t in out) == [f"t{i}" for i in range(8)]
    assert all(t.data == [0, 2] for t in out)
    files = [p.name for p in tmp_path.iterdir()]
    setups = {f.split("-", 1)[1] for f in files if f.startswith("setup-")}
    teardowns = {f.split("-", 1)[1] for f in files if f.startswith("teardown-")}
    assert len(setups) == 2 and teardowns == setups  # each worker: one setup, one teardown
    if mode == "process":
        pids = {f.split("-")[1] for f in files}
        assert str(os.getpid()) not in pids and len(pids) == 2


class PidStage(ProcessingStage):
    worker_mode = "process"
    def num_workers(self) -> int:
        return 2

    def process(self, task):
        return task.derive(os.getpid())


def test_process_workers_run_in_child_processes():
    out = Pipeline("p", stages=[PidStage()]).run(initial_tasks=tasks(6), summary=False)
    pids = {t.data for t in out}
    assert os.getpid() not in pids and 1 <= len(pids) <= 2


class Flaky(ProcessingStage):
    """Fails every attempt on task 'bad', and the first attempt on task 'once'."""

    def num_workers(self) -> int:

        return 1

    def __init__(self, shared):
        self.shared = shared

    def process(self, task):
        n = self.shared.bump(task.task_id)
        if task.task_id == "bad" or (task.task_id == "once" and n == 1):
            raise ValueError(f"cannot process {task.task_id}")
        return task


def test_failing_task_is_retried_then_rejected_with_traceback_and_run_continues(tmp_path):
    shared = Shared()
    initial = [Task(i, "ds", [1], metadata={"source_files": [f"{i}.jsonl"]})
               for i in ("a", "bad", "once", "b")]
    out = Pipeline("p", stages=[Flaky(shared)]).run(
        initial_tasks=initial, rejected_dir=str(tmp_path / "rej"), summary=False,
        raise_on_failure=False)
    assert sorted(t.task_id for t in out) == ["a", "b", "once"]
    assert shared.counters["bad"] == 2  # one try + the default single retry
    st = out.stats.stages[0]
    assert (st.failed_tasks, st.retries) == (1, 2)
    assert out.rejected.counts == {"Flaky": 1}
    files = list((tmp_path / "rej").rglob("*"))
    assert sorted(p.relative_to(tmp_path / "rej").as_posix() for p in files if p.is_file()) == [
        "Flaky/bad.failed.jsonl", "Flaky/bad.failed.task.json"]  # the entry and the task whole
    rec = json.loads((tmp_path / "rej" / "Flaky" / "bad.failed.jsonl").read_text())
    assert rec["kind"] == "task" and rec["task_id"] == "bad" and rec["source"] == "bad.jsonl"
    assert "Traceback" in rec["error"] and "ValueError: cannot process bad" in rec["error"]
    # a failed task is not a rejected record: the summary names them apart
    assert "rejected" not in out.summary().splitlines()[-1]
    assert "NOT OK: failed 1 task(s) after their retries" in out.summary()
    assert "record(s)" not in out.summary()
    assert not out.ok and [f.task_id for f in out.failed] == ["bad"]


def test_max_retries_is_configurable():
    shared = Shared()
    out = Pipeline("p", stages=[Flaky(shared)]).run(
        initial_tasks=[Task("bad", "ds", [1])], max_retries=3, summary=False,
        raise_on_failure=False)
    assert out == [] and shared.counters["bad"] == 4
    assert out.rejected.records[0].kind == "task"


def test_failing_task_in_a_batch_rejects_only_that_task():
    shared = Shared()
    stage = Flaky(shared).with_(batch_size=4)
    out = Pipeline("p", stages=[stage]).run(
        initial_tasks=[Task(i, "ds", [1]) for i in ("a", "bad", "b", "c")], summary=False,
        raise_on_failure=False)
    assert sorted(t.task_id for t in out) == ["a", "b", "c"]
    assert out.stats.stages[0].failed_tasks == 1


class DiesOnce(ProcessingStage):
    """Kills its worker process the first time it sees task 'die' (marker file)."""

    worker_mode = "process"
    def num_workers(self) -> int:
        return 1

    def __init__(self, marker: str):
        self.marker = marker

    def process(self, task):
        if task.task_id == "die" and not os.path.exists(self.marker):
            Path(self.marker).touch()
            os._exit(3)
        return task.derive(os.getpid())


def test_dead_worker_process_is_replaced_and_task_retried(tmp_path):
    out = Pipeline("p", stages=[DiesOnce(str(tmp_path / "died"))]).run(
        initial_tasks=[Task(i, "ds", [1]) for i in ("a", "die", "b")], summary=False)
    assert sorted(t.task_id for t in out) == ["a", "b", "die"]
    st = out.stats.stages[0]
    assert st.worker_restarts == 1 and st.failed_tasks == 0
    assert (tmp_path / "died").exists()


class AlwaysDies(ProcessingStage):
    worker_mode = "process"
    def num_workers(self) -> int:
        return 1

    def process(self, task):
        if task.task_id == "die":
            os._exit(9)
        return task


def test_task_that_always_kills_its_worker_is_rejected_and_run_continues():
    out = Pipeline("p", stages=[AlwaysDies()]).run(
        initial_tasks=[Task(i, "ds", [1]) for i in ("a", "die", "b")], summary=False,
        raise_on_failure=False)
    assert sorted(t.task_id for t in out) == ["a", "b"]
    st = out.stats.stages[0]
    assert st.worker_restarts == 2 and st.failed_tasks == 1
    rec = out.rejected.records[0]
    assert rec.task_id == "die" and "died" in rec.error and "exit code 9" in rec.error


class BadSetup(ProcessingStage):
    def __init__(self, mode):
        self.worker_mode = mode
        self.num_workers = 1

    def setup(self, worker_metadata=None):
        raise RuntimeError("model file missing")

    def process(self, task):
        return task


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_setup_failure_stops_the_run_naming_the_stage(mode):
    with pytest.raises(StageSetupError, match=r"BadSetup.*setup\(\)") as err:
        Pipeline("p", stages=[Logged("first", Shared()), BadSetup(mode)]).run(
            initial_tasks=tasks(5), summary=False)
    assert "model file missing" in str(err.value)


def test_per_stage_stats():
    class Explode(ProcessingStage):
        def process(self, task):  # 1 task of 3 items -> 3 tasks of 1 item
            return [task.derive([x], suffix=x) for x in task.data]

    class DropOdd(ProcessingStage):
        def process(self, task):
            return None if task.data[0] % 2 else task

    out = Pipeline("p", stages=[Explode(), DropOdd()]).run(
        initial_tasks=tasks(4, items=3), summary=False)
    assert len(out) == 8
    a, b = out.stats.stages
    assert (a.name, a.tasks_in, a.tasks_out, a.items_in, a.items_out) == ("Explode", 4, 12, 12, 12)
    assert (b.name, b.tasks_in, b.tasks_out, b.items_in, b.items_out) == ("DropOdd", 12, 8, 12, 8)
    assert a.workers >= 1 and out.stats.executor == "local"
    assert "Explode" in out.stats.format_table()
    assert {t.metadata["partition"] for t in out} == {f"t{i}" for i in range(4)}
    assert [p.stage for p in out[0].stage_perf] == ["Explode", "DropOdd"]


def test_summary_printed_unless_disabled(capsys, monkeypatch):
    monkeypatch.delenv("CURATOR_SUMMARY", raising=False)
    Pipeline("p", stages=[Logged("S", Shared())]).run(initial_tasks=tasks(2))
    assert "wall time" in capsys.readouterr().err
    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    Pipeline("p", stages=[Logged("S", Shared())]).run(initial_tasks=tasks(2))
    assert capsys.readouterr().err == ""


def test_source_stage_from_empty_task_and_rejected_records(tmp_path):
    class Source(ProcessingStage):
        def process(self, task):
            return [Task(f"s{i}", "ds", [i]) for i in range(3)]

    class RejectTwo(ProcessingStage):
        def process(self, task):
            if task.data == [2]:
                self.reject(task, "value two", record={"v": 2})
                return None
            return task

    out = Pipeline("p", stages=[Source(), RejectTwo()]).run(summary=False)
    assert sorted(t.task_id for t in out) == ["s0", "s1"]
    assert out.rejected.counts == {"RejectTwo": 1}
    assert out.stats.stages[1].rejected == 1
    assert out.rejected.records[0].reason == "value two"
    for _ in range(2):  # a re-run overwrites the same file instead of adding one
        out = Pipeline("p", stages=[Source(), RejectTwo()]).run(
            rejected_dir=str(tmp_path), summary=False)
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.jsonl")] == [
        "RejectTwo/s2.jsonl"]
    rec = json.loads((tmp_path / "RejectTwo" / "s2.jsonl").read_text())
    assert (rec["reason"], rec["record"], rec["kind"]) == ("value two", {"v": 2}, "record")
    assert out.rejected.records == [] and out.rejected.path == str(tmp_path)


def test_plan_workers_and_config_validation():
    s = Logged("x", Shared())
    s.num_workers = None
    assert plan_workers(s, cpus=8, gpus=0) == 8
    assert plan_workers(s.with_(resources=Resources(cpus=2)), cpus=8, gpus=0) == 4
    assert plan_workers(s.with_(resources=Resources(gpus=0.5)), cpus=8, gpus=2) == 4
    assert plan_workers(s.with_(num_workers=3), cpus=8, gpus=0) == 3
    assert plan_workers(s, cpus=8, gpus=0, override=2) == 2
    with pytest.warns(UserWarning, match=r"unknown config keys \['queue_sise'\] are ignored"):
        assert LocalExecutor(queue_sise=3).config["queue_sise"] == 3  # kept, not used
    with pytest.raises(ValueError, match="fuse_stages must be False, True, 'process' or"):
        LocalExecutor(fuse_stages="yes")


CTRL_C_SCRIPT = textwrap.dedent("""
    import os, sys, time
    from curator import Pipeline, ProcessingStage, Task
    from curator.io import atomic_write

    OUT = sys.argv[1]

    class SlowWriter(ProcessingStage):
        worker_mode = "process"
        def num_workers(self) -> int:
            return 2

        def process(self, task):
            with atomic_write(f"{OUT}/{task.task_id}.txt", "w") as fh:
                fh.write("first half\\n")
                fh.flush()
                time.sleep(0.05)
                fh.write("second half\\n")
            print("wrote", task.task_id, flush=True)
            return None

    class Pass(ProcessingStage):
        def num_workers(self) -> int:
            return 1

        def process(self, task):
            return task

    if __name__ == "__main__":
        Pipeline("p", stages=[Pass(), SlowWriter()]).run(
            initial_tasks=[Task(f"t{i:04d}", "ds", [i]) for i in range(5000)], summary=False)
""")


@pytest.mark.timeout(180)
def test_ctrl_c_stops_cleanly(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    script = tmp_path / "run.py"
    script.write_text(CTRL_C_SCRIPT)
    env = {**os.environ, "CURATOR_SUMMARY": "0", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(script), str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        for _ in range(3):  # wait until output is being written
            line = proc.stdout.readline()
            assert line.startswith("wrote"), proc.stderr.read()
        children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= 2
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert rc != 0  # interrupted, not finished
    _, alive = psutil.wait_procs(children, timeout=15)
    assert alive == [], f"leftover child processes: {alive}"
    names = sorted(p.name for p in out.iterdir())
    assert names and len(names) < 5000
    assert all(n.endswith(".txt") and not n.startswith(".") for n in names), names
    for p in out.iterdir():
        assert p.read_text() == "first half\nsecond half\n"


def test_progress_reporter_prints_per_stage_counts():
    import io

    from curator.run.progress import ProgressReporter
    from curator.run.stats import RunStats

    stats = RunStats.for_stages(["A", "B"], executor="local")
    stats.record(0, tasks_in=3, tasks_out=2)
    stream = io.StringIO()
    reporter = ProgressReporter(stats, interval=0.01, stream=stream)
    assert "] A: 3/3 tasks 100%, 0 items" in reporter.lines()[0]  # more: tests/core/report
    with reporter:
        while "B: 0/2 tasks" not in stream.getvalue():
            time.sleep(0.01)
    assert stream.getvalue().startswith("[curator")


def test_source_partitions_run_while_the_source_still_lists():
    """A source that lists lazily (``process_stream``) hands each chunk on as it is made: its
    last chunk waits for a partition to have run downstream, which never happens if the
    executor first collects the whole listing."""
    from tests.core.executors.stages import Stamp, StreamedNumbers

    StreamedNumbers.yielded.clear()
    Stamp.ran.clear()
    StreamedNumbers.before_last = Stamp.ran
    try:
        result = Pipeline("stream", stages=[StreamedNumbers(n=6, chunk=2), Stamp()]).run(
            LocalExecutor(num_workers=1), summary=False)
    finally:
        StreamedNumbers.before_last = None
    assert len(StreamedNumbers.yielded) == 3
    first_run = min(t.metadata["ran_at"] for t in result)
    assert first_run < StreamedNumbers.yielded[-1]  # ran before the last chunk was listed
    assert sorted(t.task_id for t in result) == [f"part{i:03d}" for i in range(6)]
    assert result.stats.stages[0].tasks_in == 1 and result.stats.stages[0].tasks_out == 6
