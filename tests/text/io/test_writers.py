"""JsonlWriter / ParquetWriter: deterministic names, overwrite on re-run, fields, filenames."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from curator_text import DocumentBatch, JsonlWriter, ParquetWriter


def _batch(tid="abc"):
    return DocumentBatch(tid, "d", pa.table({"text": ["x", "y", "z"], "n": [1, 2, 3],
                                             "file_name": ["a.jsonl", "b.jsonl", "a.jsonl"]}))


def test_jsonl_writer_names_file_after_task_and_overwrites(tmp_path) -> None:
    w = JsonlWriter(path=str(tmp_path), fields=["text", "n"])
    out = w.process(_batch())
    assert out.data == [f"{tmp_path}/abc.jsonl"]
    w.process(_batch())  # re-run: same file, overwritten
    assert os.listdir(tmp_path) == ["abc.jsonl"]
    rows = [json.loads(x) for x in open(out.data[0])]
    assert rows == [{"text": "x", "n": 1}, {"text": "y", "n": 2}, {"text": "z", "n": 3}]


def test_write_to_filename_groups_rows(tmp_path) -> None:
    out = JsonlWriter(path=str(tmp_path), write_to_filename=True).process(_batch())
    assert sorted(os.path.basename(p) for p in out.data) == ["a.jsonl", "b.jsonl"]
    rows = [json.loads(x) for x in open(tmp_path / "a.jsonl")]
    assert [r["text"] for r in rows] == ["x", "z"] and "file_name" not in rows[0]


def test_parquet_writer(tmp_path) -> None:
    out = ParquetWriter(path=str(tmp_path)).process(_batch("p1"))
    assert pq.read_table(out.data[0])["n"].to_pylist() == [1, 2, 3]
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]


def test_writer_needs_path() -> None:
    with pytest.raises(ValueError, match="path"):
        JsonlWriter()


def test_jsonl_encoding_round_trips_awkward_values() -> None:
    from curator_text.io.jsonl_encode import table_to_jsonl

    table = pa.table({"text": ['a "q" \\ b\n\tc\x01\x1f é “x”', None, ""],
                      "n": [1, None, -3], "f": [0.5, float("nan"), 2.0],
                      "b": [True, False, None], "tags": [["a"], [], None]})
    rows = [json.loads(x) for x in table_to_jsonl(table.drop_columns(["tags"])).splitlines()]
    assert rows[0] == {"text": 'a "q" \\ b\n\tc\x01\x1f é “x”', "n": 1, "f": 0.5, "b": True}
    assert rows[1] == {"text": None, "n": None, "f": None, "b": False}
    assert rows[2]["text"] == "" and rows[2]["b"] is None
    nested = [json.loads(x) for x in table_to_jsonl(table).splitlines()]  # pandas fallback
    assert nested[0]["tags"] == ["a"]
