"""A run killed after k of n partitions resumes from its checkpoint: same output, none twice;
and a partition whose writer failed (disk full) is not "done": the resumed run writes it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.core.executors.stages import expected_records, make_partitions, read_records

ROOT = Path(__file__).resolve().parents[3]
EXECUTORS = ["local", pytest.param("ray_data", marks=pytest.mark.ray),
             pytest.param("ray_actor_pool", marks=pytest.mark.ray)]
N = 6


_started: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def _end_leftover_jobs():
    """A failed assertion must not leave a stalled job holding the shared cluster's CPUs."""
    yield
    while _started:
        proc = _started.pop()
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(30)


def _job(kind: str, out: Path, ckpt: Path, hang_after: int, address: str | None,
         **extra: object) -> subprocess.Popen:
    opts = {"kind": kind, "out": str(out), "ckpt": str(ckpt), "n": N, "hang_after": hang_after,
            "address": address, **extra}
    args = [sys.executable, "-m", "tests.core.executors.stages", json.dumps(opts)]
    env = {**os.environ, "CURATOR_SUMMARY": "0", "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    # output to files, not pipes: a job that fills an unread pipe would stall in its write
    log = out.parent / f"{out.name}.job"
    with open(f"{log}.out", "w") as stdout, open(f"{log}.err", "w") as stderr:
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=stdout, stderr=stderr,
                                start_new_session=True)
    proc.log = log  # type: ignore[attr-defined]
    _started.append(proc)
    return proc


def _stderr(proc: subprocess.Popen) -> str:
    return Path(f"{proc.log}.err").read_text()[-3000:]  # type: ignore[attr-defined]


def _finish(proc: subprocess.Popen) -> dict:
    proc.wait(timeout=240)
    assert proc.returncode == 0, _stderr(proc)
    return json.loads(Path(f"{proc.log}.out").read_text().strip().splitlines()[-1])


@pytest.mark.parametrize("kind", EXECUTORS)
def test_killed_run_resumes_to_the_same_output(kind, tmp_path, request):
    address = request.getfixturevalue("ray_cluster").address if kind != "local" else None
    # The reference: one uninterrupted run.
    ref = tmp_path / "ref"
    _finish(_job(kind, ref, tmp_path / "ref_ckpt", 0, address))

    # A run whose writer stalls once 2 partitions are done; we SIGKILL it there.
    out, ckpt = tmp_path / "out", tmp_path / "ckpt"
    proc = _job(kind, out, ckpt, 2, address)
    done_dir = ckpt / "done"
    deadline = time.monotonic() + 240
    while not (done_dir.is_dir() and len(os.listdir(done_dir)) >= 2):
        assert proc.poll() is None, _stderr(proc)
        assert time.monotonic() < deadline, (
            f"the run never marked 2 partitions done:\n{_stderr(proc)}")
        time.sleep(0.2)
    time.sleep(1.0)  # let in-flight work land (it must not be marked twice or lost)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    done_before = len(os.listdir(done_dir))
    assert 2 <= done_before < N

    resumed = _finish(_job(kind, out, ckpt, 0, address))
    assert resumed["skipped"] == done_before  # finished partitions were not redone
    assert read_records(str(out)) == read_records(str(ref))  # same records, none twice
    assert len(read_records(str(out))) == 3 * N
    assert len(os.listdir(done_dir)) == N


@pytest.mark.parametrize("kind", EXECUTORS)
def test_full_disk_then_kill_then_resume_writes_exactly_the_missing_partitions(kind, tmp_path,
                                                                               request):
    """Issue 13 case 1 on every executor. Run 1: the "disk" is full for partitions 1 and 3
    (their files are too big: the writer raises ENOSPC after 100 bytes, on every retry), 0, 2
    and 4 are written, the second half of 5 stalls; the driver is killed with SIGKILL. Run 2,
    after "freeing space", must skip exactly 0, 2 and 4 and write the rest: every record once."""
    address = request.getfixturevalue("ray_cluster").address if kind != "local" else None
    out, ckpt, rejected = tmp_path / "out", tmp_path / "ckpt", tmp_path / "rejected"
    big = [1, 3]
    proc = _job(kind, out, ckpt, 0, address, full_after=100, big=big, rejected=str(rejected),
                hang_on="part005_1")
    done_dir, failed_dir = ckpt / "done", rejected / "JsonWriter"

    def landed() -> tuple[int, int]:
        done = len(os.listdir(done_dir)) if done_dir.is_dir() else 0
        failed = len(list(failed_dir.glob("*.failed.jsonl"))) if failed_dir.is_dir() else 0
        return done, failed

    deadline = time.monotonic() + 240
    while landed() < (3, 4):  # 3 partitions written, both halves of 1 and 3 failed
        assert proc.poll() is None, _stderr(proc)
        assert time.monotonic() < deadline, f"run 1 never got there: {landed()}\n{_stderr(proc)}"
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    # the partitions whose writer failed are NOT done (before the fix all four were)
    assert sorted(os.listdir(done_dir)) == ["part000.json", "part002.json", "part004.json"]
    kept = sorted(p.name for p in failed_dir.glob("*.failed.task.json"))
    assert kept == [f"part00{i}_{h}.failed.task.json" for i in big for h in (0, 1)]

    resumed = _finish(_job(kind, out, ckpt, 0, address, big=big, rejected=str(rejected)))
    assert resumed["ok"] and resumed["failed"] == []
    assert resumed["skipped"] == 3  # 0, 2 and 4 were not redone
    assert read_records(str(out)) == expected_records(make_partitions(N, big=tuple(big)))
    assert len(os.listdir(done_dir)) == N
    # the old failed-task entries were superseded by the resumed run (not left for a replay)
    assert not list(failed_dir.glob("*.failed.*"))
    assert len(list((rejected / ".superseded" / "JsonWriter").glob("*.failed.*"))) == 8
