"""curator-web's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim."""

from __future__ import annotations

from curator.plugins.migration import CORE_MODULES, MigrationRules
from curator_text.migration import TEXT_MODULES

__all__ = ["MIGRATION_RULES"]

_CORE = CORE_MODULES
_TEXT = TEXT_MODULES
_WEB = ("curator_web", "curator_web.download")

MIGRATION_RULES = MigrationRules(
    modules=(
        ("nemo_curator.stages.text.download", (*_WEB, *_TEXT, *_CORE)),
        ("nemo_curator.stages.download", (*_WEB, *_TEXT, *_CORE)),
        ("nemo_curator.stages.math.download", (*_WEB, *_TEXT, *_CORE)),
        ("nemo_curator", _WEB),
    ),
)
