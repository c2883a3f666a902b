"""The values of a task stored as data, never as pickles: JSON with the bytes it carries in
files beside it (Parquet for tables, ``.npy`` for arrays, the image, audio or video bytes
themselves).

A task class stores its ``data`` through two methods (see :class:`curator.Task`):
``dump_data(files) -> state`` and ``load_data(state, files) -> data``, with the helpers here
(:func:`dump_value`, :func:`load_value`, :func:`dump_data`, :func:`dump_array`) writing through a
:class:`TaskFiles`. Whole tasks (named by their registered class) are stored by
:mod:`curator.task_files`, which re-exports these names. This module sits below ``curator.tasks``
(it knows no task class), so a task's own methods can use it.
"""

from __future__ import annotations

import io
import math
import posixpath
from collections.abc import Callable
from typing import IO, Any

from curator.errors import ConfigError
from curator.io import atomic_write, get_fs

__all__ = ["TaskFiles", "TaskNotSerializable", "dump_value", "load_value", "dump_data",
           "dump_array"]

_TAG = "__curator__"

class TaskNotSerializable(TypeError):
    """The task holds something that cannot be stored as data (or its class is not
    registered as a ``task``)."""


class TaskFiles:
    """The files of one stored task, named ``{stem}.{key}`` beside ``{stem}.task.json``.

    ``put(key, payload)`` writes one (atomically) and returns its name; ``read(name)`` /
    ``open(name)`` read one back. Names are plain file names in the task's folder: a name
    with a path separator (from a tampered document) is refused."""

    def __init__(self, stem: str) -> None:
        self.folder, self.base = posixpath.split(stem)
        self.written: list[str] = []
        self._counter = 0

    def path(self, name: str) -> str:
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise ConfigError(f"stored task file name {name!r} is not a plain file name")
        return posixpath.join(self.folder, name) if self.folder else name

    def new_key(self, suffix: str) -> str:
        """A key unique within this task: ``{n}{suffix}``."""
        self._counter += 1
        return f"{self._counter}{suffix}"

    def put(self, key: str, payload: bytes | Callable[[IO[bytes]], None]) -> str:
        name = f"{self.base}.{_safe(key)}"
        with atomic_write(self.path(name), "wb") as fh:
            if isinstance(payload, bytes | bytearray | memoryview):
                fh.write(payload)
            else:
                payload(fh)
        self.written.append(name)
        return name

    def open(self, name: str) -> IO[bytes]:
        fs, path = get_fs(self.path(name))
        return fs.open(path, "rb")

    def read(self, name: str) -> bytes:
        with self.open(name) as fh:
            return fh.read()


# ---- values: JSON with tagged bytes, arrays, tables, tuples … --------------------------------
def dump_value(value: Any, files: TaskFiles) -> Any:
    """``value`` as JSON, its bytes, arrays and tables written through ``files``. Raises
    :class:`TaskNotSerializable` for anything else (an arbitrary object)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else {_TAG: "float", "repr": repr(value)}
    if isinstance(value, list):
        return [dump_value(v, files) for v in value]
    if isinstance(value, tuple | set | frozenset):
        tag = "tuple" if isinstance(value, tuple) else "set"
        items = value if tag == "tuple" else sorted(value, key=repr)
        return {_TAG: tag, "items": [dump_value(v, files) for v in items]}
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and _TAG not in value:
            return {k: dump_value(v, files) for k, v in value.items()}
        return {_TAG: "dict", "items": [[dump_value(k, files), dump_value(v, files)]
                                        for k, v in value.items()]}
    if isinstance(value, bytes | bytearray):
        return {_TAG: "bytes", "file": files.put(files.new_key(".bin"), bytes(value))}
    return _dump_library_value(value, files)


def dump_array(value: Any, files: TaskFiles, key: str | None = None) -> dict[str, Any]:
    """A NumPy array as its own ``.npy`` file (``{stem}.{key}``; read back by
    :func:`load_value`, never with pickles)."""
    import numpy as np

    if value.dtype.hasobject:
        raise TaskNotSerializable(f"a NumPy array of Python objects ({value.dtype}) cannot be "
                                  f"stored as data")
    return {_TAG: "ndarray", "file": files.put(
        key or files.new_key(".npy"), lambda fh: np.save(fh, value, allow_pickle=False))}


def _dump_library_value(value: Any, files: TaskFiles) -> Any:
    import numpy as np
    import pyarrow as pa

    if isinstance(value, np.ndarray):
        return dump_array(value, files)
    if isinstance(value, np.generic):
        return {_TAG: "scalar", "dtype": str(value.dtype), "value": dump_value(value.item(), files)}
    if isinstance(value, pa.RecordBatch):
        value = pa.Table.from_batches([value])
    if isinstance(value, pa.Table):
        return {_TAG: "table", "file": files.put(files.new_key(".parquet"),
                                                 lambda fh: _write_parquet(value, fh))}
    pandas = _pandas()
    if pandas is not None and isinstance(value, pandas.DataFrame):
        table = pa.Table.from_pandas(value)
        return {_TAG: "table", "pandas": True, "file": files.put(
            files.new_key(".parquet"), lambda fh: _write_parquet(table, fh))}
    raise TaskNotSerializable(f"a {type(value).__module__}.{type(value).__qualname__} cannot be "
                              f"stored as data (JSON values, bytes, NumPy arrays and Arrow "
                              f"tables can; a task class stores others in its dump_data)")


def dump_data(data: Any, files: TaskFiles) -> Any:
    """:meth:`curator.Task.dump_data`'s default: a ``pyarrow.Table`` as ``{stem}.parquet``,
    anything else with :func:`dump_value` (read back with :func:`load_value`)."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return {_TAG: "table", "file": files.put("parquet", lambda fh: _write_parquet(data, fh))}
    return dump_value(data, files)


def load_value(state: Any, files: TaskFiles) -> Any:
    """The value :func:`dump_value` stored as ``state``."""
    if isinstance(state, list):
        return [load_value(v, files) for v in state]
    if not isinstance(state, dict):
        return state
    tag = state.get(_TAG)
    if tag is None:
        return {k: load_value(v, files) for k, v in state.items()}
    if tag == "float":
        return float(state["repr"])
    if tag == "tuple":
        return tuple(load_value(v, files) for v in state["items"])
    if tag == "set":
        return {load_value(v, files) for v in state["items"]}
    if tag == "dict":
        return {load_value(k, files): load_value(v, files) for k, v in state["items"]}
    if tag == "bytes":
        return files.read(state["file"])
    if tag == "ndarray":
        import numpy as np

        return np.load(io.BytesIO(files.read(state["file"])), allow_pickle=False)
    if tag == "scalar":
        import numpy as np

        return np.dtype(state["dtype"]).type(state["value"])
    if tag == "table":
        table = _read_parquet(files, state["file"])
        return table.to_pandas() if state.get("pandas") else table
    raise ConfigError(f"stored task: unknown value tag {tag!r} (written by a newer Curator?)")


def _pandas() -> Any:
    import sys

    return sys.modules.get("pandas")  # a DataFrame exists only if pandas is imported already


def _write_parquet(table: Any, fh: IO[bytes]) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, fh)


def _read_parquet(files: TaskFiles, name: str) -> Any:
    import pyarrow.parquet as pq

    with files.open(name) as fh:
        return pq.read_table(fh)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "_"
