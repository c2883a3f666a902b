"""Helpers shared by the interleaved stages (NeMo Curator's ``stages.interleaved.utils``)."""

from __future__ import annotations

from curator_interleaved.utils.constants import (
    DEFAULT_IMAGE_EXTENSIONS,
    DEFAULT_JSON_EXTENSIONS,
    DEFAULT_WEBDATASET_EXTENSIONS,
)
from curator_interleaved.utils.image_utils import image_bytes_to_array
from curator_interleaved.utils.materialization import materialize_task_binary_content
from curator_interleaved.utils.schema import align_table, reconcile_schema
from curator_interleaved.utils.validation_utils import (
    resolve_storage_options,
    validate_and_project_source_fields,
)

__all__ = [
    "DEFAULT_IMAGE_EXTENSIONS",
    "DEFAULT_JSON_EXTENSIONS",
    "DEFAULT_WEBDATASET_EXTENSIONS",
    "align_table",
    "image_bytes_to_array",
    "materialize_task_binary_content",
    "reconcile_schema",
    "resolve_storage_options",
    "validate_and_project_source_fields",
]
