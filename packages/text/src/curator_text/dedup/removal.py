"""TextDuplicatesRemovalWorkflow: writes a text dataset without the documents whose ids a
deduplication workflow reported (NeMo Curator's name and parameters)."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc
from curator import FileGroupTask, Pipeline, ProcessingStage
from curator.dedup.id_generator import CURATOR_DEDUP_ID_STR, IdGeneratorBase
from curator.dedup.io import list_inputs, read_table, write_table
from curator.dedup.workflow import output_names, read_id_table
from curator.errors import ConfigError
from curator.io import get_fs, register_storage_options
from curator.output_dir import ManagedOutput, check_mode
from curator.params import typed_init
from curator.tasks import stable_id

__all__ = ["TextDuplicatesRemovalWorkflow", "TextDuplicatesRemovalStage", "RemovalResult"]

log = logging.getLogger(__name__)

#: NeMo Curator's directories of duplicate ids and Curator's one (``output_path/duplicates``)
_NEMO_DUPLICATE_DIRS = ("ExactDuplicateIds", "FuzzyDuplicateIds")


def _workflow_id_field(ids_path: str) -> str | None:
    """The ``id_field`` a Curator deduplication workflow reported the duplicates in
    ``ids_path`` by (from the marker it leaves there), or None."""
    fs, p = get_fs(ids_path)
    try:
        markers = fs.glob(f"{p.rstrip('/')}/.curator-*.json")
    except FileNotFoundError:
        return None
    for marker in markers:
        with fs.open(marker, "r") as fh:
            params = json.load(fh).get("parameters") or {}
        if params.get("id_field"):
            return str(params["id_field"])
    return None


@dataclass
class RemovalResult:
    """What a removal run wrote: ``metadata`` has NeMo's keys (``total_time``,
    ``num_duplicates_removed``)."""

    output_path: str
    num_duplicates_removed: int
    output_files: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)


class TextDuplicatesRemovalStage(ManagedOutput, ProcessingStage[FileGroupTask, FileGroupTask]):
    """Reads one input file, drops the records whose id is among the duplicates, writes the
    rest to ``output_dir`` under the file's name (Parquet or JSONL by ``output_filetype``)."""

    name = "TextDuplicatesRemovalStage"
    # a managed output folder (save modes, manifest, refused inside input_paths); the workflow
    # counts every file's removals, so no partial (resumed) state is kept there
    output_dir_field = "output_dir"
    resume_in_output_dir = False
    mode = "ignore"
    input_paths: str | list[str] | None = None

    def __init__(self, ids_to_remove_path: str, output_dir: str, id_field: str,
                 duplicate_id_field: str, output_filetype: str, fields: list[str] | None,
                 drop_id_field: bool, id_ranges: dict[str, tuple[int, int]] | None) -> None:
        self.ids_to_remove_path, self.output_dir = ids_to_remove_path, output_dir
        self.id_field, self.duplicate_id_field = id_field, duplicate_id_field
        self.output_filetype, self.fields, self.drop_id_field = output_filetype, fields, drop_id_field
        self.id_ranges = id_ranges
        self._dups: pa.Array | None = None

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        table = read_id_table(self.ids_to_remove_path)
        col = (self.duplicate_id_field if self.duplicate_id_field in table.column_names
               else "id")  # Curator's duplicate files name the column "id"
        if col not in table.column_names:
            raise KeyError(f"{self.name}: no {self.duplicate_id_field!r} column in "
                           f"{self.ids_to_remove_path} (columns {table.column_names})")
        self._dups = table.column(col).combine_chunks()

    def process(self, task: FileGroupTask) -> FileGroupTask:
        if self._dups is None:
            self.setup()
        src = task.data[0]
        table = read_table(src, on_bad=lambda line, n, err: self.reject(
            task, "malformed JSON line", record={"line": line, "line_number": n}, error=err))
        if self.id_ranges is not None and self.id_field not in table.column_names:
            key = IdGeneratorBase.hash_files([src])
            if key not in self.id_ranges:
                raise KeyError(f"{self.name}: {src} has no ids in the ID generator file: give "
                               f"the input_path the deduplication workflow read")
            first = self.id_ranges[key][0]
            table = table.append_column(self.id_field, pa.array(
                range(first, first + table.num_rows), pa.int64()))
        ids, dups = table.column(self.id_field), self._dups
        if dups.type != ids.type:
            dups = dups.cast(ids.type) if len(dups) else pa.array([], ids.type)
        kept = table.filter(pc.invert(pc.is_in(ids, value_set=dups)))
        if self.fields:
            kept = kept.select([c for c in self.fields if c in kept.column_names])
        if self.drop_id_field and self.id_field in kept.column_names:
            kept = kept.drop_columns([self.id_field])
        name = task.metadata["output_name"]
        stem = name.split(".", 1)[0]
        out = self.output_file(f"{stem}.{self.output_filetype}")
        write_table(kept, out)
        task.metadata["num_removed"] = table.num_rows - kept.num_rows
        return task.derive([out])


@typed_init  # constructor parameters convert and check as a spec's values do
@dataclass
class TextDuplicatesRemovalWorkflow:
    """Removes the duplicates a deduplication workflow found from the input files.

    Parameters (NeMo Curator's):
        input_path: the dataset the deduplication workflow read (same path).
        ids_to_remove_path: the directory of duplicate ids (Curator's ``output_path/duplicates``;
            NeMo's ``output_path/ExactDuplicateIds`` / ``FuzzyDuplicateIds`` are read from
            Curator's ``duplicates`` beside them).
        output_path: where the kept records go, one file per input file.
        input_filetype, output_filetype: ``"parquet"`` or ``"jsonl"``.
        id_field: the records' id column (``_curator_dedup_id``: ids numbered by ``assign_id``,
            found again from ``id_generator_path``).
        duplicate_id_field: the id column of the duplicate files (Curator writes ``id``).
        id_generator_path: the ``*_id_generator.json`` the deduplication workflow wrote.
        input_fields / output_fields: columns to keep; drop_id_field: leave the id column out.
        input_kwargs / output_kwargs: their ``storage_options`` are used for the paths.
        input_file_extensions: endings to read (default by ``input_filetype``).
        output_mode: the save mode of ``output_path`` (``"ignore"`` by default, see
            :mod:`curator.output_dir`); an ``output_path`` that is, contains or is inside
            ``input_path`` is refused before anything is touched.
        Other NeMo parameters (``input_blocksize``, ``input_files_per_partition``,
        ``input_task_limit`` …) are accepted; each file is one task here.
    """

    input_path: str | list[str] | None
    ids_to_remove_path: str
    output_path: str
    input_filetype: Literal["parquet", "jsonl"] = "parquet"
    input_fields: list[str] | None = None
    id_field: str | None = CURATOR_DEDUP_ID_STR
    input_files_per_partition: int | None = None
    input_blocksize: str | None = None
    input_file_extensions: list[str] | None = None
    input_task_limit: int | None = None
    input_kwargs: dict[str, Any] | None = None
    duplicate_id_field: str = "id"
    duplicate_id_read_kwargs: dict[str, Any] | None = None
    id_generator_path: str | None = None
    id_generator_storage_options: dict[str, Any] | None = None
    output_file_extension: str | None = None
    output_filetype: Literal["parquet", "jsonl"] = "parquet"
    output_kwargs: dict[str, Any] | None = None
    output_fields: list[str] | None = None
    output_mode: str | None = None
    drop_id_field: bool = False

    def __post_init__(self) -> None:
        for name in ("input_filetype", "output_filetype"):
            if getattr(self, name) not in ("parquet", "jsonl"):
                raise ConfigError(f"TextDuplicatesRemovalWorkflow: {name} must be 'parquet' or "
                                  f"'jsonl', got {getattr(self, name)!r}")
        if not self.id_field:
            raise ConfigError("TextDuplicatesRemovalWorkflow: id_field is required")
        if self.drop_id_field and self.output_fields and self.id_field in self.output_fields:
            raise ConfigError(f"TextDuplicatesRemovalWorkflow: cannot drop id_field "
                              f"{self.id_field!r} when output_fields includes it")
        register_storage_options(self.input_path or [], (self.input_kwargs or {}).get(
            "storage_options"))
        register_storage_options(self.output_path, (self.output_kwargs or {}).get(
            "storage_options"))
        register_storage_options(self.ids_to_remove_path, (self.duplicate_id_read_kwargs or {}
                                                           ).get("storage_options"))

    def _ids_path(self) -> str:
        fs, p = get_fs(self.ids_to_remove_path)
        base = p.rstrip("/").rsplit("/", 1)
        if not fs.exists(p) and len(base) == 2 and base[1] in _NEMO_DUPLICATE_DIRS:
            return self.ids_to_remove_path.rstrip("/").rsplit("/", 1)[0] + "/duplicates"
        return self.ids_to_remove_path

    def run(self, executor: Any = None, initial_tasks: list[FileGroupTask] | None = None
            ) -> RemovalResult:
        start = time.perf_counter()
        if initial_tasks is not None:
            files = [f for t in initial_tasks for f in t.data]
        elif self.input_path is None:
            raise ConfigError("TextDuplicatesRemovalWorkflow: input_path is required")
        else:
            files = list_inputs(self.input_path, self.input_filetype,
                                extensions=self.input_file_extensions)
        if self.input_task_limit is not None:
            files = files[: self.input_task_limit]
        ranges, id_field, ids_path = None, self.id_field, self._ids_path()
        used = _workflow_id_field(ids_path)
        if used and used != CURATOR_DEDUP_ID_STR and id_field == CURATOR_DEDUP_ID_STR:
            # the workflow reported duplicates by the input's own id column (it has one, and
            # assign_id was not set): match by that column; no generator file was written
            log.info("TextDuplicatesRemovalWorkflow: %s lists %r values: matching by that "
                     "column", ids_path, used)
            id_field = used
        elif self.id_generator_path:
            ranges = IdGeneratorBase.from_disk(self.id_generator_path,
                                               self.id_generator_storage_options).batch_registry
        names = output_names(files)
        tasks = [FileGroupTask(task_id=stable_id("text_duplicates_removal", f),
                               dataset_name="text_duplicates_removal", data=[f],
                               metadata={"file_index": i, "output_name": names[i]})
                 for i, f in enumerate(files)]
        stage = TextDuplicatesRemovalStage(
            ids_path, self.output_path, id_field, self.duplicate_id_field,
            self.output_filetype, self.output_fields, self.drop_id_field, ranges)
        stage.mode = check_mode(self.output_mode or "ignore", "TextDuplicatesRemovalWorkflow")
        stage.input_paths = self.input_path or files  # an output there is refused
        result = Pipeline("text_duplicates_removal_workflow", stages=[stage]).run(
            executor, initial_tasks=tasks, summary=False)
        removed = sum(int(t.metadata.get("num_removed", 0)) for t in result)
        total = time.perf_counter() - start
        return RemovalResult(self.output_path, removed, [p for t in result for p in t.data],
                             {"total_time": total, "num_duplicates_removed": removed})
