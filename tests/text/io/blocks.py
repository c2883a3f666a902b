"""Helpers of the block-splitting tests."""

from __future__ import annotations

import json

from curator_text import JsonlReaderStage


def read_rows(tasks) -> tuple[list[dict], list]:
    """``(id/text rows, rejected records)`` of reading every block task with one reader."""
    stage = JsonlReaderStage()
    rows: list[dict] = []
    for t in tasks:
        table = stage.process(t).to_pyarrow()
        rows += table.select(["id", "text"]).to_pylist() if table.num_rows else []
    return rows, stage.drain_rejected()


BAD = b'{"id": 4, "text": "broken \xc3\xa9'
"""A malformed JSONL line (cut off inside a string, after a two-byte character)."""


def tricky_lines() -> tuple[bytes, list[dict]]:
    """JSONL bytes with multi-byte characters, CRLF endings, a blank line, the malformed line
    :data:`BAD` and no trailing newline; and the good rows in order."""
    rows = [{"id": 0, "text": "plain"}, {"id": 1, "text": "ünïcödé ✓ 😀 δέλτα"},
            {"id": 2, "text": "crlf line"}, {"id": 3, "text": "€€€€€€€€"},
            {"id": 5, "text": "after the bad line 😀"}, {"id": 6, "text": "last, no newline"}]
    enc = [json.dumps(r, ensure_ascii=False).encode() for r in rows]
    data = (enc[0] + b"\n" + enc[1] + b"\n" + enc[2] + b"\r\n\n" + enc[3] + b"\n" + BAD + b"\n"
            + enc[4] + b"\r\n" + enc[5])
    return data, rows
