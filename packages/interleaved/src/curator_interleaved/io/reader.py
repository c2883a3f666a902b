"""The interleaved readers users put in a pipeline: each lists its input files (file
partitioning) and reads each partition (see the reader stages for the formats)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa
from curator import CompositeStage, EmptyTask, ProcessingStage
from curator.errors import ConfigError
from curator.stages.file_partitioning import FilePartitioningStage

from curator_interleaved.io.readers.obelics import InterleavedObelicsReaderStage
from curator_interleaved.io.readers.parquet import InterleavedParquetReaderStage
from curator_interleaved.io.readers.webdataset import InterleavedWebdatasetReaderStage
from curator_interleaved.tasks import InterleavedBatch
from curator_interleaved.utils.constants import (
    DEFAULT_IMAGE_EXTENSIONS,
    DEFAULT_JSON_EXTENSIONS,
    DEFAULT_WEBDATASET_EXTENSIONS,
)

__all__ = ["InterleavedObelicsReader", "InterleavedParquetReader", "InterleavedWebdatasetReader"]


def _storage_options(read_kwargs: dict[str, Any] | None) -> dict[str, Any] | None:
    opts = (read_kwargs or {}).get("storage_options")
    return opts if isinstance(opts, dict) else None


@dataclass
class _Composite(CompositeStage[EmptyTask, InterleavedBatch]):
    file_paths: str | list[str] = ""
    files_per_partition: int | None = None
    blocksize: int | str | None = None
    read_kwargs: dict[str, Any] = field(default_factory=dict)
    modality: ClassVar[str] = "interleaved"
    kind: ClassVar[str] = "reader"

    def __post_init__(self) -> None:
        if not self.file_paths:
            raise ConfigError(f"{self.name}: file_paths is required (a file, directory, glob "
                              f"or list of them)")
        self.read_kwargs = dict(self.read_kwargs or {})
        self.storage_options = _storage_options(self.read_kwargs) or {}

    def _partitioner(self, extensions: list[str]) -> FilePartitioningStage:
        return FilePartitioningStage(file_paths=self.file_paths,
                                     files_per_partition=self.files_per_partition,
                                     blocksize=self.blocksize, file_extensions=list(extensions),
                                     storage_options=_storage_options(self.read_kwargs))

    def outputs(self) -> tuple[list[str], list[str]]:
        return ["data"], ["sample_id", "position", "modality"]


@dataclass
class InterleavedWebdatasetReader(_Composite):
    """Reads MINT-1T style WebDataset tar shards: file partitioning +
    :class:`~curator_interleaved.io.readers.webdataset.InterleavedWebdatasetReaderStage` (its
    parameters are this reader's; see there for the layout and what is rejected).

    Example::

        InterleavedWebdatasetReader(file_paths="/data/mint1t/", fields=("url",))
    """

    max_batch_bytes: int | None = None
    materialize_on_read: bool = False
    file_extensions: list[str] = field(default_factory=lambda: list(DEFAULT_WEBDATASET_EXTENSIONS))
    json_extensions: list[str] = field(default_factory=lambda: list(DEFAULT_JSON_EXTENSIONS))
    image_extensions: list[str] = field(default_factory=lambda: list(DEFAULT_IMAGE_EXTENSIONS))
    sample_id_field: str | None = None
    texts_field: str = "texts"
    images_field: str = "images"
    image_member_field: str | None = None
    fields: tuple[str, ...] | None = None
    per_image_fields: tuple[str, ...] = ()
    per_text_fields: tuple[str, ...] = ()
    name: str = "interleaved_webdataset_reader"

    def decompose(self) -> list[ProcessingStage]:
        return [self._partitioner(self.file_extensions), InterleavedWebdatasetReaderStage(
            read_kwargs=self.read_kwargs, materialize_on_read=self.materialize_on_read,
            max_batch_bytes=self.max_batch_bytes, json_extensions=tuple(self.json_extensions),
            image_extensions=tuple(self.image_extensions), sample_id_field=self.sample_id_field,
            texts_field=self.texts_field, images_field=self.images_field,
            image_member_field=self.image_member_field, fields=self.fields,
            per_image_fields=tuple(self.per_image_fields),
            per_text_fields=tuple(self.per_text_fields))]


@dataclass
class InterleavedParquetReader(_Composite):
    """Reads Parquet files in the interleaved row layout: file partitioning +
    :class:`~curator_interleaved.io.readers.parquet.InterleavedParquetReaderStage`."""

    fields: tuple[str, ...] | None = None
    max_batch_bytes: int | None = None
    schema: pa.Schema | None = None
    schema_overrides: dict[str, pa.DataType] | None = None
    file_extensions: list[str] = field(default_factory=lambda: [".parquet"])
    name: str = "interleaved_parquet_reader"

    def decompose(self) -> list[ProcessingStage]:
        return [self._partitioner(self.file_extensions), InterleavedParquetReaderStage(
            read_kwargs=self.read_kwargs, fields=self.fields,
            max_batch_bytes=self.max_batch_bytes, schema=self.schema,
            schema_overrides=self.schema_overrides)]


@dataclass
class InterleavedObelicsReader(_Composite):
    """Reads OBELICS-layout Parquet (one row per document, parallel ``texts`` / ``images``
    lists): file partitioning +
    :class:`~curator_interleaved.io.readers.obelics.InterleavedObelicsReaderStage`."""

    texts_field: str = "texts"
    images_field: str = "images"
    metadata_field: str = "metadata"
    general_metadata_field: str = "general_metadata"
    sample_id_field: str | None = None
    fields: tuple[str, ...] | None = None
    max_batch_bytes: int | None = None
    file_extensions: list[str] = field(default_factory=lambda: [".parquet"])
    name: str = "interleaved_obelics_reader"

    def decompose(self) -> list[ProcessingStage]:
        return [self._partitioner(self.file_extensions), InterleavedObelicsReaderStage(
            read_kwargs=self.read_kwargs, texts_field=self.texts_field,
            images_field=self.images_field, metadata_field=self.metadata_field,
            general_metadata_field=self.general_metadata_field,
            sample_id_field=self.sample_id_field, fields=self.fields,
            max_batch_bytes=self.max_batch_bytes)]
