"""Issue 31 item 6: failed tasks are kept as data (JSON naming a registered task class plus the
files of their bytes), replay rebuilds them from those, and no pickle from a rejected directory
is read unless the user opts in with ``trust_pickles`` / ``--trust-pickles``."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from dataclasses import dataclass

import cloudpickle
import numpy as np
import pytest
from curator import Pipeline, ProcessingStage, Task
from curator.errors import ConfigError
from curator.task_files import load_task, save_task

from tests.core.executors.stages import make_partitions
from tests.core.test_nothing_lost import FailWhile


@dataclass
class Passthrough(ProcessingStage):
    name: str = "FailWhile"  # the stage name the planted entries name

    def process(self, task: Task) -> Task:
        return task


class _Payload:
    """Unpickling this creates the file ``path``: what an attacker's code would do."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _files(folder) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def _run(pipe: Pipeline, tasks: list[Task], rej) -> object:
    return pipe.run(initial_tasks=tasks, rejected_dir=str(rej), summary=False,
                    raise_on_failure=False)


def _plant(rej, pwned, name: str = "part001.failed.task.pkl") -> None:
    """A failed-task entry whose task file is a malicious pickle (as someone with write access
    to a shared rejected directory could leave)."""
    folder = rej / "FailWhile"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(pickle.dumps(_Payload(str(pwned))))
    entry = {"stage": "FailWhile", "reason": "failed", "task_id": "part001", "kind": "task",
             "error": "OSError", "record": {"files": {"task": name}, "run_id": ""}}
    (folder / "part001.failed.jsonl").write_text(json.dumps(entry) + "\n")


def test_failed_task_is_kept_as_json_and_files_and_replayed_without_pickles(tmp_path):
    rej, broken = tmp_path / "rej", tmp_path / "broken"
    broken.touch()
    tasks = make_partitions(3)
    tasks[1].metadata.update({"span": (1.5, 2.5), "raw": b"\x00\xff", "vec": np.arange(4.0),
                              "ids": {3: "three"}, "nan": float("nan")})
    pipe = Pipeline("p", stages=[FailWhile(str(broken))])
    assert not _run(pipe, tasks, rej).ok

    kept = _files(rej)
    assert "FailWhile/part001.failed.task.json" in kept and not any(".pkl" in f for f in kept)
    doc = json.loads((rej / "FailWhile" / "part001.failed.task.json").read_text())
    assert doc["task_class"] == "core:Task" and doc["stage"] == "FailWhile"
    assert doc["data"] == [3, 4, 5]  # the records themselves, readable without Curator
    raw = next(f for f in kept if f.endswith(".bin"))
    assert (rej / raw).read_bytes() == b"\x00\xff"  # bytes as their own file

    broken.unlink()
    replayed = pipe.replay(str(rej), summary=False)
    assert replayed.ok and replayed[0].data == [4, 5, 6]
    meta = replayed[0].metadata
    assert meta["span"] == (1.5, 2.5) and meta["raw"] == b"\x00\xff" and meta["ids"] == {3: "three"}
    assert np.array_equal(meta["vec"], np.arange(4.0)) and np.isnan(meta["nan"])


def test_a_planted_pickle_is_not_executed_and_the_error_says_how_to_opt_in(tmp_path):
    rej, pwned = tmp_path / "rej", tmp_path / "pwned"
    _plant(rej, pwned)
    pipe = Pipeline("p", stages=[Passthrough()])
    with pytest.raises(ConfigError) as err:
        pipe.replay(str(rej), summary=False)
    assert not pwned.exists()  # the payload did not run
    msg = str(err.value)
    assert "--trust-pickles" in msg and "trust_pickles=True" in msg
    assert "part001.failed.task.pkl" in msg

    # the payload is real: opting in runs it (which is why it is off by default)
    with pytest.raises(Exception):  # noqa: B017 - what the payload returns is no task
        pipe.replay(str(rej), summary=False, trust_pickles=True)
    assert pwned.exists()


@pytest.mark.timeout(180)
def test_cli_replay_refuses_a_planted_pickle_without_trust_pickles(tmp_path):
    rej, pwned = tmp_path / "rej", tmp_path / "pwned"
    _plant(rej, pwned)
    (tmp_path / "in.jsonl").write_text('{"text": "a b c"}\n')
    spec = tmp_path / "spec.yaml"
    spec.write_text("stages:\n  - stage: JsonlReader\n    file_paths: in.jsonl\n"
                    "  - stage: JsonlWriter\n    path: out\n")
    proc = subprocess.run([sys.executable, "-m", "curator", "replay", str(rej), "--spec",
                           str(spec)], cwd=tmp_path, capture_output=True, text=True, timeout=150)
    assert proc.returncode == 2, proc.stderr
    assert "--trust-pickles" in proc.stderr and "Traceback" not in proc.stderr
    assert not pwned.exists()


def test_an_older_pickled_entry_replays_only_when_trusted(tmp_path):
    """Entries written before tasks were kept as data: the task cloudpickled without its table,
    the table as Parquet beside it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rej = tmp_path / "rej"
    folder = rej / "FailWhile"
    folder.mkdir(parents=True)
    shell = Task("part001", "nums", None, metadata={"partition": "part001"})
    (folder / "part001.failed.task.pkl").write_bytes(cloudpickle.dumps(shell))
    pq.write_table(pa.table({"x": [1, 2]}), folder / "part001.failed.parquet")
    entry = {"stage": "FailWhile", "reason": "failed", "task_id": "part001", "kind": "task",
             "record": {"files": {"task": "part001.failed.task.pkl",
                                  "data": "part001.failed.parquet"}, "run_id": ""}}
    (folder / "part001.failed.jsonl").write_text(json.dumps(entry) + "\n")
    pipe = Pipeline("p", stages=[Passthrough()])
    with pytest.raises(ConfigError, match="--trust-pickles"):
        pipe.replay(str(rej), summary=False)
    result = pipe.replay(str(rej), summary=False, trust_pickles=True)
    assert result.ok and result[0].data.column("x").to_pylist() == [1, 2]


@dataclass
class UnregisteredTask(Task[list[int]]):
    """A task class no plugin registered: it cannot be rebuilt by name."""


def test_an_unregistered_task_class_is_still_kept_whole_as_a_pickle(tmp_path, caplog):
    rej, broken = tmp_path / "rej", tmp_path / "broken"
    broken.touch()
    task = UnregisteredTask("part001", "nums", [1, 2])
    pipe = Pipeline("p", stages=[FailWhile(str(broken))])
    assert not _run(pipe, [task], rej).ok
    assert (rej / "FailWhile" / "part001.failed.task.pkl").exists()  # nothing lost
    entry = json.loads((rej / "FailWhile" / "part001.failed.jsonl").read_text())
    assert "register(UnregisteredTask, kind='task')" in entry["record"]["pickled"]
    assert "--trust-pickles" in caplog.text
    broken.unlink()
    with pytest.raises(ConfigError, match="trust_pickles=True"):
        pipe.replay(str(rej), summary=False)
    replayed = pipe.replay(str(rej), summary=False, trust_pickles=True)
    assert replayed.ok and isinstance(replayed[0], UnregisteredTask)


def test_a_registered_task_class_is_rebuilt_by_name(tmp_path, curator_registry):
    curator_registry.register(UnregisteredTask)  # a Task subclass: kind "task" from its class
    written = save_task(UnregisteredTask("t", "d", [7], metadata={"k": "v"}), str(tmp_path / "t"),
                        stage="S")
    assert written == ["t.task.json"]
    doc = json.loads((tmp_path / "t.task.json").read_text())
    assert doc["task_class"] == "test:UnregisteredTask"
    task = load_task(str(tmp_path / "t.task.json"))
    assert type(task) is UnregisteredTask and task.data == [7] and task.metadata == {"k": "v"}


def test_a_tampered_entry_cannot_point_outside_its_folder(tmp_path):
    save_task(Task("t", "d", b"secret"), str(tmp_path / "t"))
    path = tmp_path / "t.task.json"
    doc = json.loads(path.read_text())
    doc["data"]["file"] = "../../etc/passwd"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match="not a plain file name"):
        load_task(str(path))
    doc["task_class"] = "NoSuchTask"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError, match="not registered as a task"):
        load_task(str(path))


def test_semantic_dedup_spill_stores_tasks_as_data(tmp_path):
    from curator.dedup.semantic_stage import ApplySemanticDedupStage, SpillEmbeddingsStage

    records = [{"id": f"r{i}", "emb": [float(i), 1.0]} for i in range(3)]
    spill = SpillEmbeddingsStage("id", "emb", str(tmp_path))
    marker = spill.process(Task("t0", "d", records, metadata={"partition": "p0"}))
    spilled = _files(tmp_path)
    assert not any(f.endswith(".pkl") for f in spilled)
    assert any(f.startswith("tasks/") and f.endswith(".task.json") for f in spilled)
    marker.metadata["_semantic_remove"] = [1]
    out = ApplySemanticDedupStage().process(marker)
    assert [r["id"] for r in out.data] == ["r0", "r2"] and out.metadata["partition"] == "p0"
    assert not (tmp_path / "tasks").exists()  # the spilled files are removed once applied
