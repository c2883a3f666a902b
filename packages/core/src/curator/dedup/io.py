"""Table input/output shared by the deduplication workflows (Parquet and JSONL, atomic writes)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import BinaryIO

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq

from curator.io import atomic_write, expand_paths, get_fs

__all__ = ["INPUT_EXTENSIONS", "list_inputs", "read_table", "write_table", "write_parquet",
           "exists", "file_format", "open_input"]

INPUT_EXTENSIONS = (".parquet", ".jsonl", ".json", ".jsonl.gz", ".jsonl.zst")
_ZSTD = (".zst", ".zstd")


class _NativeRaw(io.RawIOBase):
    """A readable raw stream over an Arrow input stream (so it can be buffered and iterated)."""

    def __init__(self, stream: pa.NativeFile) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buf: memoryview) -> int:  # type: ignore[override]
        data = self._stream.read(len(buf))
        buf[:len(data)] = data
        return len(data)


@contextmanager
def open_input(path: str) -> Iterator[BinaryIO]:
    """Open an input file for reading, decompressed (by its extension); zstd with Arrow's
    codec, so no ``zstandard`` package is needed."""
    fs, p = get_fs(path)
    if p.lower().endswith(_ZSTD):
        with fs.open(p, "rb") as raw, pa.CompressedInputStream(pa.PythonFile(raw, mode="r"),
                                                              "zstd") as z:
            yield io.BufferedReader(_NativeRaw(z), 1 << 20)  # type: ignore[misc]
        return
    with fs.open(p, "rb", compression="infer") as fh:
        yield fh


def file_format(path: str) -> str:
    """``"parquet"`` or ``"jsonl"`` from the file name."""
    return "parquet" if path.endswith(".parquet") else "jsonl"


def list_inputs(input_path: str | Sequence[str], filetype: str | None = None,
                extensions: Sequence[str] | None = None) -> list[str]:
    """The input files (sorted) under ``input_path`` (a directory, glob or list), with
    ``extensions`` or the endings of ``filetype``."""
    exts = tuple(extensions) if extensions else INPUT_EXTENSIONS if filetype is None else (
        (".parquet",) if filetype == "parquet" else (".jsonl", ".json", ".jsonl.gz", ".jsonl.zst"))
    items = [input_path] if isinstance(input_path, str) else list(input_path)
    out: list[str] = []
    for item in items:
        if any(ch in item for ch in "*?["):  # curator.io.get_fs expands a glob to its first match
            fs, p = fsspec.core.url_to_fs(item)
            protocol = item.split("://", 1)[0] + "://" if "://" in item else ""
            found = sorted(f for f in fs.glob(p) if fs.isfile(f) and f.endswith(exts))
            if not found:
                raise FileNotFoundError(f"no input files match {item!r} (extensions: {exts})")
            out.extend(protocol + f if protocol and not f.startswith(protocol) else f
                       for f in found)
        else:
            out.extend(expand_paths(item, exts))
    return sorted(dict.fromkeys(out))


def exists(path: str) -> bool:
    fs, p = get_fs(path)
    return fs.exists(p)


_CODECS = {".zst": "zstd", ".zstd": "zstd", ".gz": "gzip", ".bz2": "bz2"}


@contextmanager
def _native_input(path: str) -> Iterator[pa.NativeFile]:
    """``path`` as an Arrow input stream, decompressed by Arrow (gzip, bz2, zstd)."""
    fs, p = get_fs(path)
    codec = next((c for ext, c in _CODECS.items() if p.lower().endswith(ext)), None)
    with fs.open(p, "rb") as raw, pa.input_stream(pa.PythonFile(raw, mode="r"),
                                                  compression=codec) as stream:
        yield stream


def _read_jsonl(path: str, columns: Sequence[str] | None,
                on_bad: Callable[[str, int, str], None] | None) -> pa.Table:
    import pyarrow.json as pj

    suffix = path.lower().rsplit("/", 1)[-1].rsplit(".", 1)[-1]
    try:
        if f".{suffix}" not in _CODECS and suffix not in ("jsonl", "json"):
            raise pa.ArrowInvalid("a compression Arrow does not read: parsed below")
        # Arrow reads and parses the stream in one thread: no copy of the file as Python
        # bytes, and no per-thread allocator caches left holding a file's worth of memory
        with _native_input(path) as stream:
            table = pj.read_json(stream, read_options=pj.ReadOptions(use_threads=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a malformed line: parse line by line
        with open_input(path) as fh:
            data = fh.read()
        rows = []
        for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if not isinstance(row, dict):
                    raise ValueError("a JSON line must hold an object")
                rows.append(row)
            except ValueError as e:
                if on_bad is not None:
                    on_bad(line[:1000], n, f"{type(e).__name__}: {e}")
        table = pa.Table.from_pylist(rows)
    if columns is not None:
        missing = [c for c in columns if c not in table.column_names]
        if missing and table.num_rows:
            raise KeyError(f"{path}: missing column(s) {missing}; it has {table.column_names}")
        if missing:
            return pa.table({c: pa.array([], pa.string()) for c in columns})
        table = table.select(list(columns))
    return table


def read_table(path: str, columns: Sequence[str] | None = None,
               on_bad: Callable[[str, int, str], None] | None = None) -> pa.Table:
    """Read a Parquet or JSONL file (optionally only ``columns``).

    Malformed JSON lines are skipped and reported through ``on_bad(line, line_number, error)``.
    Raises ``KeyError`` naming the file when a requested column is missing.
    """
    if file_format(path) == "parquet":
        fs, p = get_fs(path)
        with fs.open(p, "rb") as fh:
            schema = pq.read_schema(fh)
            missing = [c for c in (columns or []) if c not in schema.names]
            if missing:
                raise KeyError(f"{path}: missing column(s) {missing}; it has {schema.names}")
            fh.seek(0)
            return pq.read_table(fh, columns=list(columns) if columns is not None else None)
    return _read_jsonl(path, columns, on_bad)


def write_parquet(table: pa.Table, path: str) -> None:
    """Write ``table`` to ``path`` as Parquet, atomically.

    Only string columns are dictionary-encoded: the numeric and list columns of dedup files
    are hashes, ids, signatures and shingle sets, nearly all distinct, where trying a dictionary
    first makes writing about 4 times and reading about 3 times slower, for a larger file."""
    strings = [f.name for f in table.schema
               if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
               or pa.types.is_dictionary(f.type)]
    with atomic_write(path, "wb") as fh:
        pq.write_table(table, fh, use_dictionary=strings)


def write_table(table: pa.Table, path: str) -> None:
    """Write ``table`` atomically as Parquet or JSONL (chosen by ``path``'s extension)."""
    if file_format(path) == "parquet":
        write_parquet(table, path)
        return
    with atomic_write(path, "wb", compression="infer") as fh:
        for batch in table.to_batches(max_chunksize=10_000):
            lines = [json.dumps(r, ensure_ascii=False, default=str) for r in batch.to_pylist()]
            if lines:
                fh.write(("\n".join(lines) + "\n").encode("utf-8"))
