"""The compiled byte kernels that replaced Arrow/RE2 passes give exactly the old results: URL
characters as ``re.sub(NEMO_URL_REGEX, "")`` removes them, character counts as ``len``, JSON
string literals as ``json.dumps(ensure_ascii=False)`` in JSON Lines (random texts built from the pieces that
matter: schemes, escapes, multi-byte characters, word edges at every 8-byte position)."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from curator_text import UrlsFilter
from curator_text.filters import _vec as v
from curator_text.io.jsonl_encode import table_to_jsonl

URL_PIECES = ["http://", "https://", "http:/", "htt", "h", "https", "ps://", "s", "%4F", "%4",
              "%zz", "%", "a", "Z", "9", " ", "\n", "<", '"', "é", "(", ")", ",", "!", "*", "-",
              "~", "€", "hhttp://x", ":", "/", "://", "p:", "😀"]


def _texts(pieces: list[str], n: int, most: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, most))) for _ in range(n)]


def test_url_characters_are_what_nemos_regex_removes() -> None:
    texts = _texts(URL_PIECES, 20000, 40, 1)
    rx = re.compile(v.NEMO_URL_REGEX)
    expected = np.array([len(t) - len(rx.sub("", t)) for t in texts], dtype=np.float64)
    arr = pa.array(texts)
    assert np.array_equal(v.url_chars(arr), expected)
    assert np.array_equal(v.url_chars(arr.slice(5, 700)), expected[5:705])
    scores = UrlsFilter().score_batch(arr)
    lens = np.array([len(t) for t in texts])
    assert np.allclose(scores, np.where(lens > 0, expected / np.maximum(lens, 1), 1.0))


def test_lengths_count_characters_nulls_stay_nan() -> None:
    texts = _texts(["a", "é", "€", "😀", " ", "\n", "xyzw"], 5000, 30, 2)
    arr = pa.array(texts)
    assert np.array_equal(v.lengths(arr), np.array([len(t) for t in texts], dtype=np.float64))
    assert np.array_equal(v.lengths(arr.slice(3, 100)), [len(t) for t in texts[3:103]])
    with_null = pa.array(["ab", None, "é"])
    assert np.array_equal(v.lengths(with_null), [2, np.nan, 1], equal_nan=True)
    assert np.array_equal(v.lengths(pa.chunked_array([arr.slice(0, 2), arr.slice(2, 3)])),
                          pc.utf8_length(arr.slice(0, 5)).to_numpy().astype(np.float64))


def test_json_lines_escape_strings_as_json_dumps() -> None:
    pieces = [chr(i) for i in range(0x80)] + ["é", "€", "😀", "\u2028"] + ["abcdefgh"] * 20
    texts = _texts(pieces, 10000, 40, 3)
    for arr in (pa.array(texts), pa.array(texts).slice(7, 3000)):
        lines = table_to_jsonl(pa.table({"t": arr, "n": range(len(arr))})).decode().split("\n")
        assert lines.pop() == ""
        assert lines == [f'{{"t":{json.dumps(t, ensure_ascii=False)},"n":{i}}}'
                         for i, t in enumerate(arr.to_pylist())]
