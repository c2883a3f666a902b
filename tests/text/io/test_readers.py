"""JsonlReader / ParquetReader: partitioning, fields, bad lines and unreadable files."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator import EMPTY_TASK, Pipeline
from curator_text import FilePartitioningStage, JsonlReader, JsonlReaderStage, ParquetReader


def _write_jsonl(path, rows, extra_lines=()):
    with open(path, "w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
        for line in extra_lines:
            fh.write(line + "\n")


@pytest.fixture
def corpus(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    for i in range(4):
        _write_jsonl(d / f"f{i}.jsonl", [{"text": f"doc {i}-{j}", "n": j, "x": 1} for j in range(3)])
    return d


def test_partitioning_is_deterministic_and_grouped(corpus) -> None:
    stage = FilePartitioningStage(file_paths=str(corpus), files_per_partition=3)
    tasks = stage.process(EMPTY_TASK)
    assert [len(t.data) for t in tasks] == [3, 1]
    again = FilePartitioningStage(file_paths=str(corpus), files_per_partition=3)
    assert [t.task_id for t in again.process(EMPTY_TASK)] == [t.task_id for t in tasks]
    assert stage.is_source


def test_blocksize_groups_by_bytes(corpus) -> None:
    size = (corpus / "f0.jsonl").stat().st_size
    tasks = FilePartitioningStage(file_paths=f"{corpus}/*.jsonl",
                                  blocksize=2 * size).process(EMPTY_TASK)
    assert [len(t.data) for t in tasks] == [2, 2]


def test_partitioning_config_errors() -> None:
    with pytest.raises(ValueError, match="files_per_partition or blocksize"):
        JsonlReader(file_paths="x", files_per_partition=2, blocksize="1MB")
    with pytest.raises(ValueError, match="file_paths"):
        JsonlReader()


def test_reader_pipeline_with_fields(corpus) -> None:
    reader = JsonlReader(file_paths=str(corpus), fields=["text", "n"], files_per_partition=2)
    assert reader.outputs()[1] == ["text", "n"]
    assert JsonlReader(file_paths=str(corpus)).outputs()[1] == ["*"]
    result = Pipeline("r", stages=[reader]).run(summary=False)
    assert sum(t.num_items for t in result) == 12
    assert all(t.to_pyarrow().column_names == ["text", "n"] for t in result)


def test_malformed_line_is_rejected_with_line_number_and_rest_kept(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    _write_jsonl(path, [{"text": "a"}], extra_lines=['{"text": broken', '[1, 2]',
                                                      json.dumps({"text": "b"})])
    task = FilePartitioningStage(file_paths=str(path)).process(EMPTY_TASK)[0]
    stage = JsonlReaderStage(fields=["text"])
    out = stage.process(task)
    assert out.to_pyarrow()["text"].to_pylist() == ["a", "b"]
    rejected = stage.drain_rejected()
    assert [r.record["line"] for r in rejected] == [2, 3]
    assert all(str(path) in r.source for r in rejected)


def test_a_file_of_only_malformed_lines_is_rejected_and_the_run_stays_ok(tmp_path) -> None:
    from curator_text import JsonlWriter, ScoreFilter, WordCountFilter

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text("id\tkind\n0\tnormal\n")  # TSV named .jsonl
    _write_jsonl(tmp_path / "in" / "b.jsonl", [{"text": "one two three"}])
    result = Pipeline("p", stages=[JsonlReader(str(tmp_path / "in")),
                                   ScoreFilter(WordCountFilter(min_words=1)),
                                   JsonlWriter(str(tmp_path / "out"))]).run(
        summary=False, raise_on_failure=False)
    # the empty batch passes the filter (no row lacks its column), not a failed task
    assert result.ok and result.rejected.total == 2
    rows = [json.loads(line) for f in sorted((tmp_path / "out").glob("*.jsonl"))
            for line in f.read_text().splitlines()]
    assert rows == [{"text": "one two three"}]


def test_unreadable_file_is_reported_and_run_goes_on(tmp_path) -> None:
    good = tmp_path / "good.jsonl"
    _write_jsonl(good, [{"text": "a"}])
    stage = JsonlReaderStage()
    task = FilePartitioningStage(file_paths=str(good)).process(EMPTY_TASK)[0]
    task.data = [str(tmp_path / "missing.jsonl"), str(good)]
    out = stage.process(task)
    assert out.to_pyarrow()["text"].to_pylist() == ["a"]
    (rej,) = stage.drain_rejected()
    assert rej.kind == "file" and "missing.jsonl" in rej.source


def test_parquet_reader(tmp_path) -> None:
    pq.write_table(pa.table({"text": ["a", "b"], "y": [1, 2]}), tmp_path / "a.parquet")
    result = Pipeline("p", stages=[ParquetReader(file_paths=str(tmp_path),
                                                 fields=["text"])]).run(summary=False)
    assert result[0].to_pyarrow().to_pydict() == {"text": ["a", "b"]}
