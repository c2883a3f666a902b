"""Issue 31 item 7: ``WordCountFilter(min_words="80")`` converts as a YAML spec does, instead of
failing every task later with an Arrow kernel error; what cannot be converted fails at
construction with the spec's text."""

from __future__ import annotations

import pyarrow as pa
import pytest
from curator import Pipeline
from curator.errors import ConfigError
from curator.params import ParameterTypeError
from curator.spec import pipeline_from_spec
from curator_text import DocumentBatch, ScoreFilter, WordCountFilter


def test_numeric_string_becomes_an_int_and_the_filter_works():
    f = WordCountFilter(min_words="3")
    assert f._min_words == 3 and type(f._min_words) is int
    assert WordCountFilter(min_words="80")._min_words == 80
    batch = DocumentBatch(task_id="t", dataset_name="d",
                          data=pa.table({"text": ["one two", "one two three four"]}))
    result = Pipeline("p", stages=[ScoreFilter(f)]).run(initial_tasks=[batch], summary=False)
    assert result.ok  # before: ArrowNotImplementedError (int64 >= string) on every task
    assert result[0].to_pyarrow().column("text").to_pylist() == ["one two three four"]


def test_unconvertible_value_fails_at_construction_with_the_spec_text():
    with pytest.raises(ParameterTypeError) as ctor:
        WordCountFilter(min_words="abc")
    with pytest.raises(ConfigError) as spec:
        pipeline_from_spec({"stages": [{"stage": "ScoreFilter", "filter_obj": {
            "filter": "WordCountFilter", "min_words": "abc"}}]})
    detail = "parameter 'min_words' expects int, got 'abc' (str)"
    assert str(ctor.value).startswith(f"WordCountFilter: {detail}")
    assert str(spec.value).endswith(str(ctor.value).split(": ", 1)[1])
    assert "(WordCountFilter): " + detail in str(spec.value)
