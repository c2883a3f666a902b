"""Issue 31: a user's files are never destroyed or duplicated, replayed as the issue tells it
through the real ``curator`` command (and the Python API for workflows):

* ``mode: overwrite`` next to files Curator never wrote keeps them;
* an output folder equal to, inside or a parent of the input is refused before anything is
  touched (readers, custom sources, downloaders, workflows);
* Ctrl-C (SIGINT) or a kill (SIGKILL) mid-run, then every re-run the messages advise: each
  document is written exactly once, and the temp files of the killed run are gone;
* ``mode: append`` twice writes each partition once.

Runs are interrupted on the ``slow://`` disk of :mod:`tests.e2e.slowfs` (real local files whose
writes take a while), so the signal lands while partitions are being written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.slowfs import ROOT, sitecustomize

N_FILES, PER_FILE = 12, 25


def _inputs(folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(N_FILES):
        (folder / f"part{i:02d}.jsonl").write_text("".join(
            json.dumps({"id": f"{i}-{k}", "text": f"document {k} of file {i} " * 3}) + "\n"
            for k in range(PER_FILE)))
    return sorted(f"{i}-{k}" for i in range(N_FILES) for k in range(PER_FILE))


def _spec(path: Path, data: Path, out: str, mode: str | None = None) -> Path:
    mode_line = f"\n    mode: {mode}" if mode else ""
    path.write_text(f"""
name: docs
stages:
  - reader: JsonlReader
    file_paths: {data}
    files_per_partition: 1
  - writer: JsonlWriter
    path: {out}{mode_line}
""")
    return path


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CURATOR_SUMMARY", None)
    env.update(extra or {})
    return env


def _curator(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "curator", *args], capture_output=True,
                          text=True, env=_env(env), cwd=ROOT, timeout=300)


def _ids(out: Path) -> list[str]:
    return sorted(json.loads(line)["id"] for f in out.rglob("*.jsonl")
                  for line in f.read_text().splitlines())


def _litter(folder: Path) -> list[Path]:
    return [f for f in folder.rglob("*") if ".tmp-" in f.name]


# -- overwrite next to foreign files -------------------------------------------------------------

def test_overwrite_keeps_files_curator_never_wrote(tmp_path):
    ids = _inputs(tmp_path / "in")
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "notes.txt").write_text("my notes")
    (out / "sub" / "keep.md").write_text("# keep me")
    spec = _spec(tmp_path / "spec.yaml", tmp_path / "in", str(out), mode="overwrite")
    for _ in range(2):  # the second run deletes the first one's files, never the user's
        run = _curator("run", str(spec))
        assert run.returncode == 0, run.stderr[-3000:]
        assert (out / "notes.txt").read_text() == "my notes"
        assert (out / "sub" / "keep.md").read_text() == "# keep me"
        assert _ids(out) == ids  # each document once


# -- output folder vs input folder ---------------------------------------------------------------

@pytest.mark.parametrize("where", ["equal", "inside", "parent"])
@pytest.mark.parametrize("mode", ["overwrite", "ignore"])
def test_an_output_folder_overlapping_the_input_is_refused_before_anything(tmp_path, where, mode):
    data = tmp_path / "data"
    ids = _inputs(data)
    (data / "readme.txt").write_text("mine")
    out = {"equal": data, "inside": data / "curated", "parent": tmp_path}[where]
    spec = _spec(tmp_path / "spec.yaml", data, str(out), mode=mode)
    before = sorted((p, p.stat().st_mtime_ns) for p in tmp_path.rglob("*") if p.is_file())
    run = _curator("run", str(spec))
    assert run.returncode != 0
    assert "the input path" in run.stderr and "nothing was touched" in run.stderr, run.stderr
    after = sorted((p, p.stat().st_mtime_ns) for p in tmp_path.rglob("*") if p.is_file())
    assert after == before  # no file deleted, added or rewritten
    assert _ids(data) == ids


# -- interrupt (SIGINT / SIGKILL) then every advised re-run ------------------------------------

def _interrupt(spec: Path, out: Path, sig: int, env: dict[str, str]) -> subprocess.Popen:
    """Start ``curator run spec`` on the slow disk and send ``sig`` once 3 files are written."""
    proc = subprocess.Popen([sys.executable, "-m", "curator", "run", str(spec)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env({**env, "CURATOR_TEST_SLOW_WRITE": "0.4"}), cwd=ROOT)
    deadline = time.monotonic() + 180
    while len(list(out.glob("*.jsonl"))) < 3:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        assert time.monotonic() < deadline, "the run never wrote 3 files"
        time.sleep(0.02)
    proc.send_signal(sig)
    proc.wait(timeout=120)
    return proc


RERUNS = {  # what the interrupt message and the error messages advise
    "same command": [],
    "mode=append": ["--set", "stages.JsonlWriter.mode=append"],
    "mode=overwrite": ["--set", "stages.JsonlWriter.mode=overwrite"],
    "mode=error": ["--set", "stages.JsonlWriter.mode=error"],
    "--checkpoint-dir": ["--checkpoint-dir", "CKPT"],
}


@pytest.mark.parametrize("rerun", list(RERUNS))
def test_ctrl_c_then_every_advised_rerun_writes_each_document_once(tmp_path, rerun):
    ids = _inputs(tmp_path / "in")
    out = tmp_path / "out"
    env = sitecustomize(tmp_path / "site")
    spec = _spec(tmp_path / "spec.yaml", tmp_path / "in", f"slow://{out}")
    proc = _interrupt(spec, out, signal.SIGINT, env)
    err = proc.stderr.read()
    assert proc.returncode == 130, err[-3000:]
    assert "run the same command again to resume" in err
    done = len(list(out.glob("*.jsonl")))
    assert 3 <= done < N_FILES  # interrupted mid-run
    args = [a.replace("CKPT", str(tmp_path / "ckpt")) for a in RERUNS[rerun]]
    again = _curator("run", str(spec), *args, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert _ids(out) == ids  # every document exactly once
    assert len(list(out.glob("*.jsonl"))) == N_FILES
    assert not _litter(out)
    if rerun != "--checkpoint-dir":  # resumed from the state beside the manifest
        line = next(x for x in again.stderr.splitlines() if x.startswith("resumed: "))
        skipped, redone = (int(w) for w in line.split() if w.isdigit())
        assert skipped >= 3 and skipped + redone == N_FILES, line
    third = _curator("run", str(spec), env=env)  # a finished run: a plain re-run recomputes
    assert third.returncode == 0 and "resumed:" not in third.stderr
    assert _ids(out) == ids and not (out / ".curator-checkpoint").exists()


def test_a_killed_run_resumes_and_its_temp_files_go(tmp_path):
    ids = _inputs(tmp_path / "in")
    out = tmp_path / "out"
    env = sitecustomize(tmp_path / "site")
    spec = _spec(tmp_path / "spec.yaml", tmp_path / "in", f"slow://{out}")
    proc = _interrupt(spec, out, signal.SIGKILL, env)
    assert proc.returncode == -signal.SIGKILL
    assert (out / ".curator-lock.json").exists()  # left by the dead process
    again = _curator("run", str(spec), env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "resumed: " in again.stderr
    assert _ids(out) == ids and not _litter(out)
    assert not (out / ".curator-lock.json").exists()


# -- append twice --------------------------------------------------------------------------------

def test_append_twice_writes_each_partition_once(tmp_path):
    ids = _inputs(tmp_path / "in")
    out = tmp_path / "out"
    spec = _spec(tmp_path / "spec.yaml", tmp_path / "in", str(out), mode="append")
    names = None
    for _ in range(2):
        run = _curator("run", str(spec))
        assert run.returncode == 0, run.stderr[-3000:]
        assert _ids(out) == ids
        now = sorted(f.name for f in out.glob("*.jsonl"))
        assert names is None or now == names  # never a second name for a partition
        names = now
    assert len(names) == N_FILES
