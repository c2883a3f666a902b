"""JsonlReader with ``blocksize``: a big file is read as byte-range blocks (one task each) that
give exactly the rows of a whole-file read; lines crossing block boundaries are read once and
malformed lines are rejected once."""

from __future__ import annotations

import json
import random

from curator import EMPTY_TASK, Pipeline
from curator_text import JsonlReader, JsonlReaderStage
from curator_text.io.partitioning import BYTE_RANGE_KEY, ByteRangePartitioningStage


def _big_file(path, n: int = 1500) -> tuple[list[int], list[str]]:
    """Rows of very different lengths (some longer than a block), with malformed lines."""
    rng = random.Random(7)
    ids, bad = [], []
    with open(path, "w") as fh:
        for i in range(n):
            if i % 97 == 13:
                line = f'{{"id": {i}, "text": broken'
                bad.append(line)
                fh.write(line + "\n")
                continue
            words = " ".join(rng.choice(["alpha", "beta", "gamma", "δέλτα"])
                             for _ in range(rng.choice([0, 1, 5, 40, 300, 3000])))
            fh.write(json.dumps({"id": i, "text": words}, ensure_ascii=False) + "\n")
            ids.append(i)
    return ids, bad


def _read(stage: JsonlReaderStage, tasks) -> tuple[list[int], list]:
    ids: list[int] = []
    for t in tasks:
        table = stage.process(t).to_pyarrow()
        ids += table["id"].to_pylist() if table.num_rows else []
    return ids, stage.drain_rejected()


def test_blocks_read_same_rows_once_and_reject_once(tmp_path) -> None:
    path = tmp_path / "big.jsonl"
    ids, bad = _big_file(path)
    size = path.stat().st_size
    whole = ByteRangePartitioningStage(file_paths=str(path), blocksize=size).process(EMPTY_TASK)
    assert len(whole) == 1 and BYTE_RANGE_KEY not in whole[0].metadata
    whole_ids, whole_rej = _read(JsonlReaderStage(), whole)
    assert whole_ids == ids and len(whole_rej) == len(bad)

    for blocksize in (997, 4096, "20KB"):
        tasks = ByteRangePartitioningStage(file_paths=str(path),
                                           blocksize=blocksize).process(EMPTY_TASK)
        assert len(tasks) > 5
        ranges = [t.metadata[BYTE_RANGE_KEY] for t in tasks]
        assert ranges[0][0] == 0 and ranges[-1][1] == size
        assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))
        assert len({t.task_id for t in tasks}) == len(tasks)
        again = ByteRangePartitioningStage(file_paths=str(path), blocksize=blocksize)
        assert [t.task_id for t in again.process(EMPTY_TASK)] == [t.task_id for t in tasks]

        got, rejected = _read(JsonlReaderStage(), tasks)
        assert got == ids  # same rows, same order, none twice
        assert sorted(r.record["text"] for r in rejected) == sorted(bad)
        assert len({r.record["byte_offset"] for r in rejected}) == len(bad)


def test_pipeline_with_blocksize_matches_whole_file_read(tmp_path) -> None:
    d = tmp_path / "in"
    d.mkdir()
    ids, _ = _big_file(d / "big.jsonl", n=400)
    (d / "small.jsonl").write_text(json.dumps({"id": -1, "text": "small"}) + "\n")
    small_task = ByteRangePartitioningStage(file_paths=str(d / "small.jsonl"),
                                            blocksize="8KB").process(EMPTY_TASK)[0]
    plain_task = ByteRangePartitioningStage(file_paths=str(d / "small.jsonl")).process(EMPTY_TASK)[0]
    assert small_task.task_id == plain_task.task_id  # files that fit keep their partition key

    out = Pipeline("blocks", stages=[JsonlReader(file_paths=str(d), blocksize="8KB",
                                                 fields=["id"])]).run(summary=False)
    assert len(out) > 3
    got = sorted(i for t in out for i in t.to_pyarrow()["id"].to_pylist())
    assert got == sorted([*ids, -1])


def test_compressed_file_is_split_in_decompressed_blocks(tmp_path) -> None:
    import gzip

    path = tmp_path / "big.jsonl.gz"
    raw = tmp_path / "raw.jsonl"
    ids, _ = _big_file(raw, n=300)
    path.write_bytes(gzip.compress(raw.read_bytes()))
    tasks = ByteRangePartitioningStage(file_paths=str(path), blocksize=500).process(EMPTY_TASK)
    assert len(tasks) > 1  # ranges of the decompressed bytes (see test_compressed_blocks.py)
    assert _read(JsonlReaderStage(), tasks)[0] == ids
