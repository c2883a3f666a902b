"""DocumentBatch: NeMo Curator's data semantics (a DataFrame stays one, Arrow batches show user
code a pandas view) and the pandas-shaped user code of its docs, end to end."""

from __future__ import annotations

import json
import pickle

import pandas as pd
import pyarrow as pa
import pytest
from curator import LocalExecutor, Pipeline, ProcessingStage, processing_stage
from curator.tasks import StagePerf
from curator_text import DocumentBatch, JsonlReader, JsonlWriter, ScoreFilter, WordCountFilter


def test_a_dataframe_the_user_gives_stays_that_dataframe() -> None:
    df = pd.DataFrame({"text": ["a", "b"], "n": [1, 2]})
    perf = [StagePerf("s", 0.1, 2, 2)]
    batch = DocumentBatch(data=df, dataset_name="web", _metadata={"k": "v"}, _stage_perf=perf)
    assert batch.data is df and batch.to_pandas() is df and batch.is_pandas
    assert batch.to_pyarrow().to_pylist() == [{"text": "a", "n": 1}, {"text": "b", "n": 2}]
    assert (batch.dataset_name, batch.metadata, batch.stage_perf) == ("web", {"k": "v"}, perf)
    assert batch.task_id == ""  # NeMo: the executor names it
    assert batch.num_items == len(batch.data) == 2
    assert batch.get_columns() == ["text", "n"]


def test_an_arrow_batch_shows_user_code_a_cached_pandas_view_that_edits_count() -> None:
    table = pa.table({"text": ["a b", "c"]})
    batch = DocumentBatch(task_id="t", dataset_name="d", data=table)
    assert not batch.is_pandas and batch.to_pyarrow() is table  # nothing built yet
    view = batch.data
    assert isinstance(view, pd.DataFrame) and batch.data is view  # built once, cached
    view["words"] = view["text"].str.split().str.len()  # an in-place edit counts
    assert batch.to_pyarrow()["words"].to_pylist() == [2, 1]
    assert batch.get_columns() == ["text", "words"] and batch.to_pandas() is view
    batch.data = view[view["words"] > 1].reset_index(drop=True)  # assigning a frame keeps it
    assert batch.num_items == 1 and batch.to_pyarrow().column_names == ["text", "words"]
    batch.data = pa.table({"x": [1]})  # and an Arrow table is Arrow again
    assert not batch.is_pandas and batch.num_items == 1
    with pytest.raises(TypeError, match="DocumentBatch"):
        batch.data = 42


def test_list_and_dict_data_are_stored_as_arrow_and_batches_pickle() -> None:
    assert DocumentBatch("t", "d", [{"a": 1}]).to_pyarrow().to_pylist() == [{"a": 1}]
    assert DocumentBatch("t", "d", {"a": [1, 2]}).num_items == 2
    held = DocumentBatch("t", "d", pd.DataFrame({"a": [1]}))
    back = pickle.loads(pickle.dumps(held))
    assert back.is_pandas and back.to_pandas().equals(held.to_pandas())


def test_builtin_stages_stay_on_arrow() -> None:
    batch = DocumentBatch("t", "d", pa.table({"text": ["one two three", "one"]}))
    out = ScoreFilter(WordCountFilter(min_words=2), text_field="text").process(batch)
    assert not batch.is_pandas and not out.is_pandas  # no pandas view was built
    assert out.to_pyarrow()["text"].to_pylist() == ["one two three"]


class LengthStage(ProcessingStage[DocumentBatch, DocumentBatch]):
    """NeMo Curator's documented custom stage: pandas on ``task.data``, a new batch out."""

    name = "LengthStage"

    def process(self, task: DocumentBatch) -> DocumentBatch:
        df = task.data
        df["length"] = df["text"].str.len()
        df = df[df["length"] > 3].reset_index(drop=True)
        return DocumentBatch(data=df, dataset_name=task.dataset_name,
                             _metadata=task._metadata, _stage_perf=task._stage_perf)


@processing_stage(name="upper")
def upper(task: DocumentBatch) -> DocumentBatch:
    task.data["text"] = task.data["text"].apply(lambda s: s.upper())
    return task


def test_pandas_shaped_user_stages_keep_the_right_rows_end_to_end(tmp_path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    for i, texts in enumerate((["ab", "hello", "x y z"], ["four", "no"])):
        (src / f"part{i}.jsonl").write_text("".join(json.dumps({"text": t}) + "\n"
                                                    for t in texts))
    out = tmp_path / "out"
    result = Pipeline("p", stages=[JsonlReader(str(src)), LengthStage(), upper,
                                   ScoreFilter(WordCountFilter(min_words=1), text_field="text"),
                                   JsonlWriter(str(out))]).run(LocalExecutor(), summary=False)
    assert result.ok
    rows = sorted((json.loads(line)["text"], json.loads(line)["length"])
                  for f in out.glob("*.jsonl") for line in f.read_text().splitlines())
    assert rows == [("FOUR", 4), ("HELLO", 5), ("X Y Z", 5)]
    assert len(list(out.glob("*.jsonl"))) == 2  # one file per source partition, ids kept


def test_processing_stage_keeps_metadata_of_a_rebuilt_batch() -> None:
    @processing_stage(name="rebuild")
    def rebuild(task: DocumentBatch) -> DocumentBatch:
        df = task.to_pandas()
        df["n"] = df["text"].str.len()
        return DocumentBatch(data=df, dataset_name=task.dataset_name)  # NeMo style, no metadata

    src = DocumentBatch("t0", "d", pa.table({"text": ["ab"]}),
                        metadata={"source_files": ["in.jsonl"]})
    out = Pipeline(name="p", stages=[rebuild]).run(
        LocalExecutor(), initial_tasks=[src], summary=False)
    assert [t.to_pyarrow()["n"].to_pylist() for t in out] == [[2]]
    assert out[0].metadata["source_files"] == ["in.jsonl"]
    assert out[0].task_id == "t0"  # the executor named the new batch after its input


def test_the_pandas_view_of_an_arrow_batch_is_true_when_it_has_rows() -> None:
    # NeMo's docs (synthetic/multilingual_qa) test ``if result.data:`` on a reader's batch.
    full = DocumentBatch("t", "d", pa.table({"text": ["a", "b"]}))
    empty = DocumentBatch("e", "d", pa.table({"text": pa.array([], pa.string())}))
    assert full.data and not empty.data
    view = full.data
    view["n"] = [1, 2]  # still a DataFrame that edits in place, and pickles
    assert isinstance(view, pd.DataFrame) and full.to_pyarrow()["n"].to_pylist() == [1, 2]
    assert type(view[view["n"] > 1]) is pd.DataFrame  # derived frames are plain ones
    back = pickle.loads(pickle.dumps(full))
    assert back.to_pandas().equals(view) and back.data
