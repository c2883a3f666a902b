"""The compiled JSON Lines reader (``readers.read_jsonl_fast``) gives exactly the table Arrow's
JSON reader gives, or gives up (``None``: the reader then asks Arrow): random blocks of every
value JSON has, escapes, Unicode, invalid bytes, type changes, timestamps, nesting, odd spacing
and syntax errors are read both ways and compared."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pyarrow.json as pj
import pytest
from curator_text.io.readers import read_jsonl_fast

KEYS = ["id", "text", "url", "score", "flag", "a\\\"b", "\\u00e9", "", "x"]
STRINGS = ["plain words", "", "tab\\tnew\\nline", "quote \\\" back \\\\ slash \\/", "\\b\\f\\r",
           "caf\u00e9", "\\u00e9t\\u00e9", "emoji \U0001f600", "\\ud83d\\ude00", "\u65e5\u672c",
           "x" * 40, "2020-01-01", "2020-01-01T10:00:00Z", "1994-11-24 08:49:37Z and text",
           "2020-01", "\\u0000nul"]
BAD_STRINGS = ["raw\ttab", "\\q", "\\ud83d", "\\ude00", "\\u12", "bad \\uZZZZ"]
NUMBERS = ["0", "-0", "7", "-42", "123456789012345678", "1234567890123456789",
           "98765432109876543210", "1.5", "-0.0", "1e5", "1E-3", "2.5e+2",
           "1.7976931348623157e308", "4.9e-324", "1e400", "0.1"]
BAD_NUMBERS = ["01", "1.", "+1", ".5", "-", "1e", "NaN", "Infinity", "-Infinity"]
SPACE = ["", " ", "\t", "  ", "\r"]


def _value(rng: random.Random, kind: str, risky: bool) -> str:
    if kind == "string":
        pool = STRINGS + (BAD_STRINGS if risky else [])
        return '"' + rng.choice(pool) + '"'
    if kind == "number":
        return rng.choice(NUMBERS + (BAD_NUMBERS if risky else []))
    if kind == "bool":
        return rng.choice(["true", "false"])
    if kind == "nested":
        return rng.choice(['{"k": 1}', "[1, 2]", "[]", "{}"])
    return "null"


def _block(rng: random.Random, risky: bool) -> bytes:
    kinds = {k: rng.choice(["string", "number", "bool", "null"]) for k in KEYS}
    lines = []
    for _ in range(rng.randint(0, 12)):
        keys = rng.sample(KEYS, rng.randint(0, 5))
        if risky and rng.random() < 0.1 and keys:
            keys.append(keys[0])  # a duplicate key
        parts = []
        for k in keys:
            kind = kinds[k]
            if risky and rng.random() < 0.1:
                kind = rng.choice(["string", "number", "bool", "null", "nested"])
            sp = rng.choice(SPACE)
            parts.append(f'{sp}"{k}"{sp}:{sp}{_value(rng, kind, risky)}{sp}')
        line = "{" + ",".join(parts) + "}"
        if risky and rng.random() < 0.05:
            line = rng.choice(["[1]", "1", '{"a": 1} x', '{"a": 1', "\ufeff" + line])
        lines.append(line + rng.choice(["\n", "\n", "\r\n", "\n\n", " \n"]))
    data = "".join(lines).encode()
    if risky and rng.random() < 0.05:
        data = data.replace(b"caf\xc3\xa9", b"caf\xff", 1)  # invalid UTF-8
    return data


def _arrow(data: bytes) -> pa.Table | None:
    try:
        return pj.read_json(pa.BufferReader(data),
                            read_options=pj.ReadOptions(block_size=8 << 20, use_threads=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


@pytest.mark.parametrize("risky", [False, True], ids=["valid", "anything"])
def test_the_fast_reader_reads_what_arrow_reads_or_gives_up(risky: bool) -> None:
    rng = random.Random(11 if risky else 12)
    read = gave_up = 0
    for _ in range(3000):
        data = _block(rng, risky)
        if not data.strip():
            continue
        fast = read_jsonl_fast(data)
        if fast is None:
            gave_up += 1
            continue
        read += 1
        arrow = _arrow(data)
        assert arrow is not None, data  # never reads what Arrow refuses
        assert fast.schema == arrow.schema, (data, fast.schema, arrow.schema)
        assert fast.equals(arrow), data
        assert fast.to_pylist() == arrow.to_pylist()
    assert read > (100 if risky else 500)  # the fast path is taken
    assert gave_up > (200 if risky else 0)


def test_a_column_of_dates_is_typed_as_arrow_types_it() -> None:
    """A web corpus's crawl dates: timestamps where every value reads as one, else strings."""
    dates = ['"2019-04-25T12:57:54Z"', '"2020-01-01"', "null", '"2013-05-18 05:48:54+01:00"']
    for values, kind in ((dates, "timestamp[s]"), ([*dates, '"2020-01-01T10:00:00.5"'], "string"),
                         ([*dates, '"soon"'], "string")):
        data = "".join(f'{{"text": "words {i}", "date": {v}}}\n'
                       for i, v in enumerate(values)).encode()
        fast = read_jsonl_fast(data)
        assert fast is not None and fast.equals(_arrow(data)), values
        assert str(fast.schema.field("date").type) == kind


def test_a_realistic_block_takes_the_fast_path_with_its_exact_types() -> None:
    rows = [{"id": i, "text": f"Document {i}: caf\u00e9 \"quoted\"\n\tnext", "score": i / 7,
             "ok": i % 2 == 0, "url": None if i % 3 else f"https://ex.com/{i}"}
            for i in range(1000)]
    data = "".join(json.dumps(r, ensure_ascii=i % 2 == 0) + "\n"
                   for i, r in enumerate(rows)).encode()
    fast = read_jsonl_fast(data)
    assert fast is not None and fast.equals(_arrow(data))
    assert fast.to_pylist() == rows
    assert [str(t) for t in fast.schema.types] == ["int64", "string", "double", "bool", "string"]


@pytest.mark.parametrize("data", [
    b'{"a": {"b": 1}}\n', b'{"a": [1]}\n', b'{"a": 1, "a": 2}\n',
    b'{"a": NaN}\n', b'{"a": 12345678901234567890}\n', b'\xef\xbb\xbf{"a": 1}\n',
    b'{"a": true}\n{"a": 1}\n', b'{"a": "x\ty"}\n', b'{"a": "\\ud800"}\n', b'{}\n{}\n',
])
def test_what_is_not_certain_is_left_to_arrow(data: bytes) -> None:
    assert read_jsonl_fast(data) is None
