"""The plain reader call splits a WebDataset shard bigger than the block size (16 MiB) into
several partitions through a whole pipeline: every sample is written exactly once, with the
same output names on every run."""

from __future__ import annotations

import os
import tarfile

import numpy as np
from curator import LocalExecutor, Pipeline
from curator_image import ImageReaderStage, ImageWriterStage
from curator_image.io.reader import WebDatasetShardPartitionStage

from ..conftest import jpg


def _written_keys(out: str) -> tuple[list[str], list[str]]:
    tars = sorted(f for f in os.listdir(out) if f.endswith(".tar"))
    keys = []
    for name in tars:
        with tarfile.open(os.path.join(out, name)) as tar:
            keys += [m.name.rsplit(".", 1)[0] for m in tar if m.name.endswith(".jpg")]
    return tars, keys


def test_big_shard_is_read_in_partitions_each_sample_written_once(make_tar, tmp_path) -> None:
    rng = np.random.default_rng(0)
    members = []
    for i in range(45):  # ~18 MiB: each sample carries a 400 KiB extra member
        members += [(f"s{i:04d}.jpg", jpg(i)), (f"s{i:04d}.txt", f"caption {i}".encode()),
                    (f"s{i:04d}.bin", rng.integers(0, 256, 400 * 1024, np.uint8).tobytes())]
    path = make_tar("big.tar", members)
    assert os.path.getsize(path) > WebDatasetShardPartitionStage.default_block_size

    def run(out: str) -> tuple[list[str], list[str]]:
        stages = [ImageReaderStage(file_paths=path), ImageWriterStage(output_dir=out)]
        result = Pipeline("image-blocks", stages=stages).run(executor=LocalExecutor(cpus=2))
        assert result.ok
        return _written_keys(out)

    tars, keys = run(str(tmp_path / "a"))
    assert len(tars) >= 2  # one output per block
    assert sorted(keys) == [f"s{i:04d}" for i in range(45)]  # each sample exactly once
    assert run(str(tmp_path / "b"))[0] == tars  # deterministic names
