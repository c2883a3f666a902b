"""curator-audio's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim."""

from __future__ import annotations

from curator.plugins.migration import MigrationRules

__all__ = ["MIGRATION_RULES"]

_CORE = ("curator", "curator.stages", "curator.dedup", "curator.utils", "curator.tasks")

MIGRATION_RULES = MigrationRules(
    modules=(
        ("nemo_curator.stages.audio", ("curator_audio", "curator_audio.asr", *_CORE)),
        ("nemo_curator.tasks", ("curator_audio",)),
        ("nemo_curator.utils", ("curator_audio",)),
    ),
)
