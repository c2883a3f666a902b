"""Output directory save modes, run manifests and locks (curator.output_dir via Pipeline.run)."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from curator import FileGroupTask, Pipeline, ProcessingStage, Task
from curator.errors import ConfigError
from curator.io import atomic_write
from curator.output_dir import (
    LOCK_NAME,
    MANIFEST_NAME,
    ManagedOutput,
    OutputDirError,
    OutputDirLockedError,
)

REPO = Path(__file__).resolve().parents[2]


@dataclass
class LinesWriter(ManagedOutput, ProcessingStage[Task, FileGroupTask]):
    """A real writer: one ``{task_id}.txt`` file of lines per task."""

    path: str = ""
    mode: str = "ignore"
    name: str = "LinesWriter"

    def process(self, task: Task) -> FileGroupTask:
        out = self.output_file(f"{task.task_id}.txt")
        with atomic_write(out, "w") as fh:
            fh.write("".join(f"{x}\n" for x in task.data))
        return FileGroupTask(task.task_id, task.dataset_name, [out])


class Crash(ProcessingStage):
    """Fails on the task named in ``fail`` (the first run of a resume test)."""

    fail: str | None = None

    def process(self, task):
        if task.task_id == Crash.fail:
            raise RuntimeError("crash")
        return task


class DropAll(ProcessingStage):
    def process(self, task):
        return None


def _tasks(prefix: str, n: int, rows: int) -> list[Task]:
    return [Task(f"{prefix}{i}", "ds", [f"{prefix}{i}-{j}" for j in range(rows)])
            for i in range(n)]


def _run(out, tasks, mode="ignore", **kw):
    return Pipeline("p", stages=[LinesWriter(path=str(out), mode=mode)]).run(
        initial_tasks=tasks, summary=False, **kw)


def _rows(out: Path) -> list[str]:
    return sorted(line for f in out.glob("*.txt") for line in f.read_text().splitlines())


def test_error_mode_refuses_a_dirty_directory_before_writing(tmp_path):
    out = tmp_path / "out"
    _run(out, _tasks("a", 3, 5))  # 15 rows from the first run
    assert len(_rows(out)) == 15 and (out / MANIFEST_NAME).exists()
    assert not (out / LOCK_NAME).exists()  # released when the run ends
    with pytest.raises(OutputDirError,
                       match=r"^LinesWriter: output .* holds 3 file\(s\) from another run.*'ignore'"):
        _run(out, _tasks("b", 2, 6), mode="error")  # a 12-row run
    assert len(_rows(out)) == 15 and not list(out.glob("b*"))  # refused before writing
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("x")
    with pytest.raises(OutputDirError, match="outside Curator"):
        _run(tmp_path / "foreign", _tasks("b", 1, 1), mode="error")


def test_the_default_mode_is_nemos_ignore_write_into_the_directory(tmp_path):
    out = tmp_path / "out"
    assert LinesWriter(path=str(out)).mode == "ignore"
    _run(out, _tasks("a", 3, 5))
    _run(out, _tasks("a", 3, 5))  # a plain re-run replaces its own files: no duplicates
    assert len(_rows(out)) == 15 and len(list(out.glob("*.txt"))) == 3
    _run(out, _tasks("b", 1, 2))  # other names: written beside the earlier files
    assert len(_rows(out)) == 17


def test_overwrite_append_and_ignore_do_what_they_say(tmp_path):
    out = tmp_path / "out"
    _run(out, _tasks("a", 3, 5))  # 15 rows
    _run(out, _tasks("b", 2, 6), mode="overwrite")  # 12 rows replace them
    assert _rows(out) == sorted(f"b{i}-{j}" for i in range(2) for j in range(6))
    _run(out, _tasks("b", 2, 6), mode="append")  # same partitions: replaced, never a 2nd copy
    _run(out, _tasks("b", 2, 6), mode="append")
    assert len(_rows(out)) == 12 and sorted(f.name for f in out.glob("*.txt")) == \
        ["b0.txt", "b1.txt"]
    _run(out, _tasks("c", 1, 3), mode="append")  # a new partition is added
    assert len(_rows(out)) == 15
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert sorted(manifest["files"]) == ["b0.txt", "b1.txt", "c0.txt"]
    assert len(manifest["runs"]) == 2  # the runs whose files are still there
    _run(out, _tasks("d", 1, 3), mode="ignore")  # NeMo's ignore: writes beside them
    assert len(_rows(out)) == 18


def test_overwrite_deletes_only_curators_own_files(tmp_path, caplog):
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    (out / "sub" / "keep.md").write_text("mine too")
    with caplog.at_level(logging.INFO, logger="curator.output_dir"):
        _run(out, _tasks("a", 2, 2), mode="overwrite")
        _run(out, _tasks("b", 1, 2), mode="overwrite")
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "sub" / "keep.md").read_text() == "mine too"
    assert sorted(f.name for f in out.glob("*.txt")) == ["b0.txt", "notes.txt"]
    assert "2 file(s) Curator did not write" in caplog.text and "stay untouched" in caplog.text


def test_resume_into_a_directory_dirty_with_its_own_files(tmp_path):
    out, ckpt = tmp_path / "out", str(tmp_path / "out" / "_ckpt")  # checkpoint inside the output
    stages = [Crash(), LinesWriter(path=str(out))]
    Crash.fail = "a2"
    first = Pipeline("p", stages=stages).run(initial_tasks=_tasks("a", 3, 5),
                                              checkpoint_dir=ckpt, max_retries=0, summary=False,
                                              raise_on_failure=False)
    assert len(first) == 2 and len(_rows(out)) == 10  # a2 failed
    Crash.fail = None
    for mode in ("error", "overwrite"):  # the same run: neither refused nor wiped
        Pipeline("p", stages=[Crash(), LinesWriter(path=str(out), mode=mode)]).run(
            initial_tasks=_tasks("a", 3, 5), checkpoint_dir=ckpt, summary=False,
            raise_on_failure=False)
        assert len(_rows(out)) == 15
    with pytest.raises(OutputDirError):  # a run without that checkpoint is another run
        _run(out, _tasks("a", 3, 5), mode="error")


def test_mode_is_checked_on_the_writer():
    with pytest.raises(ConfigError, match="LinesWriter: mode must be one of"):
        from curator.output_dir import check_mode

        check_mode("replace", "LinesWriter")


_HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from curator import Pipeline, ProcessingStage, Task
    from core.test_output_dir import LinesWriter

    class WaitForFile(ProcessingStage):
        def process(self, task):
            while not Path({go!r}).exists():
                time.sleep(0.05)
            return task

    Pipeline("holder", stages=[WaitForFile(), LinesWriter(path={out!r})]).run(
        initial_tasks=[Task("h0", "ds", ["x"])], summary=False)
""")


def test_a_second_concurrent_run_is_refused_naming_the_first(tmp_path):
    out, go = tmp_path / "out", tmp_path / "go"
    script = tmp_path / "holder.py"
    script.write_text(_HOLDER.format(tests=str(REPO / "tests"), go=str(go), out=str(out)))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=str(REPO))
    try:
        deadline = time.monotonic() + 120
        while not (out / LOCK_NAME).exists():
            assert proc.poll() is None, "the first run ended before taking the lock"
            assert time.monotonic() < deadline, "the first run never took the lock"
            time.sleep(0.05)
        with pytest.raises(OutputDirLockedError, match=rf"pipeline 'holder', pid {proc.pid} on "
                                                       rf"host {socket.gethostname()}, started"):
            _run(out, _tasks("b", 1, 1), mode="overwrite")
        assert not list(out.glob("b*"))
    finally:
        go.write_text("")
        assert proc.wait(timeout=120) == 0
    assert _rows(out) == ["x"]
    assert not (out / LOCK_NAME).exists()


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path, caplog):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).write_text(json.dumps({
        "run_id": "old", "pipeline": "crashed", "pid": dead.pid, "host": socket.gethostname(),
        "started_at": time.time() - 60}))
    with caplog.at_level(logging.WARNING, logger="curator.output_dir"):
        _run(out, _tasks("a", 1, 2))
    assert "stale lock" in caplog.text and f"pid {dead.pid}" in caplog.text
    assert len(_rows(out)) == 2 and not (out / LOCK_NAME).exists()
    (out / LOCK_NAME).write_text(json.dumps({  # a live process elsewhere: refused
        "run_id": "x", "pipeline": "other", "pid": os.getpid(), "host": "elsewhere",
        "started_at": time.time()}))
    with pytest.raises(OutputDirLockedError, match="host elsewhere"):
        _run(out, _tasks("b", 1, 1), mode="append")


def test_two_writers_into_one_directory_share_a_claim_and_need_one_mode(tmp_path):
    out = tmp_path / "out"
    two = [LinesWriter(path=str(out), name="w1"), LinesWriter(path=str(out), name="w2")]
    Pipeline("p", stages=two).run(initial_tasks=_tasks("a", 1, 2), summary=False)
    assert len(json.loads((out / MANIFEST_NAME).read_text())["runs"]) == 1
    mixed = [LinesWriter(path=str(out), name="w1", mode="overwrite"),
             LinesWriter(path=str(out), name="w2", mode="append")]
    with pytest.raises(ConfigError, match="'w1' and 'w2' write to .* different modes"):
        Pipeline("p", stages=mixed).run(initial_tasks=_tasks("a", 1, 2), summary=False)
    assert not (out / LOCK_NAME).exists()


def test_a_run_that_left_no_files_does_not_make_the_directory_foreign(tmp_path):
    out, ckpt = tmp_path / "out", str(tmp_path / "ckpt")
    Pipeline("p", stages=[DropAll(), LinesWriter(path=str(out))]).run(
        initial_tasks=_tasks("z", 2, 2), summary=False,
        raise_on_failure=False)  # filtered everything: only a manifest
    assert not _rows(out) and (out / MANIFEST_NAME).exists()
    Crash.fail = "a1"
    Pipeline("p", stages=[Crash(), LinesWriter(path=str(out))]).run(
        initial_tasks=_tasks("a", 2, 2), checkpoint_dir=ckpt, max_retries=0, summary=False,
        raise_on_failure=False)
    Crash.fail = None
    Pipeline("p", stages=[Crash(), LinesWriter(path=str(out))]).run(  # resume: not refused
        initial_tasks=_tasks("a", 2, 2), checkpoint_dir=ckpt, summary=False, raise_on_failure=False)
    assert len(_rows(out)) == 4


# -- issue 31: input paths, resume without a checkpoint, the summary's words -------------------

@dataclass
class ListedSource(ProcessingStage):
    """A custom source stage that reads the ``*.txt`` files of the folders it declares in
    ``input_paths`` (as the docs ask)."""

    input_paths: list[str] | None = None
    name: str = "ListedSource"

    def process(self, task):
        return [Task(p.stem, "ds", p.read_text().splitlines())
                for folder in self.input_paths for p in sorted(Path(folder).glob("*.txt"))]


@pytest.mark.parametrize("where", ["equal", "inside", "parent"])
def test_an_output_overlapping_a_declared_input_path_is_refused_untouched(tmp_path, where):
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.txt").write_text("x\ny\n")
    out = {"equal": data, "inside": data / "out", "parent": tmp_path}[where]
    for mode in ("overwrite", "ignore", "append", "error"):
        with pytest.raises(OutputDirError, match=r"^LinesWriter: output directory .* "
                                                 r"(is|is inside|contains) the input path"):
            Pipeline("p", stages=[ListedSource([str(data)]),
                                  LinesWriter(path=str(out), mode=mode)]).run(summary=False)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.txt", "data"]  # nothing touched


def test_input_paths_of_reads_readers_workflows_downloaders_and_custom_stages():
    from curator.output_dir import input_paths_of
    from curator.stages.file_partitioning import FilePartitioningStage

    class Downloader:
        def __init__(self, download_dir):
            self._download_dir = download_dir

    class Download(ProcessingStage):
        name = "Download"

        def __init__(self):
            self.downloader = Downloader("/dl")

        def process(self, task):
            return task

    found = input_paths_of([FilePartitioningStage(file_paths=["/a", "/b"]), Download(),
                            ListedSource(["/c"])])
    assert found == [("FilePartitioningStage.file_paths", "/a"),
                     ("FilePartitioningStage.file_paths", "/b"),
                     ("Download.download_dir", "/dl"), ("ListedSource.input_paths", "/c")]


def test_without_a_checkpoint_a_failed_run_resumes_from_beside_the_manifest(tmp_path, capsys):
    out = tmp_path / "out"
    Crash.fail = "a2"
    first = Pipeline("p", stages=[Crash(), LinesWriter(path=str(out))]).run(
        initial_tasks=_tasks("a", 3, 5), max_retries=0, summary=False, raise_on_failure=False)
    assert not first.ok and (out / ".curator-checkpoint" / "done").is_dir()
    Crash.fail = None
    for mode in ("error", "ignore"):  # the same run: even "error" does not refuse it
        again = Pipeline("p", stages=[Crash(), LinesWriter(path=str(out), mode=mode)]).run(
            initial_tasks=_tasks("a", 3, 5), summary=True, raise_on_failure=False)
        assert again.ok and len(_rows(out)) == 15
        if mode == "error":
            assert again.resumed == (2, 1)
            assert "resumed: 2 partitions already done, 1 redone" in capsys.readouterr().err
        else:  # the finished run left nothing to resume: a plain re-run recomputes
            assert again.resumed is not None and again.resumed[0] == 0
            assert "resumed:" not in capsys.readouterr().err
    assert not (out / ".curator-checkpoint").exists()


def test_a_changed_pipeline_starts_over_instead_of_resuming(tmp_path):
    out = tmp_path / "out"
    Crash.fail = "a1"
    Pipeline("p", stages=[Crash(), LinesWriter(path=str(out))]).run(
        initial_tasks=_tasks("a", 2, 2), max_retries=0, summary=False, raise_on_failure=False)
    Crash.fail = None
    other = Pipeline("p", stages=[Crash(), LinesWriter(path=str(out), name="renamed")]).run(
        initial_tasks=_tasks("a", 2, 2), summary=False, raise_on_failure=False)
    assert other.resumed == (0, 2) and len(_rows(out)) == 4


class RejectTwo(ProcessingStage):
    name = "RejectTwo"

    def process(self, task):
        if task.task_id == "a0":
            self.reject(task, "too short", record={"line": 1})
            self.reject(task, "too short", record={"line": 2})
        if task.task_id == "a1":
            raise RuntimeError("boom")
        return task


def test_the_summary_names_rejected_records_and_failed_tasks_apart(tmp_path):
    result = Pipeline("p", stages=[RejectTwo(), LinesWriter(path=str(tmp_path / "o"))]).run(
        initial_tasks=_tasks("a", 3, 1), max_retries=0, summary=False, raise_on_failure=False)
    text = result.summary()
    assert "rejected 2 record(s) (RejectTwo: 2)" in text
    assert "NOT OK: failed 1 task(s) after their retries" in text and "records/tasks" not in text


def test_listing_an_output_folder_skips_curators_bookkeeping(tmp_path):
    from curator.io import expand_paths

    out = tmp_path / "out"
    Crash.fail = "a1"
    Pipeline("p", stages=[Crash(), LinesWriter(path=str(out))]).run(
        initial_tasks=_tasks("a", 2, 2), max_retries=0, summary=False, raise_on_failure=False)
    Crash.fail = None
    (out / ".curator-files").mkdir(exist_ok=True)
    (out / ".curator-files" / "x.json").write_text("{}")  # an unmerged journal entry
    assert list((out / ".curator-checkpoint" / "done").glob("*.json"))  # the resume state
    assert [Path(p).name for p in expand_paths(str(out))] == ["a0.txt"]
