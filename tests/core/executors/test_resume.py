"""A run killed after k of n partitions resumes from its checkpoint: same output, none twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.core.executors.stages import read_records

ROOT = Path(__file__).resolve().parents[3]
EXECUTORS = ["local", pytest.param("ray_data", marks=pytest.mark.ray),
             pytest.param("ray_actor_pool", marks=pytest.mark.ray)]
N = 6


def _job(kind: str, out: Path, ckpt: Path, hang_after: int, address: str | None,
         ) -> subprocess.Popen:
    args = [sys.executable, "-m", "tests.core.executors.stages", kind, str(out), str(ckpt),
            str(N), str(hang_after)] + ([address] if address else [])
    env = {**os.environ, "CURATOR_SUMMARY": "0", "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _finish(proc: subprocess.Popen) -> dict:
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 0, stderr[-3000:]
    return json.loads(stdout.strip().splitlines()[-1])


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
    deadline = time.monotonic() + 180
    while not (done_dir.is_dir() and len(os.listdir(done_dir)) >= 2):
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the run never marked 2 partitions done"
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
