"""The kernels' portable path (no SSE2: what an ARM machine builds) gives exactly the results of
the path this machine built: the C source is compiled again with ``CURATOR_PORTABLE`` and every
kernel runs on the same texts in both."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sysconfig
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from curator_text import _native
from curator_text.filters._vec import _byte_ranges, text_view
from curator_text.filters.repetition import _POLICY_BYTES

from tests.text.filters.test_vectorised import _boilerplate_texts, _corpus, _space_texts

SOURCES = Path(_native.__file__).parents[2] / "csrc"  # a source checkout


@pytest.fixture(scope="module")
def portable(tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    sources = sorted(str(p) for p in SOURCES.glob("*.c"))
    if cc is None or not sources:
        pytest.skip("needs a C compiler and the kernels' source (a source checkout)")
    out = tmp_path_factory.mktemp("portable") / "_native_portable.so"
    subprocess.run([cc, "-O2", "-std=c11", "-shared", "-fPIC", "-DCURATOR_PORTABLE",
                    f"-I{sysconfig.get_paths()['include']}", *sources, "-o", str(out)],
                   check=True, capture_output=True, timeout=300)
    spec = importlib.util.spec_from_file_location("curator_text._native", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_kernel_gives_the_same_results_on_the_portable_path(portable) -> None:
    texts = pa.array(_corpus() + _space_texts() + _boilerplate_texts(500))
    view = text_view(texts)
    n = len(view)

    def both(name: str, *args, dtype=np.int64) -> None:
        got = [np.empty(n, dtype), np.empty(n, dtype)]
        getattr(_native, name)(*view.args, *args, got[0])
        getattr(portable, name)(*view.args, *args, got[1])
        assert np.array_equal(got[0], got[1]), name

    for name in ("word_counts", "char_counts", "url_chars"):
        both(name)
    ranges = _byte_ranges("abcdefghijklmnopqrstuvwxyz0123456789\n?!,.")
    got = [(np.empty(n, np.int64), np.empty(n, np.int64)) for _ in range(2)]
    _native.range_counts(*view.args, ranges, *got[0])
    portable.range_counts(*view.args, ranges, *got[1])
    assert all(np.array_equal(a, b) for a, b in zip(got[0], got[1], strict=True))
    for k in (1, 2, 3):
        both("top_ngram_scores", k, 2**64 - 1, dtype=np.float64)
        both("duplicate_ngram_scores", k, 2**64 - 1, dtype=np.float64)
    both("boilerplate_scores", _POLICY_BYTES, dtype=np.float64)
    spec = ((b'{"t":', *view.args, None, True),)
    buf = [bytearray(1 << 22), bytearray(1 << 22)]
    ends = [_native.jsonl_rows(spec, 0, buf[0]), portable.jsonl_rows(spec, 0, buf[1])]
    assert ends[0] == ends[1] and buf[0][:ends[0][1]] == buf[1][:ends[1][1]]


def test_json_lines_are_read_the_same_on_the_portable_path(portable) -> None:
    import ctypes
    import json

    rows = [{"t": t, "n": i, "f": i / 3, "b": i % 2 == 0, "z": None}
            for i, t in enumerate(_corpus(300) + _space_texts()[:200])]
    data = "".join(json.dumps(r, ensure_ascii=i % 2 == 0) + "\n"
                   for i, r in enumerate(rows)).encode()

    def plain(parsed):
        rows, columns = parsed
        return rows, [(name, kind, *(ctypes.string_at(b[0], b[1]) if isinstance(b, tuple) else b
                                     for b in rest)) for name, kind, *rest in columns]

    assert plain(_native.read_jsonl(data)) == plain(portable.read_jsonl(data))
