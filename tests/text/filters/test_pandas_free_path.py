"""The README's five-filter text pipeline never imports pandas (issue 43, item 8): pyarrow imports
it (~0.3 s under the GIL, most of a small run's fixed cost) on its first NumPy or Python-object
conversion, so the filters convert through buffers (``curator_text.filters._vec.to_arrow`` /
``to_numpy``). A new conversion on the hot path fails this test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
from curator_text.filters._vec import ge, le, np_bool, to_arrow, to_numpy

SCRIPT = textwrap.dedent("""
    import sys
    from curator import Pipeline
    from curator_text import (BoilerPlateStringFilter, JsonlReader, JsonlWriter,
                              NonAlphaNumericFilter, RepeatingTopNGramsFilter, ScoreFilter,
                              UrlsFilter, WordCountFilter)

    result = Pipeline(name="five", stages=[
        JsonlReader(file_paths=sys.argv[1]),
        ScoreFilter(WordCountFilter(min_words=5, max_words=100000)),
        ScoreFilter(NonAlphaNumericFilter()),
        ScoreFilter(UrlsFilter()),
        ScoreFilter(RepeatingTopNGramsFilter(n=2, max_repeating_ngram_ratio=0.2)),
        ScoreFilter(BoilerPlateStringFilter()),
        JsonlWriter(path=sys.argv[2]),
    ]).run()
    assert result.ok
    print("pandas" in sys.modules)
""")


def test_five_filter_pipeline_imports_no_pandas(tmp_path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "http://x.org/a", "lorem", "ipsum", "!!!"]
    with open(src / "a.jsonl", "w") as fh:
        for i in range(300):
            n = int(rng.integers(0, 40))
            fh.write(json.dumps({"id": i, "text": " ".join(rng.choice(words, n))}) + "\n")
    env = {**os.environ, "CURATOR_SUMMARY": "0"}
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(src), str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "False", "the run imported pandas"


def test_buffer_conversions_equal_pyarrows() -> None:
    for values in (np.array([True, False, True] * 5), np.arange(7, dtype=np.int32),
                   np.array([0.5, np.nan, -1.0]), np.array([], dtype=np.int64)):
        ours, theirs = to_arrow(values), pa.array(values)
        assert ours.type == theirs.type and repr(ours.to_pylist()) == repr(theirs.to_pylist())
        assert np.array_equal(to_numpy(pa.array(values)), values, equal_nan=True)
    sliced = pa.array([True, False, True, True, False]).slice(1, 3)
    assert to_numpy(sliced).tolist() == [False, True, True]
    assert to_numpy(pa.array([1, 2, 3, 4]).slice(2)).tolist() == [3, 4]
    assert np_bool(pa.array([True, None, False])).tolist() == [True, False, False]
    assert ge(pa.array([1, 5, None]), 2).to_pylist() == [False, True, None]
    assert le(pa.array([1.0, 5.0]), 2).to_pylist() == [True, False]
    assert to_numpy(pa.array([1, None])).tolist()[0] == 1  # with nulls: pyarrow's own path
