"""The base of the deduplication workflows: phases run as pipelines on any executor.

A workflow is a sequence of phases; each phase is a one-stage :class:`~curator.Pipeline` run over
tasks (input files or shuffle partitions) on the workflow's executor (local threads, Ray …).
Every stage writes its output files atomically under ``cache_path`` and skips the work when its
output already exists, so a re-run after a crash resumes where the first run stopped.

Reuse is safe because the directories a workflow reuses (its cache subtree, its files in
``duplicates/``) are keyed by a fingerprint of the input (each file's path,
size and modification time) and of the parameters, kept in a hidden marker file there: when
the fingerprint differs (new or changed input, other parameters) the workflow deletes what it
wrote there before and recomputes, with a warning; it never reuses another input's results.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from curator.dedup.id_generator import CURATOR_DEDUP_ID_STR
from curator.dedup.io import (
    exists,
    list_inputs,
    open_input,
    read_table,
    write_parquet,
    write_table,
)
from curator.dedup.memory import releases_memory
from curator.dedup.segments import SEGMENTS_EXT, read_segment, segment_files, write_segments
from curator.executors.base import BaseExecutor
from curator.io import atomic_write, expand_paths, get_fs, join_path, register_storage_options
from curator.output_dir import ManagedOutput, OutputDirError, check_inputs_apart, remove_temp_files
from curator.params import init_signature, typed_new
from curator.pipeline import Pipeline
from curator.run.stats import DEDUP_GROUP_SIZES
from curator.stages.base import ProcessingStage
from curator.tasks import FileGroupTask, Task, stable_id

__all__ = ["DeduplicationWorkflow", "DeduplicationResult", "RemoveDuplicatesStage",
           "output_names", "read_id_table", "done", "input_fingerprint", "group_size_counts",
           "write_by_file", "by_file_ids", "ID_BASE_KEY", "count_rows", "task_ids", "id_columns",
           "has_column"]

log = logging.getLogger(__name__)

#: task metadata of a file task with ``assign_id``: the id of the file's first record
ID_BASE_KEY = "id_base"


def count_rows(path: str) -> int:
    """Records in a Parquet (its footer) or JSONL file (non-blank lines)."""
    fs, p = get_fs(path)
    if p.endswith(".parquet"):
        with fs.open(p, "rb") as fh:
            return pq.ParquetFile(fh).metadata.num_rows
    n = 0
    with open_input(path) as fh:
        for line in fh:
            n += bool(line.strip())
    return n


def has_column(path: str, column: str) -> bool:
    """Whether a Parquet file's schema, or a JSONL file's first record, has ``column``."""
    fs, p = get_fs(path)
    if p.endswith(".parquet"):
        with fs.open(p, "rb") as fh:
            return column in pq.read_schema(fh).names
    with open_input(path) as fh:
        for line in fh:
            if line.strip():
                try:
                    return column in json.loads(line)
                except ValueError:
                    return True  # a bad first line: the readers report it; keep id_field
    return True


def id_columns(task: Task, id_field: str) -> list[str]:
    """The id column to read for ``task`` (none when its ids are assigned, ``assign_id``)."""
    return [] if ID_BASE_KEY in task.metadata else [id_field]


def task_ids(task: Task, table: pa.Table, id_field: str, rows: Any = None) -> pa.Array:
    """The ids of ``table``'s records (``rows`` of the file when the table holds only those):
    the ``id_field`` column, or with ``assign_id`` the file's first id plus the row number."""
    base = task.metadata.get(ID_BASE_KEY)
    if base is None:
        return table.column(id_field)
    idx = np.arange(table.num_rows) if rows is None else np.asarray(rows, dtype=np.int64)
    return pa.array(int(base) + idx, pa.int64())

#: attributes of a workflow that do not change what it computes
_NOT_PARAMETERS = frozenset({"input_path", "output_path", "cache_path", "executor",
                             "perform_removal"})


@dataclass
class DeduplicationResult:
    """What a workflow run produced: where the duplicate ids (and deduplicated data) are.

    ``rejected`` counts the records (malformed lines …) each stage sent to the rejected sink;
    ``timings`` the seconds each phase took; ``group_sizes`` the duplicate groups found, by size
    (members, the kept one included) -> number of groups.
    """

    duplicates_path: str
    output_path: str | None
    num_duplicates: int
    num_removed: int | None = None
    rejected: dict[str, int] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    group_sizes: dict[int, int] = field(default_factory=dict)
    id_generator_path: str | None = None

    @property
    def metadata(self) -> dict[str, Any]:
        """NeMo Curator's result keys: ``total_time``, ``num_duplicates``, ``id_generator_path``
        (with ``assign_id``) and ``num_removed``."""
        return {"total_time": sum(self.timings.values()), "num_duplicates": self.num_duplicates,
                "id_generator_path": self.id_generator_path, "num_removed": self.num_removed}


def group_size_counts(kept_of_duplicates: Any) -> dict[int, int]:
    """Duplicate groups by size (``{size: groups}``, sizes >= 2) from the kept row (or id) each
    duplicate belongs to: what a dedup stage publishes as the
    :data:`~curator.run.stats.DEDUP_GROUP_SIZES` counter for the run reports."""
    kept = np.asarray(kept_of_duplicates)
    if not kept.size:
        return {}
    _, per_group = np.unique(kept, return_counts=True)
    sizes, groups = np.unique(per_group + 1, return_counts=True)
    return {int(s): int(g) for s, g in zip(sizes, groups, strict=True)}


def write_by_file(by_file_dir: str, ids: Any, file_index: Any, name: str) -> None:
    """Write duplicate ``ids`` into the per-input-file index under ``by_file_dir``: one
    segmented file ``{name}.arrow`` per writer whose segment ``i`` holds the ids found in input
    file ``i`` (``file_index[k]`` is the file of ``ids[k]``), so the removal of file ``i`` reads
    only those (see :class:`RemoveDuplicatesStage`) and the index has one file per writer, not
    one per writer and input file. Written before the reduce step's own output, so a resumed
    run that finds that output finds the index too."""
    write_segments(pa.table({"id": ids if isinstance(ids, (pa.Array, pa.ChunkedArray))
                             else pa.array(ids)}),
                   np.asarray(file_index, dtype=np.int64),
                   join_path(by_file_dir, f"{name}{SEGMENTS_EXT}"))


def by_file_ids(by_file_dir: str, file_index: int) -> pa.Array:
    """The duplicate ids found in input file ``file_index`` (from the index
    :func:`write_by_file` made)."""
    t = read_segment(segment_files(by_file_dir), file_index, ["id"])
    return (t.column("id").combine_chunks() if t is not None
            else pa.array([], pa.string()))


def output_names(files: Sequence[str]) -> list[str]:
    """Deterministic output file names for ``files`` (their base names; prefixed on clashes)."""
    names = [os.path.basename(f) for f in files]
    if len(set(names)) == len(names):
        return names
    return [f"{i:05d}_{n}" for i, n in enumerate(names)]


def input_fingerprint(files: Sequence[str]) -> list[list[Any]]:
    """``[path, size, modification stamp]`` of each file (the stamp is the mtime, or what the
    filesystem has instead: last-modified time, ETag …)."""
    out: list[list[Any]] = []
    for f in files:
        fs, p = get_fs(f)
        info = fs.info(p)
        stamp = next((info[k] for k in ("mtime", "LastModified", "last_modified", "updated",
                                        "ETag", "etag", "md5Hash", "created") if info.get(k)),
                     None)
        if isinstance(stamp, (int, float)) and os.path.exists(p):
            stamp = os.stat(p).st_mtime_ns  # local: nanoseconds, not a rounded float
        out.append([f, info.get("size"), str(stamp)])
    return out


def read_id_table(path: str) -> pa.Table:
    """All duplicate-id files under ``path`` as one table (empty table when there are none)."""
    try:
        files = expand_paths(path, [".parquet"])
    except FileNotFoundError:
        return pa.table({"id": pa.array([], pa.string())})
    tables = [read_table(f) for f in files]
    if not tables:
        return pa.table({"id": pa.array([], pa.string())})
    return pa.concat_tables(tables, promote_options="default")


class RemoveDuplicatesStage(ManagedOutput, ProcessingStage[FileGroupTask, FileGroupTask]):
    """Drop the rows whose id is listed in the duplicate-id files, and write what remains.

    Its output directory is a managed one in ``"overwrite"`` mode: each run first deletes the
    files earlier runs wrote there (other files stay), and keeps no resume state there (the
    workflow needs every file's count).

    Works with any partitioning of the input: rows are matched by their ``id_field`` value.
    With ``by_file_dir`` (the per-input-file index :func:`write_by_file` makes) a worker loads
    only the ids found in the file it is cleaning, not every duplicate id of the run.

    Parameters:
        duplicates_path: directory of Parquet files with an ``id`` column (ids to remove).
        output_dir: where the deduplicated files go (same names and format as the input).
        id_field: the input's id column.
        by_file_dir: the per-file index of the same duplicates (optional).
    """

    name = "RemoveDuplicates"
    output_dir_field = "output_dir"
    mode = "overwrite"
    resume_in_output_dir = False

    def __init__(self, duplicates_path: str, output_dir: str, id_field: str,
                 by_file_dir: str | None = None) -> None:
        self.duplicates_path = duplicates_path
        self.output_dir = output_dir
        self.id_field = id_field
        self.by_file_dir = by_file_dir
        self._ids: pa.Array | None = None

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        if not self.by_file_dir:
            self._ids = read_id_table(self.duplicates_path).column("id").combine_chunks()

    def ids_for(self, task: FileGroupTask) -> pa.Array:
        """The duplicate ids that can occur in ``task``'s input file."""
        if not self.by_file_dir:
            return self._ids
        return by_file_ids(self.by_file_dir, int(task.metadata["file_index"]))

    @releases_memory
    def process(self, task: FileGroupTask) -> FileGroupTask:
        src, out = task.data[0], self.output_file(task.metadata["output_name"])
        table = read_table(src, on_bad=lambda line, n, err: self.reject(
            task, "malformed JSON line", record={"line": line, "line_number": n}, error=err))
        ids, dups = task_ids(task, table, self.id_field), self.ids_for(task)
        if dups.type != ids.type and len(dups) == 0:
            dups = dups.cast(ids.type)
        keep = pc.invert(pc.is_in(ids.cast(dups.type) if ids.type != dups.type
                                  else ids, value_set=dups))
        kept = table.filter(keep)
        write_table(kept, out)
        task.metadata["removed"] = table.num_rows - kept.num_rows
        return task.derive([out])


class DeduplicationWorkflow:
    """Bookkeeping shared by the exact, fuzzy and semantic workflows.

    Parameters:
        input_path: a directory, glob or list of Parquet/JSONL files.
        output_path: where ``duplicates/`` (ids to remove) and ``deduplicated/`` go.
        cache_path: intermediate files (default: ``output_path/cache``); a re-run reuses them.
        id_field: the column that identifies a record (duplicate ids are its values).
        perform_removal: also write the input without the duplicates.
        input_filetype: ``"parquet"`` or ``"jsonl"`` (default: by extension).
        executor: any executor (default: :class:`~curator.LocalExecutor`).
        assign_id: give every record an integer id ``_curator_dedup_id`` (NeMo Curator's
            option): consecutive over the input files in sorted order, the same on every run;
            duplicates are reported by it, and ``{output_path}/{name}_id_generator.json``
            (NeMo's format) lets ``TextDuplicatesRemovalWorkflow`` find the ids again. Default
            (``None``): the ``id_field`` column when the input has one, else assigned ids (as
            NeMo, whose workflows assign them by default); ``False``: always ``id_field``.
        input_file_extensions: the file endings to read (default by ``input_filetype``).
        read_kwargs / write_kwargs: NeMo's reader and writer options: their
            ``storage_options`` are used for the input and the output paths.
        total_nparts: NeMo's name of ``num_partitions``.
        input_blocksize, identification_batchsize, cache_kwargs, rmm_pool_size,
        spill_memory_limit, use_async_memory, env_vars: NeMo's GPU-shuffle settings, accepted
            so NeMo scripts run; the CPU implementation reads one file per task and needs none.
    """

    name = "deduplication"
    #: the name of the ID generator file NeMo Curator writes with ``assign_id`` (``exact`` …)
    id_generator_prefix = "dedup"
    #: this workflow's subdirectory of ``cache_path``
    cache_subdir = "dedup"
    #: glob of the files this workflow writes in ``output_path/duplicates``
    duplicates_glob = "*.parquet"
    #: input bytes per shuffle partition when ``num_partitions`` is not given
    bytes_per_partition = 256 * 2**20
    #: hash partitions of a shuffle (workflows that shuffle take it as a parameter)
    num_partitions: int | None = None
    #: the version of the cache's file layout, part of the fingerprint: a cache written by a
    #: version with another layout is recomputed, never misread
    cache_layout = 2
    #: whether :meth:`identify` writes the per-file index (:func:`write_by_file`) that lets
    #: each removal worker load only its own file's duplicate ids
    writes_by_file = False

    __new__, __signature__ = typed_new, init_signature  # types checked as in specs

    def __init__(self, input_path: str | Sequence[str] | None = None, output_path: str = "", *,
                 cache_path: str | None = None, id_field: str | None = "id",
                 perform_removal: bool = False, input_filetype: str | None = None,
                 executor: BaseExecutor | str | None = None, assign_id: bool | None = None,
                 input_file_extensions: Sequence[str] | None = None,
                 read_kwargs: dict[str, Any] | None = None,
                 write_kwargs: dict[str, Any] | None = None, total_nparts: int | None = None,
                 input_blocksize: str | int | None = None,
                 identification_batchsize: int | None = None,
                 cache_kwargs: dict[str, Any] | None = None, rmm_pool_size: Any = None,
                 spill_memory_limit: Any = None, use_async_memory: bool | None = None,
                 env_vars: dict[str, Any] | None = None) -> None:
        cls = type(self).__name__
        if not output_path:
            raise ValueError(f"{cls}: output_path is required")
        if not input_path:
            raise ValueError(f"{cls}: input_path is required (a directory, glob or file list)")
        if input_filetype not in (None, "parquet", "jsonl"):
            raise ValueError(f"{cls}: input_filetype must be 'parquet', 'jsonl' or None, got "
                             f"{input_filetype!r}")
        if assign_id:
            id_field = CURATOR_DEDUP_ID_STR
        if not id_field:
            raise ValueError(f"{cls}: id_field is required (duplicates are reported by id), or "
                             f"assign_id=True to number the records")
        if total_nparts is not None and getattr(self, "num_partitions", None) is None:
            self.num_partitions = int(total_nparts)
        register_storage_options(input_path, (read_kwargs or {}).get("storage_options"))
        register_storage_options(output_path, (write_kwargs or {}).get("storage_options"))
        if cache_path:
            register_storage_options(cache_path, (cache_kwargs or write_kwargs or {}).get(
                "storage_options"))
        self.assign_id = bool(assign_id)
        #: ``assign_id=None``: number the records when the input has no ``id_field`` column
        self._assign_auto = assign_id is None
        self.input_file_extensions = list(input_file_extensions or []) or None
        self.input_path = input_path
        self.output_path = output_path
        self.cache_path = cache_path or join_path(output_path, "cache")
        self.id_field = id_field
        self.perform_removal = perform_removal
        self.input_filetype = input_filetype
        self.executor = executor
        self._rejected: dict[str, int] = {}
        self._timings: dict[str, float] = {}
        self._group_sizes: dict[int, int] = {}
        self._input_bytes = 0  # the input's size, noted by :meth:`fingerprint`
        self._file_sizes: list[int] = []  # each input file's size, noted by :meth:`fingerprint`

    # -- helpers --------------------------------------------------------------------------------
    @property
    def duplicates_path(self) -> str:
        return join_path(self.output_path, "duplicates")

    @property
    def by_file_dir(self) -> str:
        """The per-input-file index of the duplicate ids (see :func:`write_by_file`), kept in
        this workflow's cache (so it is keyed by the input's fingerprint like the rest)."""
        return join_path(self.cache_path, self.cache_subdir, "by_file")

    def input_files(self) -> list[str]:
        if self.input_file_extensions:
            return list_inputs(self.input_path, self.input_filetype,
                               extensions=self.input_file_extensions)
        return list_inputs(self.input_path, self.input_filetype)

    @property
    def id_generator_path(self) -> str:
        """Where ``assign_id`` writes the ids' generator state (NeMo's ``*_id_generator.json``)."""
        return join_path(self.output_path, f"{self.id_generator_prefix}_id_generator.json")

    def assign_ids(self, files: Sequence[str]) -> None:
        """With ``assign_id``: the first id of each input file (``id_base`` in its tasks), the
        files numbered consecutively in sorted order, and NeMo's generator file to find them
        again (keyed by the file's path, as NeMo's readers key a one-file task)."""
        from curator.dedup.id_generator import IdGeneratorBase

        gen = IdGeneratorBase()
        self._id_bases = [gen.register_batch([f], count_rows(f)) for f in files]
        gen.to_disk(self.id_generator_path)

    def file_tasks(self, files: Sequence[str]) -> list[FileGroupTask]:
        names = output_names(files)
        bases = getattr(self, "_id_bases", None) if self.assign_id else None
        return [FileGroupTask(task_id=stable_id(self.name, f), dataset_name=self.name, data=[f],
                              metadata={"file_index": i, "output_name": names[i],
                                        **({ID_BASE_KEY: bases[i]} if bases else {})})
                for i, f in enumerate(files)]

    def partition_tasks(self, n: int) -> list[Task]:
        return [Task(task_id=f"partition_{p:05d}", dataset_name=self.name, data=p,
                     metadata={"partition_index": p}) for p in range(n)]

    def run_stage(self, stage: ProcessingStage, tasks: list[Task]) -> list[Task]:
        """Run one phase (a one-stage pipeline) on the executor; collect rejected counts."""
        start = time.perf_counter()
        if not tasks:
            return []
        result = Pipeline(f"{self.name}:{stage.name}", stages=[stage]).run(
            self.executor, initial_tasks=tasks, summary=False, raise_on_failure=False)
        for reason, count in result.rejected.counts.items():
            self._rejected[reason] = self._rejected.get(reason, 0) + count
        for s in result.stats.stages:
            self.note_group_sizes(s.counters.get(DEDUP_GROUP_SIZES, {}))
        self._timings[stage.name] = self._timings.get(stage.name, 0.0) + (
            time.perf_counter() - start)
        failed = [r for r in result.rejected.records if r.kind == "task"]
        if failed:
            raise RuntimeError(f"{self.name}: stage {stage.name} failed on {len(failed)} task(s); "
                               f"first error: {failed[0].error}")
        return list(result)

    def note_group_sizes(self, sizes: dict[Any, int]) -> None:
        """Add duplicate groups by size (``{size: groups}``) to the result's ``group_sizes``."""
        for size, n in sizes.items():
            self._group_sizes[int(size)] = self._group_sizes.get(int(size), 0) + int(n)

    def shuffle_partitions(self, files: Sequence[str]) -> int:
        """Hash partitions of a shuffle: ``num_partitions`` when given, else one per input file
        (at most twice this machine's cores, and 64) or one per :attr:`bytes_per_partition` of
        input, whichever is more, so a reducer's share stays bounded as the data grows.

        Every mapper writes one file per partition: more partitions than the data needs make
        ``files x partitions`` tiny files (100 files into 64 partitions took a third of a
        1M-document fuzzy run)."""
        if self.num_partitions:
            return int(self.num_partitions)
        by_size = -(-self._input_bytes // self.bytes_per_partition)
        return max(1, min(64, len(files), 2 * (os.cpu_count() or 1)), by_size)

    def write_duplicates(self, table: pa.Table, name: str) -> None:
        write_parquet(table, join_path(self.duplicates_path, name))

    def remove(self, files: Sequence[str]) -> int:
        """Write the input without the duplicate ids to ``output_path/deduplicated`` (its earlier
        contents are replaced)."""
        out_dir = join_path(self.output_path, "deduplicated")
        stage = RemoveDuplicatesStage(self.duplicates_path, out_dir, self.id_field,
                                      self.by_file_dir if self.writes_by_file else None)
        out = self.run_stage(stage, self.file_tasks(files))
        return sum(int(t.metadata.get("removed", 0)) for t in out)

    def identify(self, files: list[str]) -> int:
        """Write the duplicate ids under :attr:`duplicates_path`; return how many."""
        raise NotImplementedError(f"{type(self).__name__} must implement identify")

    def parameters(self) -> dict[str, Any]:
        """The parameters that change what this workflow computes (part of its fingerprint)."""
        return {k: v for k, v in sorted(vars(self).items()) if not k.startswith("_")
                and k not in _NOT_PARAMETERS and isinstance(v, (str, int, float, bool, type(None)))}

    def fingerprint(self, files: Sequence[str]) -> str:
        """A digest of the input files (paths, sizes, mtimes) and :meth:`parameters`; notes
        the input's total size for :meth:`shuffle_partitions` (one listing for both)."""
        listing = input_fingerprint(files)
        self._file_sizes = [int(size or 0) for _, size, _ in listing]
        doc = {"workflow": self.name, "files": listing, "parameters": self.parameters(),
               "layout": self.cache_layout}
        self._input_bytes = sum(self._file_sizes)
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()

    def prepare_outputs(self, files: Sequence[str]) -> str:
        """Key every directory this run writes by the input's fingerprint (see the module doc):
        what an earlier run wrote there for another input or other parameters is deleted.
        Returns the fingerprint."""
        fp = self.fingerprint(files)
        check_inputs_apart([(f"{self.name}.output_path", self.output_path),
                            (f"{self.name}.cache_path", self.cache_path)],
                           [(f"{self.name}.input_path", f) for f in _as_list(self.input_path)])
        owned = [(join_path(self.cache_path, self.cache_subdir), "**"),
                 (self.duplicates_path, self.duplicates_glob)]
        for directory, pattern in owned:
            fs, d = get_fs(directory)
            marker = f"{d.rstrip('/')}/.curator-{self.name}.json"
            ours = False
            try:
                with fs.open(marker, "r") as fh:
                    if json.load(fh).get("fingerprint") == fp:
                        # the same input and parameters: a resumed run reuses its work, minus
                        # the temporary files a killed run left
                        remove_temp_files(directory)
                        continue
                ours = True
            except (FileNotFoundError, ValueError, AttributeError):
                pass
            stale = ([f for f in fs.find(d) if not f.rsplit("/", 1)[-1].startswith(".curator-")]
                     if pattern == "**" else fs.glob(f"{d.rstrip('/')}/{pattern}"))
            if stale and not ours:  # no marker: not this workflow's files, never deleted
                raise OutputDirError(
                    f"{self.name}: {directory} holds {len(stale)} file(s) this workflow did not "
                    f"write (no .curator-{self.name}.json marker), e.g. {stale[0]}; nothing was "
                    f"touched. Choose another "
                    f"{'cache_path' if pattern == '**' else 'output_path'} or move them away.")
            if stale:
                log.warning("%s: %d file(s) in %s were computed from another input or other "
                            "parameters; deleting them and recomputing", self.name, len(stale),
                            directory)
                fs.rm(stale)
            with atomic_write(join_path(directory, f".curator-{self.name}.json"), "w") as fh:
                json.dump({"fingerprint": fp, "files": len(files),
                           "parameters": self.parameters()}, fh, default=str)
        return fp

    def run(self) -> DeduplicationResult:
        """Identify the duplicates (and remove them when ``perform_removal``)."""
        self._rejected, self._timings, self._group_sizes = {}, {}, {}
        files = self.input_files()
        if self._assign_auto and files and not has_column(files[0], self.id_field):
            log.info("%s: the input has no %r column: numbering the records (%s)", self.name,
                     self.id_field, CURATOR_DEDUP_ID_STR)
            self.assign_id, self.id_field = True, CURATOR_DEDUP_ID_STR
        self.prepare_outputs(files)
        if self.assign_id:
            self.assign_ids(files)
        num = self.identify(files)
        removed = self.remove(files) if self.perform_removal else None
        return DeduplicationResult(
            duplicates_path=self.duplicates_path,
            output_path=join_path(self.output_path, "deduplicated") if self.perform_removal
            else None, num_duplicates=num, num_removed=removed, rejected=dict(self._rejected),
            timings=dict(self._timings), group_sizes=dict(sorted(self._group_sizes.items())),
            id_generator_path=self.id_generator_path if self.assign_id else None)


def _as_list(paths: str | Sequence[str]) -> list[str]:
    return [paths] if isinstance(paths, str) else list(paths)


def done(path: str) -> bool:
    """Whether an atomically written output already exists (a finished unit of work)."""
    return exists(path)
