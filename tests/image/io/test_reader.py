import os

import fsspec
import numpy as np
import pytest
from curator import EMPTY_TASK, FileGroupTask, Pipeline
from curator.errors import ConfigError
from curator_image import ImageBatch, ImageReaderStage, WebDatasetReaderStage
from curator_image.io.reader import WebDatasetShardPartitionStage
from curator_image.testing import encode_image, make_image

from ..conftest import jpg


def _read(path, **kw) -> tuple[list, WebDatasetReaderStage]:
    stage = WebDatasetReaderStage(**kw)
    task = FileGroupTask(task_id="t", dataset_name="d", data=[path])
    return stage.process(task), stage


def test_reads_all_samples_in_batches_with_deterministic_ids(shards):
    run1 = Pipeline("r", stages=[ImageReaderStage(shards, task_batch_size=4)]).run()
    run2 = Pipeline("r", stages=[ImageReaderStage(shards, task_batch_size=4)]).run()
    assert all(isinstance(t, ImageBatch) for t in run1)
    assert sorted(t.task_id for t in run1) == sorted(t.task_id for t in run2)
    assert sorted(len(t.data) for t in run1) == [2, 2, 4, 4]
    images = [img for t in run1 for img in t.data]
    assert len({img.image_id for img in images}) == 12
    img = next(i for i in images if i.image_id == "000000001")
    np.testing.assert_array_equal(img.image_data.shape, (48, 40, 3))
    assert img.caption == "caption 000000001" and img.metadata["idx"] == 1
    assert img.image_path.endswith("00000.tar") and img.raw[:2] == b"\xff\xd8"


def test_partition_ids_depend_on_paths_only(shards):
    tasks = WebDatasetShardPartitionStage(file_paths=os.path.dirname(shards[0])).process(
        EMPTY_TASK)
    again = WebDatasetShardPartitionStage(file_paths=list(reversed(shards))).process(EMPTY_TASK)
    assert [t.task_id for t in tasks] == [t.task_id for t in again]
    assert [t.data for t in tasks] == [[s] for s in shards]


def test_resize(shards):
    batches, _ = _read(shards[0], resize=(16, 12))
    assert batches[0].data[0].image_data.shape == (12, 16, 3)


def test_corrupt_and_oversized_images_are_rejected_and_rest_is_read(make_tar):
    big = encode_image(make_image(3, size=(100, 100)), "PNG")
    path = make_tar("bad.tar", [("a.jpg", jpg(1)), ("b.jpg", b"not an image at all"),
                                ("c.png", big), ("d.jpg", jpg(2)), ("e.txt", b"no image"),
                                ("f.jpg", jpg(3)), ("f.npy", b"not npy")])
    batches, stage = _read(path, max_image_pixels=5000)
    assert [i.image_id for i in batches[0].data] == ["a", "d"]
    rejected = {r.record["key"]: r for r in stage.drain_rejected()}
    assert rejected["b"].reason == "corrupt_image" and rejected["b"].error
    assert rejected["c"].reason == "oversized_image" and "5000" in rejected["c"].error
    assert rejected["e"].reason == "no_image"
    assert rejected["f"].reason == "corrupt_embedding"
    assert all(r.source == path for r in rejected.values())


def test_truncated_member_is_rejected_with_key(make_tar):
    path = make_tar("trunc.tar", [("a.jpg", jpg(1)), ("b.jpg", jpg(2)), ("c.jpg", jpg(3))])
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:  # cut inside c.jpg's data
        fh.truncate(size - 1024 - 512 - 200)
    batches, stage = _read(path)
    assert [i.image_id for i in batches[0].data] == ["a", "b"]
    (rej,) = stage.drain_rejected()
    assert rej.reason == "truncated_tar" and rej.record["key"] == "c"


def test_unsafe_member_paths_are_rejected(make_tar):
    path = make_tar("evil.tar", [("../evil.jpg", jpg(1)), ("/abs/evil.jpg", jpg(2)),
                                 ("ok.jpg", jpg(3))])
    batches, stage = _read(path)
    assert [i.image_id for i in batches[0].data] == ["ok"]
    assert sorted(r.reason for r in stage.drain_rejected()) == ["unsafe_path", "unsafe_path"]


def test_rejected_records_reach_the_run_summary(make_tar):
    path = make_tar("bad.tar", [("a.jpg", jpg(1)), ("b.jpg", b"garbage")])
    result = Pipeline("r", stages=[ImageReaderStage(path)]).run()
    assert sum(len(t.data) for t in result) == 1
    assert result.rejected.total == 1
    assert result.rejected.records[0].record["key"] == "b"


def test_fsspec_url(shards):
    fs = fsspec.filesystem("memory")
    with open(shards[0], "rb") as src, fs.open("/imgs/00000.tar", "wb") as dst:
        dst.write(src.read())
    result = Pipeline("r", stages=[ImageReaderStage("memory://imgs/")]).run()
    assert sum(len(t.data) for t in result) == 6


@pytest.mark.parametrize("kw, param", [({"task_batch_size": 0}, "task_batch_size"),
                                       ({"num_threads": 0}, "num_threads"),
                                       ({"resize": (1, 2, 3)}, "resize")])
def test_config_errors_name_the_parameter(shards, kw, param):
    with pytest.raises(ConfigError, match=param):
        ImageReaderStage(shards, **kw)


def test_missing_input_path_stops_the_run_naming_it(tmp_path):
    from curator.executors.local import SourceStageError

    with pytest.raises(SourceStageError) as err:
        Pipeline("r", stages=[ImageReaderStage(str(tmp_path / "none"))]).run()
    assert "FileNotFoundError" in str(err.value) and "none" in str(err.value)


def test_contract(shards):
    from curator.testing import check_stage_contract

    task = FileGroupTask(task_id="s", dataset_name="d", data=[shards[0]])
    outs = check_stage_contract(WebDatasetReaderStage(task_batch_size=4), task)
    assert [t.task_id for t in outs] == ["s_0", "s_1"]


def test_reader_without_input_as_first_stage_says_what_to_add():
    """NeMo's ImageReaderStage takes no paths (a FilePartitioningStage comes first); ours as the
    first stage without file_paths has nothing to read: the run stops saying so, not silently."""
    from curator.executors.local import SourceStageError

    with pytest.raises(SourceStageError, match=r"no shards to read.*file_paths.*"
                                                r"FilePartitioningStage"):
        Pipeline("r", stages=[ImageReaderStage(task_batch_size=4)]).run()


def test_reader_after_file_partitioning_as_in_nemo(shards):
    from curator.stages.file_partitioning import FilePartitioningStage

    result = Pipeline("r", stages=[
        FilePartitioningStage(file_paths=os.path.dirname(shards[0]), file_extensions=[".tar"]),
        ImageReaderStage(task_batch_size=4, num_threads=16, num_gpus_per_worker=0.25)]).run()
    assert sum(len(t.data) for t in result) == 12
