"""curator-image's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim."""

from __future__ import annotations

from curator.plugins.migration import CORE_MODULES, MigrationRules

__all__ = ["MIGRATION_RULES"]

_CORE = CORE_MODULES

MIGRATION_RULES = MigrationRules(
    modules=(
        ("nemo_curator.stages.image", ("curator_image", "curator_image.models", *_CORE)),
        ("nemo_curator.tasks", ("curator_image",)),
        ("nemo_curator.utils", ("curator_image",)),
    ),
)
