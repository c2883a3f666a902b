"""Issue 13 case 1: the disk fills up during a run with a checkpoint; the user frees space and
runs again. Every document must be written once (before: the failed partitions were
checkpointed as done and 7,800 of 12,000 documents were never written, both runs "ok").

The disk is a byte quota on the output directory checked by the writer (a real small tmpfs needs
mount rights the test machines do not give). Run as a script for the issue's numbers::

    uv run python -m tests.e2e.test_disk_full_resume     # 12,000 documents in 20 partitions
"""

from __future__ import annotations

import errno
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from curator import LocalExecutor, Pipeline, ProcessingStage, Task
from curator.io import atomic_write


@dataclass
class QuotaJsonWriter(ProcessingStage):
    """Writes ``{out_dir}/{task_id}.jsonl``; raises ``OSError(ENOSPC)`` when the directory would
    hold more than ``quota`` bytes (0: no limit)."""

    out_dir: str = ""
    quota: int = 0
    name: str = "QuotaJsonWriter"

    def process(self, task: Task) -> Task:
        payload = "".join(json.dumps(d) + "\n" for d in task.data)
        used = sum(f.stat().st_size for f in Path(self.out_dir).glob("*.jsonl"))
        path = os.path.join(self.out_dir, f"{task.task_id}.jsonl")
        with atomic_write(path, "w") as fh:
            if self.quota and used + len(payload) > self.quota:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
            fh.write(payload)
        return task


def documents(parts: int, per: int) -> list[Task]:
    return [Task(f"part{i:03d}", "docs", [{"id": f"{i}-{k}", "text": "lorem ipsum " * 10}
                                          for k in range(per)]) for i in range(parts)]


def disk_full_then_resume(tmp: Path, parts: int, per: int) -> dict:
    out, ckpt, rej = tmp / "out", str(tmp / "ckpt"), str(tmp / "rejected")
    out.mkdir(parents=True)
    size = sum(len("".join(json.dumps(d) + "\n" for d in t.data)) for t in documents(parts, per))

    def run(quota: int):
        return Pipeline("case1", stages=[QuotaJsonWriter(str(out), quota)]).run(
            LocalExecutor(num_workers=1), initial_tasks=documents(parts, per),
            checkpoint_dir=ckpt, rejected_dir=rej, summary=False, raise_on_failure=False)

    def written() -> list[str]:
        return [json.loads(line)["id"] for f in out.glob("*.jsonl")
                for line in f.read_text().splitlines()]

    first = run(int(size * 0.35))  # the disk holds about a third of the output
    n_first = len(written())
    second = run(0)  # space freed
    ids = written()
    return {"documents": parts * per, "written_first_run": n_first, "first_ok": first.ok,
            "failed_first_run": len(first.failed), "skipped_on_resume":
            second.stats.stages[0].skipped, "written_after_resume": len(ids),
            "written_twice": len(ids) - len(set(ids)), "second_ok": second.ok}


def test_disk_full_then_freed_space_writes_every_document_once(tmp_path):
    r = disk_full_then_resume(tmp_path, parts=10, per=50)
    assert not r["first_ok"] and r["failed_first_run"] > 0  # the full disk is not silent
    assert r["written_first_run"] < 500
    assert r["skipped_on_resume"] == r["written_first_run"] // 50  # only written ones skipped
    assert r["written_after_resume"] == 500 and r["written_twice"] == 0 and r["second_ok"]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(disk_full_then_resume(Path(tmp), parts=20, per=600)))
    sys.exit(0)
