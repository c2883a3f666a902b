"""InterleavedBatch: schema, conversions, source_ref locators (NeMo Curator's semantics)."""

import json

import pandas as pd
import pyarrow as pa
import pytest
from curator_interleaved import INTERLEAVED_SCHEMA, RESERVED_COLUMNS, InterleavedBatch

ROW = {"sample_id": "s1", "position": 0, "modality": "text", "content_type": "text/plain",
       "text_content": "hello", "binary_content": None, "source_ref": None,
       "materialize_error": None}


def test_schema_is_nemos():
    assert INTERLEAVED_SCHEMA.names == ["sample_id", "position", "modality", "content_type",
                                        "text_content", "binary_content", "source_ref",
                                        "materialize_error"]
    assert INTERLEAVED_SCHEMA.field("position").type == pa.int32()
    assert INTERLEAVED_SCHEMA.field("binary_content").type == pa.large_binary()
    assert InterleavedBatch.REQUIRED_COLUMNS == {"sample_id", "position", "modality"}
    assert RESERVED_COLUMNS == set(INTERLEAVED_SCHEMA.names)


def test_arrow_and_pandas_views_keep_user_columns():
    table = pa.Table.from_pylist([{**ROW, "url": "u"}, {**ROW, "position": 1, "url": "v"}])
    batch = InterleavedBatch(dataset_name="d", data=table)
    assert batch.to_pyarrow() is table  # held as given, no copy
    df = batch.to_pandas()
    assert list(df["url"]) == ["u", "v"]
    assert batch.num_items == 1 and batch.count() == 2 and batch.count(modality="image") == 0
    back = InterleavedBatch(dataset_name="d", data=df)
    assert back.to_pandas() is df and back.to_pyarrow().column("url").to_pylist() == ["u", "v"]


def test_validate_and_errors():
    assert InterleavedBatch(dataset_name="d",
                            data=pa.Table.from_pylist([ROW], schema=INTERLEAVED_SCHEMA)).validate()
    assert not InterleavedBatch(dataset_name="d", data=INTERLEAVED_SCHEMA.empty_table()).validate()
    assert not InterleavedBatch(dataset_name="d", data=pa.table({"sample_id": ["a"]})).validate()
    bad = InterleavedBatch(dataset_name="d", data=pa.table({"x": [1]}))
    object.__setattr__(bad, "data", [1, 2])
    with pytest.raises(TypeError, match="Cannot convert"):
        bad.to_pyarrow()
    with pytest.raises(NotImplementedError):
        bad.add_rows([])


def test_source_ref_round_trip():
    ref = InterleavedBatch.build_source_ref("/a.tar", "m.jpg", 10, 20)
    assert json.loads(ref) == {"path": "/a.tar", "member": "m.jpg", "byte_offset": 10,
                               "byte_size": 20}
    assert "frame_index" not in json.loads(ref)
    assert InterleavedBatch.parse_source_ref(
        InterleavedBatch.build_source_ref("p", None, frame_index=3))["frame_index"] == 3
    assert InterleavedBatch.parse_source_ref(None) == dict.fromkeys(
        ("path", "member", "byte_offset", "byte_size", "frame_index"))
    assert InterleavedBatch.parse_source_ref(float("nan"))["path"] is None
    with pytest.raises(TypeError, match="JSON object"):
        InterleavedBatch.parse_source_ref("[1]")
    batch = InterleavedBatch(dataset_name="d", data=pa.Table.from_pylist(
        [{**ROW, "source_ref": ref}], schema=INTERLEAVED_SCHEMA))
    df = batch.with_parsed_source_ref_columns()
    assert df.loc[0, "_src_member"] == "m.jpg" and df.loc[0, "_src_byte_size"] == 20
    assert isinstance(df, pd.DataFrame)
