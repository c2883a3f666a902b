"""A big WebDataset shard is read in blocks split between samples: every sample read once, in
order, with its members together; boundaries from the file alone; a truncated shard still
reports its problem."""

from __future__ import annotations

from curator import EMPTY_TASK
from curator_image import WebDatasetReaderStage
from curator_image.io.reader import WebDatasetShardPartitionStage

from ..conftest import jpg


def _read_blocks(path: str, blocksize: int) -> tuple[list, list, list]:
    tasks = WebDatasetShardPartitionStage(file_paths=path, files_per_partition=None,
                                          blocksize=blocksize).process(EMPTY_TASK)
    stage = WebDatasetReaderStage(task_batch_size=1000)
    images = [img for t in tasks for batch in stage.process(t) for img in batch.data]
    return tasks, images, stage.drain_rejected()


def test_shard_split_between_samples_reads_each_sample_once(make_tar) -> None:
    members = []
    for i in range(40):
        members += [(f"{i:05d}.jpg", jpg(i)), (f"{i:05d}.txt", f"caption {i}".encode())]
    path = make_tar("big.tar", members)
    _, whole, _ = _read_blocks(path, 10**9)
    for blocksize in (3000, 10_000, 25_000):
        tasks, images, rejected = _read_blocks(path, blocksize)
        assert len(tasks) > 2 and not rejected
        ranges = [t.metadata["byte_range"] for t in tasks]
        assert ranges[0][0] == 0 and all(a[1] == b[0] for a, b in zip(ranges, ranges[1:],
                                                                      strict=False))
        again = WebDatasetShardPartitionStage(file_paths=path, files_per_partition=None,
                                              blocksize=blocksize).process(EMPTY_TASK)
        assert [t.task_id for t in again] == [t.task_id for t in tasks]
        assert [i.image_id for i in images] == [f"{i:05d}" for i in range(40)]
        assert [i.caption for i in images] == [i.caption for i in whole]  # members together


def test_truncated_shard_is_reported_not_split_silently(make_tar, tmp_path) -> None:
    path = make_tar("t.tar", [(f"{i:05d}.jpg", jpg(i)) for i in range(10)])
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])
    tasks, images, rejected = _read_blocks(path, 2000)
    assert images and [r.reason for r in rejected] == ["truncated_tar"]
