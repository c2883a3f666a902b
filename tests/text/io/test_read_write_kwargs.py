"""NeMo Curator's ``read_kwargs`` / ``write_kwargs``: ``storage_options`` reach fsspec for
listing, reading and writing. The filesystem is fsspec's real ``dir://`` (DirFileSystem), which
cannot be opened without its ``path`` option."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from curator import Pipeline
from curator.errors import ConfigError
from curator_text import JsonlReader, JsonlWriter, ParquetReader, ParquetWriter


@pytest.fixture
def root(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text(
        json.dumps({"text": "café ☕", "n": 1}) + "\n" + json.dumps({"text": "b", "n": 2}) + "\n",
        encoding="utf-8")
    return tmp_path


def _opts(root) -> dict:
    return {"storage_options": {"path": str(root), "target_protocol": "file"}}


def test_storage_options_reach_fsspec_for_reading_and_writing(root) -> None:
    opts = _opts(root)
    result = Pipeline("kw", stages=[
        JsonlReader(file_paths="dir://in", read_kwargs={**opts, "dtype_backend": "pyarrow"}),
        JsonlWriter(path="dir://out", write_kwargs=opts)]).run(summary=False)
    assert result.ok
    written = sorted((root / "out").glob("*.jsonl"))
    assert len(written) == 1
    rows = [json.loads(line) for line in written[0].read_text(encoding="utf-8").splitlines()]
    assert rows == [{"text": "café ☕", "n": 1}, {"text": "b", "n": 2}]
    assert "café ☕" in written[0].read_text(encoding="utf-8")  # UTF-8, as NeMo's default

    result = Pipeline("kw2", stages=[
        JsonlReader(file_paths="dir://out", read_kwargs=opts),
        ParquetWriter(path="dir://pq", write_kwargs={**opts, "compression": "gzip",
                                                      "index": False})]).run(summary=False)
    assert result.ok
    (pfile,) = sorted((root / "pq").glob("*.parquet"))
    assert pq.ParquetFile(pfile).metadata.row_group(0).column(0).compression == "GZIP"
    back = Pipeline("kw3", stages=[ParquetReader(file_paths="dir://pq", read_kwargs={
        **opts, "columns": ["n"]})]).run(summary=False)
    assert [t.to_pyarrow().to_pylist() for t in back] == [[{"n": 1}, {"n": 2}]]


def test_force_ascii_escapes_like_pandas(root) -> None:
    Pipeline("asc", stages=[
        JsonlReader(file_paths=str(root / "in")),
        JsonlWriter(path=str(root / "asc"), write_kwargs={"force_ascii": True})]).run(
            summary=False)
    (out,) = (root / "asc").glob("*.jsonl")
    raw = out.read_bytes()
    assert raw.isascii() and b"caf\\u00e9 \\u2615" in raw
    assert json.loads(raw.splitlines()[0])["text"] == "café ☕"


def test_without_storage_options_the_filesystem_cannot_open(root) -> None:
    with pytest.raises(Exception):  # noqa: B017 - fsspec's own error
        Pipeline("no", stages=[JsonlReader(file_paths="dir://elsewhere/in")]).run(summary=False)


def test_unknown_kwargs_are_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="nrows"):
        JsonlReader(file_paths="x", read_kwargs={"nrows": 3})
    with pytest.raises(ConfigError, match="date_format"):
        JsonlWriter(path="out", write_kwargs={"date_format": "iso"})
