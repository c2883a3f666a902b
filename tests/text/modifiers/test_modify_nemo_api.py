"""Modify's NeMo Curator surface: normalised attributes, the field helpers and their messages
(NeMo users' tests match these messages exactly)."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from curator.errors import ConfigError
from curator_text import DocumentBatch, MarkdownRemover, Modify
from curator_text.modifiers.base import _normalize_input_fields, _normalize_output_fields


def _shout(s: str) -> str:
    return s.upper()


def _bang(s: str) -> str:
    return s + "!"


def test_modifier_fn_is_kept_as_a_list_with_one_field_list_per_modifier() -> None:
    md = MarkdownRemover()
    one = Modify(md)
    assert one.modifier_fn == [md] and one.modifier_fn[0] is md
    assert one._input_fields == [["text"]] and one._output_fields == ["text"]
    two = Modify([_shout, md], input_fields=["a", "b"], output_fields=[None, "b2"])
    assert two.modifier_fn == [_shout, md]
    assert two._input_fields == [["a"], ["b"]] and two._output_fields == ["a", "b2"]
    assert two.name == "modifier_chain_of__shout_MarkdownRemover"


def test_the_normalised_stage_still_modifies_in_order() -> None:
    stage = Modify([_shout, _bang], input_fields="t", output_fields=["u", "v"])
    batch = DocumentBatch(dataset_name="d", data=pa.table({"t": ["a", "b"]}))
    out = stage.process(batch).to_pyarrow()
    assert out["u"].to_pylist() == ["A", "B"]
    assert out["v"].to_pylist() == ["a!", "b!"]  # each modifier reads its own input field


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"modifier_fn": [], "input_fields": "text"}, ValueError, "modifier_fn list cannot be empty"),
    ({"modifier_fn": str.upper, "input_fields": None}, ValueError, "Input field cannot be None"),
    ({"modifier_fn": 123}, TypeError, "Each modifier must be a DocumentModifier or callable"),
    ({"modifier_fn": MarkdownRemover(), "input_fields": ["a", "b"]}, ValueError,
     "Number of input fields (2) must be 1 or equal to number of modifiers (1). For "
     "multi-input per modifier, pass a list of lists."),
    ({"modifier_fn": _shout, "input_fields": [["a", "b"]]}, ValueError,
     "output_fields must be provided when any modifier has multiple input fields. Provide a "
     "single name to reuse or a list[str] with one name per modifier."),
])
def test_modify_raises_nemo_curators_errors(kwargs, error, message) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$") as info:
        Modify(**kwargs)
    assert isinstance(info.value, ConfigError)  # the CLI reports it as a configuration error


def test_text_field_still_stands_in_for_input_fields() -> None:
    assert Modify(_shout, input_fields=None, text_field="body")._input_fields == [["body"]]


def test_normalize_input_fields_has_nemo_curators_signature_and_messages() -> None:
    mods = [_shout, _bang]
    assert _normalize_input_fields(["a"], mods) == [["a"], ["a"]]
    assert _normalize_input_fields([["a", "b"], ["c"]], mods) == [["a", "b"], ["c"]]
    with pytest.raises(ValueError, match=re.escape(
            "Number of input field groups (3) must be 1 or equal to number of modifiers (2)")):
        _normalize_input_fields([["a"], ["b"], ["c"]], mods)
    with pytest.raises(TypeError, match=re.escape(
            "input_fields must be str, list[str], or list[list[str]]")):
        _normalize_input_fields(123, mods)


def test_normalize_output_fields_has_nemo_curators_signature_and_messages() -> None:
    mods = [_shout, _bang]
    assert _normalize_output_fields([None], [["x"], ["y"]], mods) == ["x", "y"]
    with pytest.raises(ValueError, match=re.escape(
            "Implicit in-place (None) not allowed for a modifier with multiple input fields. "
            "Provide an explicit output column.")):
        _normalize_output_fields([None, "z"], [["a", "b"], ["c"]], mods)
    with pytest.raises(ValueError, match=re.escape(
            "Number of output fields (3) must be 1 or equal to number of modifiers (2)")):
        _normalize_output_fields(["a", "b", "c"], [["a"], ["b"]], mods)
    with pytest.raises(TypeError, match=re.escape(
            "output_field must be str, list[str | None], or None")):
        _normalize_output_fields(123, [["a"]], [_shout])
