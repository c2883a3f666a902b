from __future__ import annotations

import pyarrow as pa
import pytest
from curator_text import AddId, DocumentBatch


def test_add_id_is_stable_and_unique() -> None:
    batch = DocumentBatch("part7", "d", pa.table({"text": ["a", "b", "c"]}))
    ids = AddId(id_prefix="web").process(batch).to_pyarrow()["id"].to_pylist()
    assert ids == ["web_part7_0", "web_part7_1", "web_part7_2"]
    assert AddId(id_prefix="web").process(batch).to_pyarrow()["id"].to_pylist() == ids


def test_add_id_nemo_parameters_and_output() -> None:
    # NeMo: AddId(id_field=..., id_prefix=None, overwrite=False), name "add_id",
    # ids "{task_id}_{row}" as strings, the other columns untouched
    batch = DocumentBatch("t9", "d", pa.table({"text": ["a", "b"], "k": [1, 2]}))
    stage = AddId(id_field="doc_id")
    assert stage.name == "add_id"
    assert stage.inputs() == (["data"], []) and stage.outputs() == (["data"], ["doc_id"])
    out = stage.process(batch).to_pyarrow()
    assert out.column_names == ["text", "k", "doc_id"]
    assert out["doc_id"].type == pa.string()
    assert out["doc_id"].to_pylist() == ["t9_0", "t9_1"]
    assert AddId(id_field="doc_id", start_index=5).process(batch).to_pyarrow()[
        "doc_id"].to_pylist() == ["t9_5", "t9_6"]


def test_add_id_refuses_to_overwrite_by_default() -> None:
    batch = DocumentBatch("p", "d", pa.table({"id": [1]}))
    with pytest.raises(ValueError, match="overwrite=True"):
        AddId().process(batch)
    assert AddId(overwrite=True).process(batch).to_pyarrow()["id"].to_pylist() == ["p_0"]


def test_add_id_existing_column_message_is_nemo_curators() -> None:
    batch = DocumentBatch("p", "d", pa.table({"dup_id": ["x"]}))
    with pytest.raises(ValueError, match=r"^Column 'dup_id' already exists\. Set overwrite=True "
                                         r"to replace it\.$"):
        AddId(id_field="dup_id").process(batch)
