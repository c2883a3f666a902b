"""Modify keeps the type a modifier returns (ints, lists), as NeMo Curator's pandas ``apply``."""

from __future__ import annotations

import pyarrow as pa
from curator_text import DocumentBatch, DocumentModifier, Modify


class _Length(DocumentModifier):
    def modify_document(self, text: str) -> int:
        return len(text)


class _Words(DocumentModifier):
    def modify_document(self, text: str) -> list[str]:
        return text.split()


def _batch() -> DocumentBatch:
    return DocumentBatch(task_id="t", dataset_name="d",
                         data=pa.table({"text": ["a b", "ccc"], "title": ["x", "yy"]}))


def test_document_modifier_returning_int_and_list() -> None:
    out = Modify([_Length(), _Words()], input_fields="text",
                 output_fields=["n", "words"]).process(_batch()).to_pyarrow()
    assert out["n"].to_pylist() == [3, 3]
    assert pa.types.is_integer(out["n"].type)
    assert out["words"].to_pylist() == [["a", "b"], ["ccc"]]
    assert out["text"].to_pylist() == ["a b", "ccc"]


def test_several_fields_and_functions_keep_types() -> None:
    out = Modify(lambda text, title: len(text) + len(title), input_fields=[["text", "title"]],
                 output_fields="total").process(_batch()).to_pyarrow()
    assert out["total"].to_pylist() == [4, 5]
    strings = Modify(lambda t: t.upper()).process(_batch()).to_pyarrow()
    assert strings["text"].type == pa.string()
    assert strings["text"].to_pylist() == ["A B", "CCC"]
