"""Issue 13 items 2-3 through the real command: `curator run` exits non-zero when tasks failed
(a read-only or full output disk), keeps the failed tasks whole, and `curator replay` finishes
them once the disk is writable again; records rejected by design keep exit status 0.

The faulty disk is the fsspec file system ``faulty://`` of :mod:`tests.core.executors.fullfs`,
loaded in the subprocess through a ``sitecustomize.py``: tests run as root, where ``chmod`` does
not stop writes, and mounting a small tmpfs needs rights the test machines do not give.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.core.executors.fullfs import ROOT, sitecustomize

DOCS = {f"f{i}.jsonl": [{"id": f"{i}-{k}", "text": f"document {k} of file {i} " * 3}
                        for k in range(4)] for i in range(3)}


def _curator(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("CURATOR_TEST_DISK")}
    full.update(env, CURATOR_SUMMARY="0")
    return subprocess.run([sys.executable, "-m", "curator", *args], capture_output=True,
                          text=True, env=full, cwd=ROOT, timeout=180)


@pytest.fixture
def spec(tmp_path) -> Path:
    data = tmp_path / "in"
    data.mkdir()
    for name, rows in DOCS.items():
        lines = [json.dumps(r) for r in rows]
        if name == "f1.jsonl":
            lines.insert(2, "{not json")  # a malformed line: rejected by design
        (data / name).write_text("\n".join(lines) + "\n")
    path = tmp_path / "spec.yaml"
    path.write_text(f"""
name: docs
run: {{rejected_dir: {tmp_path / 'rejected'}, max_retries: 1}}
stages:
  - reader: JsonlReader
    file_paths: {data}
  - writer: JsonlWriter
    path: faulty://{tmp_path / 'out'}
""")
    return path


def _written(out: Path) -> list[str]:
    return sorted(json.loads(line)["id"] for f in out.glob("*.jsonl")
                  for line in f.read_text().splitlines())


ALL_IDS = sorted(r["id"] for rows in DOCS.values() for r in rows)


@pytest.mark.parametrize("fault", [{"CURATOR_TEST_DISK_READONLY": "1"},  # EROFS on every write
                                   {"CURATOR_TEST_DISK_LIMIT": "100"}],  # ENOSPC after 100 B
                         ids=["read-only", "disk-full"])
def test_failed_writes_exit_nonzero_and_replay_finishes_them(spec, tmp_path, fault):
    env = sitecustomize(tmp_path / "site")
    run = _curator("run", str(spec), env={**env, **fault})
    # before: "0 output tasks, 1 rejected", exit 0
    assert run.returncode == 1, run.stderr[-3000:]
    assert "Traceback" not in run.stderr  # the summary and exit status, not a raised error
    assert "0 output tasks, 1 rejected records, 3 failed tasks" in run.stderr
    assert f"curator replay {tmp_path / 'rejected'}" in run.stderr
    assert _written(tmp_path / "out") == []
    kept = sorted((tmp_path / "rejected" / "JsonlWriter").glob("*.failed.parquet"))
    assert len(kept) == 3  # each failed task whole, its data as Parquet
    assert sorted(i for f in kept for i in pq.read_table(f).column("id").to_pylist()) == ALL_IDS

    if "CURATOR_TEST_DISK_READONLY" in fault:  # replaying before the fix fails again, loudly
        still = _curator("replay", str(tmp_path / "rejected"), "--spec", str(spec),
                         env={**env, **fault})
        assert still.returncode == 1 and "3 failed tasks" in still.stderr
        assert "Traceback" not in still.stderr

    fixed = _curator("replay", str(tmp_path / "rejected"), "--spec", str(spec), env=env)
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert "3 output tasks, 0 rejected records, 0 failed tasks" in fixed.stderr
    assert _written(tmp_path / "out") == ALL_IDS  # every document once
    assert not list((tmp_path / "rejected" / "JsonlWriter").glob("*.failed.*"))


def test_records_rejected_by_design_keep_exit_status_zero(spec, tmp_path):
    run = _curator("run", str(spec), env=sitecustomize(tmp_path / "site"))
    assert run.returncode == 0, run.stderr[-3000:]
    assert "3 output tasks, 1 rejected records, 0 failed tasks" in run.stderr
    assert _written(tmp_path / "out") == ALL_IDS
