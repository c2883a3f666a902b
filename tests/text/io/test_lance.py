"""curator-text's Lance reader and writer (NeMo Curator's LanceReader / LanceWriter and
commit_lance_checkpoint): local datasets and a real S3 server (SeaweedFS on 127.0.0.1)."""

import lance
import pyarrow as pa
import pytest
from curator import Pipeline
from curator_text import LanceReader, LanceWriter, commit_lance_checkpoint
from curator_text.io.lance import (
    LANCE_FRAGID_COLUMN,
    LANCE_ROWID_COLUMN,
    LancePartitioningStage,
    LanceReaderStage,
)


def _dataset(path, n=30, per_fragment=10, storage_options=None):
    table = pa.table({"id": list(range(n)), "text": [f"doc {i}" for i in range(n)]})
    lance.write_dataset(table, path, max_rows_per_file=per_fragment,
                        storage_options=storage_options)
    return table


def test_read_pinned_version_by_fragment_groups(tmp_path):
    path = str(tmp_path / "docs.lance")
    _dataset(path)
    tasks = LancePartitioningStage(path=path, fragments_per_partition=2).process(None)
    assert [t.data for t in tasks] == [[0, 1], [2]]
    assert [t.task_id for t in tasks] == [t.task_id for t in LancePartitioningStage(
        path=path, fragments_per_partition=2).process(None)]  # the same on every run
    lance.write_dataset(pa.table({"id": [99], "text": ["late"]}), path, mode="append")
    batch = LanceReaderStage().process(tasks[1])  # still the version it was planned on
    table = batch.to_pyarrow()
    assert table["id"].to_pylist() == list(range(20, 30))
    assert set(table[LANCE_FRAGID_COLUMN].to_pylist()) == {2}
    assert LANCE_ROWID_COLUMN in table.column_names
    assert batch.metadata["lance"]["fragment_ids"] == [2]
    with pytest.raises(ValueError, match="fragment ids"):
        LancePartitioningStage(path=path, fragment_ids=[7]).process(None)


def test_pipeline_write_commit_read_back(tmp_path):
    src, dst, ck = (str(tmp_path / n) for n in ("src.lance", "dst.lance", "ck"))
    table = _dataset(src)
    result = Pipeline("lance", stages=[
        LanceReader(path=src, fragments_per_partition=1, fields=["id", "text"],
                    read_kwargs={"filter": "id % 2 = 0"}),
        LanceWriter(path=dst, commit_path=ck)]).run(summary=False)
    assert result.ok
    with pytest.raises(ValueError):  # nothing visible before the commit
        lance.dataset(dst)
    version = commit_lance_checkpoint(dst, ck)
    assert commit_lance_checkpoint(dst, ck) == version  # once
    back = lance.dataset(dst).to_table().sort_by("id")
    assert back.column_names == ["id", "text"]
    assert back["id"].to_pylist() == [i for i in table["id"].to_pylist() if i % 2 == 0]
    # a re-run of the writer replaces its records: a second commit would not double rows
    Pipeline("lance", stages=[LanceReader(path=src, fragments_per_partition=1,
                                          include_lance_metadata=False),
                              LanceWriter(path=str(tmp_path / "d2.lance"),
                                          commit_path=str(tmp_path / "ck2"))]).run(summary=False)
    Pipeline("lance", stages=[LanceReader(path=src, fragments_per_partition=1,
                                          include_lance_metadata=False),
                              LanceWriter(path=str(tmp_path / "d2.lance"),
                                          commit_path=str(tmp_path / "ck2"))]).run(summary=False)
    commit_lance_checkpoint(str(tmp_path / "d2.lance"), str(tmp_path / "ck2"))
    assert lance.dataset(str(tmp_path / "d2.lance")).count_rows() == 30


def test_s3(curator_s3, tmp_path):
    opts = {"access_key_id": curator_s3.storage_options["key"],
            "secret_access_key": curator_s3.storage_options["secret"],
            "endpoint": curator_s3.endpoint_url, "region": "us-east-1", "allow_http": "true"}
    src = f"{curator_s3.url}/lance/src.lance"
    dst = f"{curator_s3.url}/lance/dst.lance"
    ck = f"{curator_s3.url}/lance/ck"
    _dataset(src, storage_options=opts)
    Pipeline("lance_s3", stages=[
        LanceReader(path=src, fragments_per_partition=2, read_kwargs={"storage_options": opts}),
        LanceWriter(path=dst, commit_path=ck, write_kwargs={
            "storage_options": opts,
            "checkpoint_storage_options": curator_s3.storage_options})]).run(summary=False)
    commit_lance_checkpoint(dst, ck, dataset_storage_options=opts,
                            checkpoint_storage_options=curator_s3.storage_options)
    back = lance.dataset(dst, storage_options=opts).to_table().sort_by("id")
    assert back["id"].to_pylist() == list(range(30))
