"""Readers split big files into blocks by default: boundaries depend on the file alone (the same
partitions, ids and output names whatever the machine), every line is read exactly once whatever
the block size (no trailing newline, CRLF, multi-byte UTF-8 at a boundary, a malformed line at a
boundary rejected once), Parquet by row groups, and a resumed run redoes exactly the unfinished
blocks."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator import EMPTY_TASK, LocalExecutor, Pipeline, processing_stage
from curator.errors import ConfigError
from curator.run.tracker import CheckpointStore
from curator.stages.file_partitioning import (
    BLOCK_INDEX_KEY,
    BLOCK_SIZE_KEY,
    DEFAULT_BLOCK_SIZE,
    block_task_id,
)
from curator_text import JsonlReader, JsonlWriter, ParquetReader
from curator_text.io.partitioning import (
    BYTE_RANGE_KEY,
    ROW_GROUPS_KEY,
    ByteRangePartitioningStage,
    RowGroupPartitioningStage,
)

from tests.text.io.blocks import BAD, read_rows, tricky_lines


def _tricky_file(path) -> list[dict]:
    data, rows = tricky_lines()
    path.write_bytes(data)
    return rows


def test_every_line_read_once_for_every_block_size(tmp_path) -> None:
    path = tmp_path / "tricky.jsonl"
    rows = _tricky_file(path)
    size = path.stat().st_size
    for blocksize in range(1, size + 2):  # every boundary position, multi-byte ones included
        tasks = ByteRangePartitioningStage(file_paths=str(path),
                                           blocksize=blocksize).process(EMPTY_TASK)
        got, rejected = read_rows(tasks)
        assert got == rows, blocksize
        assert [r.record["text"].encode() for r in rejected] == [BAD.decode().encode()], blocksize


def test_boundaries_are_a_function_of_the_file_size_only(tmp_path) -> None:
    path = tmp_path / "f.jsonl"
    _tricky_file(path)
    size = path.stat().st_size
    tasks = ByteRangePartitioningStage(file_paths=str(path), blocksize=10).process(EMPTY_TASK)
    assert [t.metadata[BYTE_RANGE_KEY] for t in tasks] == [
        [s, min(s + 10, size)] for s in range(0, size, 10)]
    assert [t.task_id for t in tasks] == [block_task_id(str(path), i) for i in range(len(tasks))]
    assert tasks[3].task_id.startswith("f-") and tasks[3].task_id.endswith("-00003")
    assert all(t.metadata[BLOCK_SIZE_KEY] == 10 for t in tasks)
    assert [t.metadata[BLOCK_INDEX_KEY] for t in tasks] == list(range(len(tasks)))


def _big_jsonl(path, min_bytes: int) -> int:
    """A JSONL file of at least ``min_bytes``; returns its line count."""
    line = json.dumps({"text": "word " * 200}).encode()
    n = min_bytes // (len(line) + 12) + 1
    with open(path, "wb") as fh:
        for i in range(n):
            fh.write(b'{"id": %d, ' % i + line[1:] + b"\n")
    return n


def test_big_file_split_by_default_and_with_files_per_partition(tmp_path) -> None:
    d = tmp_path / "in"
    d.mkdir()
    n = _big_jsonl(d / "big.jsonl", DEFAULT_BLOCK_SIZE + DEFAULT_BLOCK_SIZE // 2)
    for name in ("a", "b", "c"):
        (d / f"{name}.jsonl").write_text(json.dumps({"id": -1, "text": name}) + "\n")
    size = (d / "big.jsonl").stat().st_size
    plain = ByteRangePartitioningStage(file_paths=str(d)).process(EMPTY_TASK)
    grouped = ByteRangePartitioningStage(file_paths=str(d), files_per_partition=3).process(EMPTY_TASK)
    for tasks in (plain, grouped):
        blocks = [t for t in tasks if BYTE_RANGE_KEY in t.metadata]
        assert [t.metadata[BYTE_RANGE_KEY] for t in blocks] == [
            [0, DEFAULT_BLOCK_SIZE], [DEFAULT_BLOCK_SIZE, size]]
        assert all(t.data == [str(d / "big.jsonl")] for t in blocks)
    # files_per_partition still groups the small files; the big one is never in a group
    assert [t.data for t in grouped if BYTE_RANGE_KEY not in t.metadata] == [
        [str(d / "a.jsonl"), str(d / "b.jsonl")], [str(d / "c.jsonl")]]
    got, rejected = read_rows(plain)
    assert not rejected and len(got) == n + 3 and len({r["id"] for r in got}) == n + 1


def _run(src, out, cpus: int, **reader) -> dict[str, bytes]:
    Pipeline("p", stages=[JsonlReader(file_paths=str(src), **reader),
                          JsonlWriter(path=str(out))]).run(LocalExecutor(cpus=cpus),
                                                           summary=False)
    return {f: (out / f).read_bytes() for f in sorted(os.listdir(out)) if not f.startswith(".")}


def test_same_partitions_and_output_names_on_any_machine(tmp_path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    _big_jsonl(src / "part.jsonl", 40_000)
    (src / "small.jsonl").write_text(json.dumps({"id": 1, "text": "x"}) + "\n")
    one = _run(src, tmp_path / "out1", cpus=1, blocksize=8192)
    many = _run(src, tmp_path / "out8", cpus=8, blocksize=8192)
    assert one == many  # same files, same names, same bytes
    names = [n for n in one if n.startswith("part-")]
    assert names == [f"{block_task_id(str(src / 'part.jsonl'), i)}.jsonl" for i in range(5)]
    small = ByteRangePartitioningStage(file_paths=str(src / "small.jsonl")).process(EMPTY_TASK)
    assert f"{small[0].task_id}.jsonl" in one  # a file that fits keeps its whole-file name


def test_parquet_split_by_row_groups(tmp_path) -> None:
    path = tmp_path / "big.parquet"
    table = pa.table({"id": list(range(5000)), "text": [f"doc {i} " * 20 for i in range(5000)]})
    pq.write_table(table, path, row_group_size=500)
    tasks = RowGroupPartitioningStage(file_paths=str(path), blocksize=30_000).process(EMPTY_TASK)
    groups = [t.metadata[ROW_GROUPS_KEY] for t in tasks]
    assert len(tasks) > 2 and groups[0][0] == 0 and groups[-1][1] == 10
    assert all(a[1] == b[0] for a, b in zip(groups, groups[1:], strict=False))
    out = Pipeline("pq", stages=[ParquetReader(file_paths=str(path), blocksize=30_000,
                                               fields=["id"])]).run(summary=False)
    assert len(out) == len(tasks)
    assert sorted(i for t in out for i in t.to_pyarrow()["id"].to_pylist()) == list(range(5000))


@processing_stage(name="crash_once")
def _crash_once(batch):
    """Logs each block it sees; fails the block named in CRASH_BLOCK while that is set."""
    with open(os.environ["BLOCK_LOG"], "a") as fh:
        fh.write(batch.task_id + "\n")
    if batch.task_id == os.environ.get("CRASH_BLOCK"):
        raise RuntimeError("crash")
    return batch


def test_resume_redoes_exactly_the_unfinished_blocks(tmp_path, monkeypatch) -> None:
    src = tmp_path / "in"
    src.mkdir()
    n = _big_jsonl(src / "big.jsonl", 40_000)
    log, out, ckpt = tmp_path / "log.txt", tmp_path / "out", str(tmp_path / "ckpt")
    ids = [block_task_id(str(src / "big.jsonl"), i) for i in range(5)]
    monkeypatch.setenv("BLOCK_LOG", str(log))
    monkeypatch.setenv("CRASH_BLOCK", ids[2])

    def pipe() -> Pipeline:
        return Pipeline("p", stages=[JsonlReader(file_paths=str(src), blocksize=8192),
                                     _crash_once, JsonlWriter(path=str(out))])

    first = pipe().run(checkpoint_dir=ckpt, max_retries=0, summary=False, raise_on_failure=False)
    assert not first.ok
    assert CheckpointStore(ckpt).done() == {i for i in ids if i != ids[2]}
    log.write_text("")
    monkeypatch.delenv("CRASH_BLOCK")
    again = pipe().run(checkpoint_dir=ckpt, summary=False)
    assert again.ok and log.read_text().split() == [ids[2]]  # only the unfinished block
    written = [json.loads(line)["id"] for f in sorted(out.glob("*.jsonl"))
               for line in f.read_text().splitlines()]
    assert sorted(written) == list(range(n))  # every line once, none twice

    with pytest.raises(ConfigError, match="blocksize=8192"):  # another block size: refused
        Pipeline("p", stages=[JsonlReader(file_paths=str(src), blocksize=4096),
                              JsonlWriter(path=str(out))]).run(checkpoint_dir=ckpt, summary=False)
