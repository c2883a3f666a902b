"""The README's five-filter text pipeline on local files imports none of the modules a small run
cannot afford (issue 43, item 8): pandas (pyarrow imports it, ~0.3 s under the GIL, on its first
NumPy or Python-object conversion: the filters convert through buffers,
``curator_text.filters._vec.to_arrow`` / ``to_numpy``), ``pyarrow.compute`` (~50 ms of import and
exit: the default path uses compiled kernels and NumPy), fsspec (40-80 ms: local paths are
answered by ``curator.local_fs``) and multiprocessing (thread workers need none). A new import on
the hot path fails this test; the run is made twice (the second replaces the first's output
through the same file calls) and both write the same bytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pyarrow as pa
from curator_text.filters._vec import between, ge, le, np_bool, to_arrow, to_numpy

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
    print(sorted(m for m in ("pandas", "pyarrow.compute", "fsspec", "multiprocessing")
                 if m in sys.modules))
""")


def test_five_filter_pipeline_imports_only_what_it_needs(tmp_path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "http://x.org/a", "lorem", "ipsum", "!!!"]
    with open(src / "a.jsonl", "w") as fh:
        for i in range(300):
            n = int(rng.integers(0, 40))
            fh.write(json.dumps({"id": i, "text": " ".join(rng.choice(words, n))}) + "\n")
    env = {**os.environ, "CURATOR_SUMMARY": "0"}
    written = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", SCRIPT, str(src), str(tmp_path / "out")],
                             capture_output=True, text=True, timeout=300, env=env)
        assert out.returncode == 0, out.stderr[-3000:]
        assert out.stdout.strip().splitlines()[-1] == "[]", "the run imported these"
        written.append({p.name: p.read_bytes() for p in (tmp_path / "out").glob("*.jsonl")})
    assert written[0] == written[1] and len(written[0]) == 1


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
    assert between(np.array([1.0, 2.0, np.nan, 9.0]), 2, 5).to_pylist() == [False, True, False,
                                                                            False]
    assert between(pa.array([1, 3, None]), 2, 5).to_pylist() == [False, True, None]
    assert to_numpy(pa.array([1, None])).tolist()[0] == 1  # with nulls: pyarrow's own path
