"""InterleavedBatch: interleaved image-text documents, one row per segment (NeMo Curator's task).

Each document (``sample_id``) is a metadata row (``position == -1``) and its content rows in
reading order (``position`` 0, 1, 2 …), each a ``text`` or an ``image`` segment. The reserved
columns are :data:`INTERLEAVED_SCHEMA`; any other column is the user's and is passed through
every stage untouched.

========================  ============  =======================================================
column                    type          meaning
========================  ============  =======================================================
``sample_id``             string        the document
``position``              int32         place in the document; ``-1`` for the metadata row
``modality``              string        ``text``, ``image`` or ``metadata`` (others pass through)
``content_type``          string        MIME type (``text/plain``, ``image/jpeg`` …)
``text_content``          string        the text of a text row
``binary_content``        large_binary  image bytes, filled by materialisation
``source_ref``            string        JSON locator ``{path, member, byte_offset, byte_size,
                                        frame_index}`` of the bytes (see below)
``materialize_error``     string        why the bytes could not be fetched
========================  ============  =======================================================

``source_ref``: ``path`` alone is a file or URL read whole; with ``member`` a tar member; with
``byte_offset`` / ``byte_size`` a byte range of ``path`` (the fastest); ``frame_index`` picks one
frame of a multi-frame TIFF. ``path`` may be local, any fsspec URL (``s3://``) or ``http(s)://``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from curator.tasks import Task

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["INTERLEAVED_SCHEMA", "RESERVED_COLUMNS", "SOURCE_REF_KEYS", "InterleavedBatch"]

log = logging.getLogger(__name__)

INTERLEAVED_SCHEMA = pa.schema([
    pa.field("sample_id", pa.string(), nullable=False),
    pa.field("position", pa.int32(), nullable=False),
    pa.field("modality", pa.string(), nullable=False),
    pa.field("content_type", pa.string(), nullable=True),
    pa.field("text_content", pa.string(), nullable=True),
    pa.field("binary_content", pa.large_binary(), nullable=True),
    pa.field("source_ref", pa.string(), nullable=True),
    pa.field("materialize_error", pa.string(), nullable=True),
])
"""The reserved columns, in order, with their types (NeMo Curator's schema)."""

RESERVED_COLUMNS: frozenset[str] = frozenset(INTERLEAVED_SCHEMA.names)
"""Columns managed by Curator's stages; every other column is a user column (passed through)."""

SOURCE_REF_KEYS = ("path", "member", "byte_offset", "byte_size", "frame_index")


def _is_frame(value: Any) -> bool:
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(value, pd.DataFrame)


def _empty_table() -> pa.Table:
    return INTERLEAVED_SCHEMA.empty_table()


@dataclass
class InterleavedBatch(Task["pa.Table | pd.DataFrame"]):
    """Interleaved documents, one row per segment (see the module doc for the schema).

    ``data`` is held as given, a ``pyarrow.Table`` (what Curator's readers produce) or a pandas
    DataFrame, as in NeMo Curator; :meth:`to_pyarrow` and :meth:`to_pandas` convert (the pandas
    view uses Arrow-backed dtypes, so large binary columns are not copied into Python objects).
    ``num_items`` counts documents (distinct ``sample_id``), :meth:`count` rows.
    """

    REQUIRED_COLUMNS = frozenset(f.name for f in INTERLEAVED_SCHEMA if not f.nullable)
    data: Any = field(default_factory=_empty_table)

    # -- conversion ------------------------------------------------------------------------
    def to_pyarrow(self) -> pa.Table:
        """The rows as a ``pyarrow.Table`` (no copy when held as Arrow)."""
        if isinstance(self.data, pa.Table):
            return self.data
        if _is_frame(self.data):
            return pa.Table.from_pandas(self.data, preserve_index=False)
        raise TypeError(f"Cannot convert {type(self.data).__name__} to PyArrow table: "
                        f"InterleavedBatch.data must be a pyarrow.Table or a pandas DataFrame")

    def to_pandas(self) -> pd.DataFrame:
        """The rows as a pandas DataFrame (the batch's own frame when it holds one)."""
        if _is_frame(self.data):
            return self.data
        if isinstance(self.data, pa.Table):
            import pandas as pd

            return self.data.to_pandas(types_mapper=pd.ArrowDtype)
        raise TypeError(f"Cannot convert {type(self.data).__name__} to Pandas DataFrame: "
                        f"InterleavedBatch.data must be a pyarrow.Table or a pandas DataFrame")

    # -- introspection ---------------------------------------------------------------------
    @property
    def num_items(self) -> int:
        """Number of documents (distinct ``sample_id`` values)."""
        if isinstance(self.data, pa.Table):
            if self.data.num_rows == 0 or "sample_id" not in self.data.column_names:
                return 0
            return int(pc.count_distinct(self.data.column("sample_id")).as_py())
        if _is_frame(self.data):
            return int(self.data["sample_id"].nunique()) if "sample_id" in self.data else 0
        return 0

    def count(self, *, modality: str | None = None) -> int:
        """Rows in the batch, or rows of one ``modality`` (``task.count(modality="image")``)."""
        if modality is None:
            return len(self.data)
        if isinstance(self.data, pa.Table):
            return int(pc.sum(pc.equal(self.data.column("modality"), modality)).as_py() or 0)
        return int((self.data["modality"] == modality).sum())

    def get_columns(self) -> list[str]:
        if _is_frame(self.data):
            return [str(c) for c in self.data.columns]
        if isinstance(self.data, pa.Table):
            return self.data.column_names
        raise TypeError(f"Unsupported data type: {type(self.data).__name__} (InterleavedBatch.data "
                        f"must be a pyarrow.Table or a pandas DataFrame)")

    def validate(self) -> bool:
        """Whether the batch has rows and every required column."""
        missing = sorted(self.REQUIRED_COLUMNS - set(self.get_columns()))
        if missing:
            log.warning("Task %s missing required columns: %s", self.task_id, missing)
            return False
        if self.num_items <= 0:
            log.warning("Task %s has no items", self.task_id)
            return False
        return True

    # -- mutation (NeMo Curator declares these and leaves them unimplemented) ------------
    def add_rows(self, rows: Any, sample_id: str | None = None,
                 auto_position: bool = True) -> InterleavedBatch:
        """Not implemented (as in NeMo Curator): build a new batch from ``to_pyarrow()``."""
        raise NotImplementedError("InterleavedBatch.add_rows is not implemented (as in NeMo "
                                  "Curator): build a new InterleavedBatch from to_pyarrow()")

    def delete_rows(self, mask: Any) -> InterleavedBatch:
        """Not implemented (as in NeMo Curator): filter ``to_pyarrow()`` instead."""
        raise NotImplementedError("InterleavedBatch.delete_rows is not implemented (as in NeMo "
                                  "Curator): filter to_pyarrow() and build a new batch")

    # -- source_ref ------------------------------------------------------------------------
    @staticmethod
    def build_source_ref(path: str | None, member: str | None, byte_offset: int | None = None,
                         byte_size: int | None = None, frame_index: int | None = None) -> str:
        """The ``source_ref`` JSON string of a locator; ``frame_index`` is written only when
        given."""
        ref: dict[str, Any] = {"path": path, "member": member, "byte_offset": byte_offset,
                               "byte_size": byte_size}
        if frame_index is not None:
            ref["frame_index"] = frame_index
        return json.dumps(ref, ensure_ascii=True)

    @staticmethod
    def parse_source_ref(source_value: str | None) -> dict[str, str | int | None]:
        """The locator dict of a ``source_ref`` string (all keys ``None`` for a null or empty
        value). Raises ``TypeError`` when the JSON is not an object."""
        if source_value is None or source_value == "" or (
                isinstance(source_value, float) and source_value != source_value):
            return dict.fromkeys(SOURCE_REF_KEYS)
        if not isinstance(source_value, str):
            import pandas as pd

            if pd.isna(source_value):
                return dict.fromkeys(SOURCE_REF_KEYS)
        parsed = json.loads(source_value)
        if not isinstance(parsed, dict):
            raise TypeError("source_ref must decode to a JSON object")

        def as_int(v: Any) -> int | None:
            return None if v is None else int(v)

        path, member = parsed.get("path"), parsed.get("member")
        return {"path": None if path is None else str(path),
                "member": None if member is None else str(member),
                "byte_offset": as_int(parsed.get("byte_offset")),
                "byte_size": as_int(parsed.get("byte_size")),
                "frame_index": as_int(parsed.get("frame_index"))}

    def with_parsed_source_ref_columns(self, prefix: str = "_src_") -> pd.DataFrame:
        """A copy of the rows as a DataFrame with the locator's keys as columns
        ``{prefix}path``, ``{prefix}member``, ``{prefix}byte_offset``, ``{prefix}byte_size``,
        ``{prefix}frame_index``."""
        import pandas as pd

        df = self.to_pandas().copy()
        refs = df["source_ref"].tolist() if "source_ref" in df.columns else [None] * len(df)
        parsed = pd.DataFrame.from_records([self.parse_source_ref(v) for v in refs],
                                           columns=list(SOURCE_REF_KEYS))
        for col in parsed.columns:
            df[f"{prefix}{col}"] = parsed[col].to_numpy(copy=False)
        return df

    # -- storage of failed tasks, ids --------------------------------------------------------
    def dump_data(self, files: Any) -> Any:
        from curator.task_data import dump_data

        return dump_data(self.to_pyarrow(), files)

    def _content_id(self) -> str:
        table = self.to_pyarrow()
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        digest = hashlib.blake2b(sink.getvalue().to_pybytes(), digest_size=8)
        digest.update(self.dataset_name.encode())
        return digest.hexdigest()
