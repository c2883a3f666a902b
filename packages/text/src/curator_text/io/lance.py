"""Lance datasets: NeMo Curator's ``LanceReader`` / ``LanceWriter`` and the Lance helpers
(``nemo_curator.utils.lance``, ``nemo_curator.tasks.lance``), shared with curator-interleaved.

Reading: :class:`LancePartitioningStage` opens the dataset once, pins its version and makes one
:class:`LanceReadTask` per ``fragments_per_partition`` fragments (task ids from path, version and
fragment ids: the same on every run); :class:`LanceReaderStage` scans those fragments of that
version into a ``DocumentBatch`` (Blob v2 columns read as bytes; with
``include_lance_metadata`` the row id, row address and fragment id columns).

Writing: :class:`LanceWriter` writes each batch as uncommitted fragment files and records them in
``{commit_path}/records/{hash of task id}.json`` (atomically: a re-run replaces its record, so a
task is never counted twice); :func:`commit_lance_checkpoint` then publishes every recorded
fragment as one dataset version, once (a second call returns the same version). Nothing is
visible in the dataset until the commit, so a crashed run leaves no half-written version.

Paths may be local or ``s3://`` (``storage_options`` as for fsspec / Lance). ``pylance`` is
imported only when a Lance stage runs.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import pyarrow as pa
import pyarrow.compute as pc
from curator import CompositeStage, EmptyTask, FileGroupTask, ProcessingStage
from curator.errors import ConfigError
from curator.io import atomic_write, get_fs
from curator.tasks import Task, get_deterministic_hash

from curator_text.tasks import DocumentBatch

__all__ = [
    "LANCE_FRAGID_COLUMN", "LANCE_ROWADDR_COLUMN", "LANCE_ROWID_COLUMN", "LanceReadTask",
    "LancePartitioningStage", "LanceReaderStage", "LanceReader", "LanceWriter",
    "add_lance_metadata_columns", "commit_lance_checkpoint", "encode_lance_blob_columns",
    "materialize_lance_blob_columns",
]

LANCE_ROWADDR_COLUMN = "__lance_rowaddr"
LANCE_ROWID_COLUMN = "__lance_rowid"
LANCE_FRAGID_COLUMN = "__lance_fragid"
_BLOB_V2 = "lance.blob.v2"
_COMMITTED_MARKER = "_COMMITTED"
_RECORDS_DIR = "records"


def _lance() -> Any:
    try:
        import lance
    except ImportError as e:  # pragma: no cover - pylance is a dependency of the users
        raise ImportError("Lance datasets need pylance: pip install pylance") from e
    return lance


# -- helpers (NeMo Curator's nemo_curator.utils.lance) -------------------------------------------
def add_lance_metadata_columns(table: pa.Table) -> pa.Table:
    """Rename a scan's ``_rowid`` / ``_rowaddr`` to ``__lance_rowid`` / ``__lance_rowaddr`` and
    add ``__lance_fragid`` (the upper 32 bits of the row address)."""
    missing = [n for n in ("_rowid", "_rowaddr") if n not in table.column_names]
    if missing:
        raise ValueError(f"Lance scanner did not return {missing}; include_lance_metadata "
                         f"requires row ids and addresses")
    rename = {"_rowid": LANCE_ROWID_COLUMN, "_rowaddr": LANCE_ROWADDR_COLUMN}
    table = table.rename_columns([rename.get(n, n) for n in table.column_names])
    addr = table[LANCE_ROWADDR_COLUMN].combine_chunks().cast(pa.uint64())
    frag = pc.shift_right(addr, pa.scalar(32, pa.uint64())).cast(pa.uint64())
    return table.append_column(LANCE_FRAGID_COLUMN, frag)


def _is_blob(field_type: Any) -> bool:
    return getattr(field_type, "extension_name", None) == _BLOB_V2


def materialize_lance_blob_columns(dataset: Any, table: pa.Table) -> pa.Table:
    """Replace the Blob v2 descriptors of a scan (which needs ``_rowaddr``) with the blobs'
    bytes (``large_binary``), aligned by row address."""
    addresses = [int(a) for a in table["_rowaddr"].combine_chunks().to_pylist()]
    for f in dataset.schema:
        i = table.schema.get_field_index(f.name)
        if i < 0 or not _is_blob(f.type):
            continue
        by_addr = dict(dataset.read_blobs(f.name, addresses=addresses))
        values = pa.array([by_addr.get(a) for a in addresses], type=pa.large_binary())
        table = table.set_column(i, pa.field(f.name, pa.large_binary(), nullable=f.nullable),
                                 values)
    return table


def encode_lance_blob_columns(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Turn binary columns that ``schema`` declares Blob v2 back into Blob v2 arrays."""
    lance = None
    for f in schema:
        i = table.schema.get_field_index(f.name)
        if i < 0 or not _is_blob(f.type):
            continue
        col = table.column(i).combine_chunks()
        if col.type != f.type:
            lance = lance or _lance()
            table = table.set_column(i, f, lance.blob_array(col.to_pylist()))
    return table


# -- the read task ---------------------------------------------------------------------------
@dataclass
class LanceReadTask(Task[list[int]]):
    """The Lance fragment ids of one read partition, with the dataset ``path`` and the
    ``version`` to read (pinned by the partitioner)."""

    path: str = field(default="", kw_only=True)
    version: int = field(default=0, kw_only=True)
    data: list[int] = field(default_factory=list)

    @property
    def num_items(self) -> int:
        return len(self.data)

    def validate(self) -> bool:
        return bool(self.data)

    def get_deterministic_id(self) -> str:
        return get_deterministic_hash([self.path, str(self.version), *map(str, self.data)])


def _pop_dataset_kwargs(read_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Take the options of ``lance.dataset`` out of ``read_kwargs``: ``dataset_options``, with
    top-level ``version`` and ``storage_options`` winning; the rest is for the scanner."""
    out = dict(read_kwargs.pop("dataset_options", {}) or {})
    for name in ("version", "storage_options"):
        value = read_kwargs.pop(name, out.get(name))
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return out


def _dataset_name(path: str) -> str:
    return posixpath.basename(str(path).rstrip("/")).removesuffix(".lance") or "lance"


@dataclass
class LancePartitioningStage(ProcessingStage[EmptyTask, LanceReadTask]):
    """Lists a Lance dataset's fragments (at its current version, or ``read_kwargs["version"]``)
    and makes one :class:`LanceReadTask` per ``fragments_per_partition`` of them.

    Parameters:
        path: the dataset (local or ``s3://``).
        fragments_per_partition: fragments per read task.
        fragment_ids: read only these fragments (default all; duplicates ignored; an unknown
            id is an error).
        read_kwargs: ``dataset_options`` for ``lance.dataset`` (top-level ``version`` and
            ``storage_options`` win).
    """

    path: str = ""
    fragments_per_partition: int = 32
    fragment_ids: list[int] | None = None
    read_kwargs: dict[str, Any] = field(default_factory=dict)
    name: str = "lance_partitioning"
    path_params: ClassVar[tuple[str, ...]] = ("path",)
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError(f"{self.name}: path (the Lance dataset) is required")
        if self.fragments_per_partition <= 0:
            raise ConfigError(f"{self.name}: fragments_per_partition must be greater than 0")
        self.read_kwargs = dict(self.read_kwargs or {})

    @property
    def is_source(self) -> bool:
        return True

    @property
    def input_paths(self) -> list[str]:
        return [self.path]

    def ray_stage_spec(self) -> dict[str, Any]:
        return {"is_fanout_stage": True}

    def process(self, _: EmptyTask) -> list[LanceReadTask]:
        lance = _lance()
        dataset = lance.dataset(self.path, **_pop_dataset_kwargs(dict(self.read_kwargs)))
        available = sorted(f.fragment_id for f in dataset.get_fragments())
        if self.fragment_ids is None:
            ids = available
        else:
            ids = sorted(set(self.fragment_ids))
            missing = sorted(set(ids) - set(available))
            if missing:
                raise ValueError(f"Lance dataset does not contain requested fragment ids: "
                                 f"{missing[:10]} (it has {len(available)} fragments)")
        name = _dataset_name(self.path)
        tasks = []
        for start in range(0, len(ids), self.fragments_per_partition):
            chunk = ids[start:start + self.fragments_per_partition]
            t = LanceReadTask(dataset_name=name, path=self.path, version=dataset.version,
                              data=chunk, metadata={"source_files": [self.path]})
            t.task_id = f"{name}-v{dataset.version}-{t.get_deterministic_id()}"
            tasks.append(t)
        return tasks


@dataclass
class LanceReaderStage(ProcessingStage[LanceReadTask, DocumentBatch]):
    """Reads the fragments of a :class:`LanceReadTask` (at its pinned version) into a
    ``DocumentBatch``.

    Parameters:
        fields: columns to read (overrides ``columns`` in ``read_kwargs``).
        read_kwargs: ``dataset_options`` / ``version`` / ``storage_options`` for the dataset;
            ``scanner_options`` and any other key for ``dataset.scanner`` (``filter``, …).
        include_lance_metadata: add ``__lance_rowid``, ``__lance_rowaddr``, ``__lance_fragid``.
        allow_empty: accepted for NeMo Curator compatibility (an empty read gives an empty
            batch).
    """

    fields: list[str] | None = None
    read_kwargs: dict[str, Any] = field(default_factory=dict)
    include_lance_metadata: bool = True
    allow_empty: bool = True
    name: str = "lance_reader"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        self.read_kwargs = dict(self.read_kwargs or {})

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    def outputs(self) -> tuple[list[str], list[str]]:
        scanner = self.read_kwargs.get("scanner_options") or {}
        cols = self.fields if self.fields is not None else self.read_kwargs.get("columns")
        if cols is None:
            cols = scanner.get("columns")
        out = list(cols or [])
        if self.include_lance_metadata:
            out += [LANCE_ROWID_COLUMN, LANCE_ROWADDR_COLUMN, LANCE_FRAGID_COLUMN]
        return ["data"], out

    def read_table(self, task: LanceReadTask, fields: list[str] | None = None
                   ) -> tuple[pa.Table, dict[str, Any]]:
        """The scanned table of ``task``'s fragments and the batch metadata (source file, Lance
        version, fragment ids, schema)."""
        from lance.schema import schema_to_json

        lance = _lance()
        kwargs = dict(self.read_kwargs)
        ds_kwargs = _pop_dataset_kwargs(kwargs)
        ds_kwargs["version"] = task.version
        scan = dict(kwargs.pop("scanner_options", {}) or {})
        scan.update(kwargs)
        if fields is not None:
            scan["columns"] = list(fields)
        dataset = lance.dataset(task.path, **ds_kwargs)
        scan["fragments"] = [dataset.get_fragment(i) for i in task.data]
        wanted = scan.get("columns")
        blobs = [f.name for f in dataset.schema
                 if _is_blob(f.type) and (wanted is None or f.name in wanted)]
        if self.include_lance_metadata or blobs:
            scan["with_row_address"] = True
        if self.include_lance_metadata:
            scan["with_row_id"] = True
        table = dataset.scanner(**scan).to_table()
        if blobs:
            table = materialize_lance_blob_columns(dataset, table)
        if self.include_lance_metadata:
            table = add_lance_metadata_columns(table)
        elif "_rowaddr" in table.column_names:
            table = table.drop_columns(["_rowaddr"])
        meta = {**task.metadata, "source_files": [task.path],
                "lance": {"version": task.version, "fragment_ids": list(task.data),
                          "schema": schema_to_json(dataset.schema),
                          "has_stable_row_ids": bool(getattr(dataset, "has_stable_row_ids",
                                                             False))}}
        return table, meta

    def process(self, task: LanceReadTask) -> DocumentBatch:
        fields = self.fields if self.fields is not None else None
        table, meta = self.read_table(task, fields)
        return DocumentBatch(task_id=task.task_id, dataset_name=task.dataset_name, data=table,
                             metadata=meta, stage_perf=list(task.stage_perf))


@dataclass
class LanceReader(CompositeStage[EmptyTask, DocumentBatch]):
    """Reads a Lance dataset into ``DocumentBatch`` es: :class:`LancePartitioningStage` +
    :class:`LanceReaderStage` (see them for the parameters).

    Example::

        LanceReader(path="s3://bucket/docs.lance", fields=["id", "text"],
                    read_kwargs={"storage_options": {...}, "filter": "lang = 'en'"})
    """

    path: str = ""
    fragments_per_partition: int = 32
    fields: list[str] | None = None
    read_kwargs: dict[str, Any] | None = None
    include_lance_metadata: bool = True
    fragment_ids: list[int] | None = None
    task_type: Literal["document"] = "document"
    name: str = "lance_reader"
    kind: ClassVar[str] = "reader"
    modality: ClassVar[str] = "text"

    def __post_init__(self) -> None:
        if not self.path:
            raise ConfigError(f"{self.name}: path (the Lance dataset) is required")
        self.read_kwargs = dict(self.read_kwargs or {})

    def decompose(self) -> list[ProcessingStage]:
        if self.task_type != "document":
            raise NotImplementedError(f"Converting DocumentBatch to {self.task_type} is not "
                                      f"supported yet.")
        return [LancePartitioningStage(path=self.path,
                                       fragments_per_partition=self.fragments_per_partition,
                                       fragment_ids=self.fragment_ids,
                                       read_kwargs=self.read_kwargs),
                LanceReaderStage(fields=self.fields, read_kwargs=self.read_kwargs,
                                 include_lance_metadata=self.include_lance_metadata)]


# -- writing ---------------------------------------------------------------------------------
def _record_name(task_id: str) -> str:
    return hashlib.sha256(task_id.encode()).hexdigest()[:24] + ".json"


@dataclass
class LanceWriter(ProcessingStage[DocumentBatch, FileGroupTask]):
    """Writes each batch as uncommitted Lance fragments under ``path`` and records them under
    ``commit_path``; call :func:`commit_lance_checkpoint` after the run to publish them as one
    version (see the module doc). Returns the record file of each task.

    Parameters:
        path: the Lance dataset (local or ``s3://``).
        commit_path: where the per-task records go (a directory; local or fsspec URL).
        schema: write exactly these columns with these types (e.g. Blob v2 fields).
        write_kwargs: ``lance.fragment.write_fragments`` options (``storage_options``,
            ``max_rows_per_file`` …); ``checkpoint_storage_options`` for ``commit_path``.
        fields: columns to write (default: all but the ``__lance_*`` metadata columns).
        mode: what the commit does: ``"create"`` a new dataset, ``"append"`` a version, or
            ``"overwrite"`` it.
    """

    path: str = ""
    commit_path: str = ""
    schema: pa.Schema | None = None
    write_kwargs: dict[str, Any] = field(default_factory=dict)
    fields: list[str] | None = None
    name: str = "lance_writer"
    mode: Literal["create", "append", "overwrite"] = "create"
    kind: ClassVar[str] = "writer"

    def __post_init__(self) -> None:
        if not self.path or not self.commit_path:
            raise ConfigError(f"{self.name}: path (the Lance dataset) and commit_path (where "
                              f"the fragment records go) are required")
        if self.mode not in ("create", "append", "overwrite"):
            raise ConfigError(f"{self.name}: mode must be 'create', 'append' or 'overwrite', "
                              f"got {self.mode!r}")
        self.write_kwargs = dict(self.write_kwargs or {})

    def inputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], []

    def _table_and_schema(self, task: Any) -> tuple[pa.Table, pa.Schema | None]:
        from lance.schema import json_to_schema

        table = task.to_pyarrow()
        schema = self.schema
        if schema is not None:
            table = table.select(schema.names)
        else:
            cols = self.fields or [n for n in table.column_names if not n.startswith("__lance_")]
            table = table.select(cols)
            source = (task.metadata.get("lance") or {}).get("schema")
            if source is not None:
                by_name = {f.name: f for f in json_to_schema(source)}
                schema = pa.schema([by_name.get(f.name, f) for f in table.schema])
        if schema is not None:
            table = encode_lance_blob_columns(table, schema)
        return table, schema

    def process(self, task: DocumentBatch) -> FileGroupTask:
        import lance.fragment as lf
        from lance.schema import schema_to_json

        kwargs = dict(self.write_kwargs)
        ck_options = kwargs.pop("checkpoint_storage_options", None)
        table, schema = self._table_and_schema(task)
        if schema is not None and table.schema != schema:
            table = table.cast(schema) if not any(_is_blob(f.type) for f in schema) else table
        fragments = lf.write_fragments(table, self.path, schema=schema or table.schema,
                                       **kwargs) if table.num_rows else []
        out: list[str] = []
        if fragments:
            record = {"mode": self.mode, "task_id": task.task_id, "dataset_path": self.path,
                      "schema": schema_to_json(schema or table.schema),
                      "fragments": [json.loads(f.to_json()) if isinstance(f.to_json(), str)
                                    else f.to_json() for f in fragments]}
            path = f"{self.commit_path.rstrip('/')}/{_RECORDS_DIR}/{_record_name(task.task_id)}"
            fs, inner = get_fs(path, ck_options)
            fs.makedirs(posixpath.dirname(inner), exist_ok=True)
            if ck_options:
                with fs.open(inner, "w") as fh:
                    json.dump(record, fh)
            else:
                with atomic_write(path, "w") as fh:
                    json.dump(record, fh)
            out.append(path)
        return FileGroupTask(task_id=task.task_id, dataset_name=task.dataset_name, data=out,
                             metadata={**task.metadata, "num_rows": table.num_rows},
                             stage_perf=list(task.stage_perf))


def commit_lance_checkpoint(dataset_path: str, checkpoint_path: str, *,
                            dataset_storage_options: dict[str, Any] | None = None,
                            checkpoint_storage_options: dict[str, Any] | None = None) -> int:
    """Publish every fragment recorded under ``checkpoint_path`` as one version of
    ``dataset_path`` and return it. Idempotent: a ``_COMMITTED`` marker records the version, and
    a second call returns it without committing again."""
    from lance.fragment import FragmentMetadata
    from lance.schema import json_to_schema

    lance = _lance()
    fs, root = get_fs(checkpoint_path, checkpoint_storage_options)
    root = root.rstrip("/")
    marker = f"{root}/{_COMMITTED_MARKER}"
    if fs.exists(marker):
        with fs.open(marker, "r") as fh:
            done = json.load(fh)
        if done.get("dataset_path") != dataset_path:
            raise ValueError(f"Checkpoint {checkpoint_path} belongs to "
                             f"{done.get('dataset_path')!r}, not {dataset_path!r}")
        return int(done["version"])
    paths = sorted(fs.glob(f"{root}/{_RECORDS_DIR}/*.json"))
    records = []
    for p in paths:
        with fs.open(p, "r") as fh:
            records.append(json.load(fh))
    if not records:
        raise ValueError(f"No Lance records found under {checkpoint_path}: run the pipeline "
                         f"with LanceWriter(commit_path={checkpoint_path!r}) first")
    records.sort(key=lambda r: str(r["task_id"]))
    mode = str(records[0]["mode"])
    schema = json_to_schema(records[0]["schema"])
    fragments = [FragmentMetadata.from_json(json.dumps(f)) for r in records
                 for f in r["fragments"]]
    opts = dataset_storage_options or None
    try:
        if mode == "append":
            read_version = lance.dataset(dataset_path, storage_options=opts).version
            op = lance.LanceOperation.Append(fragments)
        else:
            read_version = None
            if mode == "overwrite":
                try:
                    read_version = lance.dataset(dataset_path, storage_options=opts).version
                except (ValueError, OSError):
                    read_version = None
            op = lance.LanceOperation.Overwrite(schema, fragments)
        dataset = lance.LanceDataset.commit(dataset_path, op, read_version=read_version,
                                            storage_options=opts)
    except Exception as e:
        ids = sorted({str(r["task_id"]) for r in records})[:10]
        e.add_note(f"Lance commit includes fragments from Curator task IDs {ids}")
        raise
    version = int(dataset.version)
    with fs.open(marker, "w") as fh:
        json.dump({"dataset_path": dataset_path, "version": version}, fh)
    return version
