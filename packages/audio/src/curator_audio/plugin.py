"""The curator-audio plugin: registers its stages through Curator's single ``curator_register``
hook (each stage's kind comes from its class).

Importing this module is cheap: stage modules are imported inside the hook, and those import
soundfile / torch / torchaudio only when a stage runs.
"""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl
from curator.plugins.migration import MigrationRules

__all__ = ["curator_migrate_rules", "curator_register"]


@hookimpl
def curator_register(register: Register) -> None:
    import importlib

    from curator_audio import STAGES
    from curator_audio.tasks import AudioBatch

    for module, names in STAGES.items():
        stages = importlib.import_module(module)
        for name in names:
            register(getattr(stages, name), modality="audio")
    register(AudioBatch, modality="audio", kind="task")  # stored as its waveforms + JSON


@hookimpl
def curator_migrate_rules() -> MigrationRules:
    from curator_audio.migration import MIGRATION_RULES

    return MIGRATION_RULES
