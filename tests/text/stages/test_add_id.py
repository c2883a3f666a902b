from __future__ import annotations

import pyarrow as pa
import pytest
from curator_text import AddId, DocumentBatch


def test_add_id_is_stable_and_unique() -> None:
    batch = DocumentBatch("part7", "d", pa.table({"text": ["a", "b", "c"]}))
    ids = AddId(id_prefix="web").process(batch).to_pyarrow()["id"].to_pylist()
    assert ids == ["web_part7_0", "web_part7_1", "web_part7_2"]
    assert AddId(id_prefix="web").process(batch).to_pyarrow()["id"].to_pylist() == ids


def test_add_id_refuses_to_overwrite_by_default() -> None:
    batch = DocumentBatch("p", "d", pa.table({"id": [1]}))
    with pytest.raises(ValueError, match="overwrite"):
        AddId().process(batch)
    assert AddId(overwrite=True).process(batch).to_pyarrow()["id"].to_pylist() == ["p_0"]
