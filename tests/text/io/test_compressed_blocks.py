"""A big compressed JSONL file (.gz, .zst, .bz2, .xz) is read in blocks of its decompressed
bytes, never whole: every line exactly once for every block size and in any order of the
blocks, partition ids from the file alone, and the memory of a read is a block, not the file."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
import tracemalloc

import pyarrow as pa
import pytest
from curator import EMPTY_TASK, LocalExecutor, Pipeline
from curator.stages.file_partitioning import block_task_id
from curator_text import JsonlReader, JsonlReaderStage, JsonlWriter
from curator_text.io.compressed import read_decompressed_range
from curator_text.io.partitioning import BYTE_RANGE_KEY, ByteRangePartitioningStage

from tests.text.io.blocks import BAD, read_rows, tricky_lines


def _compress(path, data: bytes) -> None:
    name = str(path)
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(data))
    elif name.endswith(".bz2"):
        path.write_bytes(bz2.compress(data))
    elif name.endswith(".xz"):
        path.write_bytes(lzma.compress(data))
    else:
        with pa.CompressedOutputStream(name, "zstd") as fh:
            fh.write(data)


def _tricky(path) -> tuple[bytes, list[dict]]:
    data, rows = tricky_lines()
    _compress(path, data)
    return data, rows


@pytest.mark.parametrize("ext", [".gz", ".zst", ".bz2", ".xz"])
def test_every_line_once_for_every_block_size_and_order(tmp_path, ext) -> None:
    path = tmp_path / f"tricky.jsonl{ext}"
    data, rows = _tricky(path)
    split = 0
    for blocksize in range(1, len(data) + 2):
        tasks = ByteRangePartitioningStage(file_paths=str(path),
                                           blocksize=blocksize).process(EMPTY_TASK)
        split += len(tasks) > 1
        for order in (tasks, tasks[::-1]):  # in order: one stream; reversed: reopened
            got, rejected = read_rows(order)
            assert sorted(got, key=lambda r: r["id"]) == rows, (blocksize, len(tasks))
            assert [r.record["text"].encode() for r in rejected] == [BAD.decode().encode()]
    assert split  # small block sizes did split the compressed file


def test_blocks_are_ranges_of_the_decompressed_bytes_named_from_the_file(tmp_path) -> None:
    path = tmp_path / "f.jsonl.gz"
    data, _ = _tricky(path)
    tasks = ByteRangePartitioningStage(file_paths=str(path), blocksize=20).process(EMPTY_TASK)
    again = ByteRangePartitioningStage(file_paths=str(path), blocksize=20).process(EMPTY_TASK)
    assert [t.metadata[BYTE_RANGE_KEY] for t in tasks] == [
        [s, min(s + 20, len(data))] for s in range(0, len(data), 20)]
    assert [t.task_id for t in tasks] == [t.task_id for t in again] == [
        block_task_id(str(path), i) for i in range(len(tasks))]


def test_a_big_compressed_file_is_read_in_bounded_memory(tmp_path) -> None:
    rng = random.Random(0)
    words = [("".join(rng.choice("abcdefghij") for _ in range(6))) for _ in range(2000)]
    lines = [json.dumps({"id": i, "text": " ".join(rng.choices(words, k=300))})
             for i in range(8000)]
    data = ("\n".join(lines) + "\n").encode()  # ~17 MB
    path = tmp_path / "big.jsonl.gz"
    _compress(path, data)
    tasks = ByteRangePartitioningStage(file_paths=str(path), blocksize="1MB").process(EMPTY_TASK)
    assert len(tasks) >= 16
    stage, ids = JsonlReaderStage(), []
    tracemalloc.start()
    try:
        for t in tasks:
            ids += stage.process(t).to_pyarrow()["id"].to_pylist()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ids == list(range(8000))
    assert peak < 4 * 2**20, f"peak {peak / 2**20:.1f} MB for a {len(data) / 2**20:.0f} MB file"


def test_a_kept_stream_continues_and_an_earlier_block_reopens(tmp_path) -> None:
    path = tmp_path / "s.jsonl.zst"
    data = b"".join(b'{"i": %d}\n' % i for i in range(5000))
    _compress(path, data)
    p = str(path)
    first, off = read_decompressed_range(p, 0, 1000)
    second, off2 = read_decompressed_range(p, 1000, 2000)  # continues the kept stream
    again, off3 = read_decompressed_range(p, 0, 1000)  # before it: a new stream
    assert off == 0 and off2 == len(first) and (bytes(again), off3) == (bytes(first), 0)
    assert bytes(first + second) == data[:len(first) + len(second)]


def test_pipeline_writes_every_row_once_from_a_compressed_file(tmp_path) -> None:
    rng = random.Random(1)
    rows = [{"id": i, "text": " ".join(f"w{rng.randrange(10**6)}" for _ in range(i % 50))}
            for i in range(3000)]
    path = tmp_path / "in" / "docs.jsonl.zst"
    path.parent.mkdir()
    _compress(path, "".join(json.dumps(r) + "\n" for r in rows).encode())
    assert path.stat().st_size > 16 * 2**10  # bigger than a block: split
    out = tmp_path / "out"
    result = Pipeline("z", stages=[JsonlReader(str(path.parent), blocksize="16KB"),
                                   JsonlWriter(str(out))]).run(
        LocalExecutor(num_workers=2), summary=False)
    files = sorted(out.glob("*.jsonl"))
    assert len(files) > 4
    assert {f.stem for f in files} == {block_task_id(str(path), i) for i in range(len(files))}
    got = [json.loads(line)["id"] for f in files for line in f.read_text().splitlines()]
    assert sorted(got) == list(range(3000))
    assert result.ok
