"""DocumentSplitter and DocumentJoiner, as NeMo Curator documents them."""

from __future__ import annotations

import pyarrow as pa
import pytest
from curator import ConfigError
from curator_text import DocumentBatch, DocumentJoiner, DocumentSplitter


def _batch(**cols) -> DocumentBatch:
    return DocumentBatch("t", "d", pa.table(cols))


def test_splitter_nemo_example() -> None:
    out = DocumentSplitter(separator="\n\n").process(_batch(id=[1], text=["Hello\n\nWorld"]))
    table = out.to_pyarrow()
    assert table.to_pydict() == {"id": [1, 1], "text": ["Hello", "World"], "segment_id": [0, 1]}
    assert DocumentSplitter(separator="\n\n").name == "document_splitter"


def test_joiner_nemo_example() -> None:
    batch = _batch(id=[1, 1], segment_id=[1, 0], text=["World", "Hello"])
    out = DocumentJoiner(separator="\n\n").process(batch).to_pyarrow()
    assert out.to_pydict() == {"id": [1], "text": ["Hello\n\nWorld"]}  # segment order
    kept = DocumentJoiner(drop_segment_id_field=False).process(batch).to_pyarrow()
    assert kept.column_names == ["id", "segment_id", "text"]


def test_split_then_join_round_trip() -> None:
    docs = {"id": ["b", "a", "c"], "text": ["x\n\ny\n\nz", "one", "p\n\n\n\nq"],
            "lang": ["en", "de", "fr"]}
    split = DocumentSplitter(separator="\n\n").process(_batch(**docs))
    assert split.to_pyarrow()["segment_id"].to_pylist() == [0, 1, 2, 0, 0, 1, 2]
    joined = DocumentJoiner(separator="\n\n").process(split).to_pyarrow()
    # rows come out ordered by id (pandas groupby, as NeMo); each document is restored
    assert joined.to_pydict() == {"id": ["a", "b", "c"], "text": ["one", "x\n\ny\n\nz",
                                                                  "p\n\n\n\nq"],
                                  "lang": ["de", "en", "fr"]}


def test_joiner_with_max_length() -> None:
    batch = _batch(id=[1, 1, 1, 2], segment_id=[0, 1, 2, 0], text=["aa", "bbb", "c", "zz"],
                   length=[2, 3, 1, 2])
    out = DocumentJoiner(separator="|", max_length=6, length_field="length",
                         drop_segment_id_field=False).process(batch).to_pyarrow()
    # "aa|bbb" = 2+3+1 = 6 fits; adding "|c" would be 8 > 6, so "c" starts a new piece
    assert out["text"].to_pylist() == ["aa|bbb", "c", "zz"]
    assert out["length"].to_pylist() == [6, 1, 2]
    assert out["segment_id"].to_pylist() == [0, 1, 0]
    assert out["id"].to_pylist() == [1, 1, 2]


@pytest.mark.parametrize("kwargs", [{"max_length": 5}, {"length_field": "n"}])
def test_joiner_needs_max_length_and_length_field_together(kwargs) -> None:
    with pytest.raises(ConfigError, match="max_length and length_field"):
        DocumentJoiner(**kwargs)
