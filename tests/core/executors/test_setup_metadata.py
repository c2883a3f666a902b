"""``setup()`` receives NeMo Curator's ``WorkerMetadata`` (its worker's id) on every worker; a
stage whose ``setup`` takes no argument still works."""

from __future__ import annotations

import json
import os

import pytest
from curator import LocalExecutor, Pipeline, ProcessingStage, Task, WorkerMetadata
from curator.stages.lifecycle import ensure_setup


class Records(ProcessingStage):
    """Appends what its ``setup`` received to ``log`` (one JSON line per worker)."""

    def __init__(self, log: str, mode: str = "thread") -> None:
        self.log, self.worker_mode = log, mode

    def setup(self, worker_metadata=None):
        with open(self.log, "a") as fh:
            fh.write(json.dumps({"type": type(worker_metadata).__name__,
                                 "worker_id": getattr(worker_metadata, "worker_id", None),
                                 "pid": os.getpid()}) + "\n")

    def process(self, task):
        return task


class NoArgument(ProcessingStage):
    def setup(self):  # the old form: no worker_metadata
        self.ready = True

    def process(self, task):
        assert self.ready
        return task


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_setup_receives_worker_metadata_naming_the_worker(tmp_path, mode):
    log = tmp_path / "setup.jsonl"
    out = Pipeline("p", stages=[Records(str(log), mode), NoArgument()]).run(
        LocalExecutor(num_workers=2, fuse_stages=False),
        initial_tasks=[Task(f"t{i}", "ds", [i]) for i in range(4)], summary=False)
    assert sorted(t.task_id for t in out) == ["t0", "t1", "t2", "t3"]
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert {s["type"] for s in seen} == {"WorkerMetadata"}
    assert sorted(s["worker_id"] for s in seen) == ["Records-0", "Records-1"]
    if mode == "process":
        assert os.getpid() not in {s["pid"] for s in seen}


def test_ensure_setup_passes_metadata_only_to_a_setup_that_takes_it(tmp_path):
    assert ensure_setup(NoArgument(), WorkerMetadata(worker_id="w")).ready
    stage = Records(str(tmp_path / "log.jsonl"))
    ensure_setup(stage, WorkerMetadata(worker_id="w7"))
    assert json.loads((tmp_path / "log.jsonl").read_text())["worker_id"] == "w7"
