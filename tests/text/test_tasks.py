"""DocumentBatch: NeMo Curator's construction and the pandas-shaped uses of its docs."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pytest
from curator import LocalExecutor, Pipeline, processing_stage
from curator.tasks import StagePerf
from curator_text import DocumentBatch


def test_nemo_constructor_without_task_id() -> None:
    df = pd.DataFrame({"text": ["a", "b"], "n": [1, 2]})
    perf = [StagePerf("s", 0.1, 2, 2)]
    batch = DocumentBatch(data=df, dataset_name="web", _metadata={"k": "v"}, _stage_perf=perf)
    assert isinstance(batch.data, pa.Table)  # Arrow storage
    assert batch.to_pandas().equals(df)
    assert (batch.dataset_name, batch.metadata, batch.stage_perf) == ("web", {"k": "v"}, perf)
    assert batch.num_items == len(batch.data) == 2
    assert batch.get_columns() == ["text", "n"]
    # the id is derived from the content: the same batch gets the same id on every run
    assert batch.task_id == DocumentBatch(data=df.copy(), dataset_name="web").task_id
    assert batch.task_id != DocumentBatch(data=df.head(1), dataset_name="web").task_id


def test_pandas_shaped_reads_and_writes() -> None:
    batch = DocumentBatch(dataset_name="d", data=pd.DataFrame({"text": ["a b", "c"]}))
    assert batch.to_pandas()["text"].to_list() == ["a b", "c"]
    assert batch.data["text"].to_pylist() == ["a b", "c"]
    df = batch.to_pandas()
    df["words"] = df["text"].str.split().str.len()
    batch.data = df  # NeMo style: assign a DataFrame back; stored as Arrow
    assert isinstance(batch.data, pa.Table)
    assert batch.data["words"].to_pylist() == [2, 1]
    with pytest.raises(TypeError, match="DocumentBatch"):
        batch.data = 42


def test_nemo_pandas_code_on_data_fails_with_what_to_call_instead() -> None:
    @processing_stage(name="nemo_style")
    def nemo_style(task: DocumentBatch) -> DocumentBatch:
        task.data["n"] = 1  # valid only on a pandas DataFrame
        return task

    batch = DocumentBatch(dataset_name="d", data={"text": ["abc"]})
    with pytest.raises(TypeError, match=r"to_pandas\(\)") as err:
        nemo_style.process_batch([batch])
    assert "migrating-from-nemo-curator" in str(err.value)

    @processing_stage(name="nemo_read")
    def nemo_read(task: DocumentBatch) -> DocumentBatch:
        task.data["text"].to_list()
        return task

    with pytest.raises(AttributeError, match=r"to_pylist\(\)"):
        nemo_read.process_batch([batch])


def test_processing_stage_keeps_metadata_of_a_rebuilt_batch(tmp_path) -> None:
    @processing_stage(name="rebuild")
    def rebuild(task: DocumentBatch) -> DocumentBatch:
        df = task.to_pandas()
        df["n"] = df["text"].str.len()
        return DocumentBatch(data=df, dataset_name=task.dataset_name)  # NeMo style, no metadata

    src = DocumentBatch("t0", "d", pa.table({"text": ["ab"]}),
                        metadata={"source_files": ["in.jsonl"]})
    out = Pipeline(name="p", stages=[rebuild]).run(
        LocalExecutor(), initial_tasks=[src], summary=False)
    tasks = out.tasks if hasattr(out, "tasks") else out
    assert [t.data["n"].to_pylist() for t in tasks] == [[2]]
    assert tasks[0].metadata["source_files"] == ["in.jsonl"]
