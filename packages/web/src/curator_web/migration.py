"""curator-web's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim."""

from __future__ import annotations

from curator.plugins.migration import MigrationRules

__all__ = ["MIGRATION_RULES"]

_CORE = ("curator", "curator.stages", "curator.dedup", "curator.utils", "curator.tasks")
_TEXT = ("curator_text", "curator_text.dedup", "curator_text.embedders", "curator_text.models",
         "curator_text.classifiers", "curator_text.filters", "curator_text.modifiers",
         "curator_text.io", "curator_text.tokenization", "curator_text.decontamination",
         "curator_text.pii")
_WEB = ("curator_web", "curator_web.download")

MIGRATION_RULES = MigrationRules(
    modules=(
        ("nemo_curator.stages.text.download", (*_WEB, *_TEXT, *_CORE)),
        ("nemo_curator.stages.download", (*_WEB, *_TEXT, *_CORE)),
        ("nemo_curator.stages.math.download", (*_WEB, *_TEXT, *_CORE)),
        ("nemo_curator", _WEB),
    ),
)
