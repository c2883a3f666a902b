"""The curator-llm plugin: registers its stages through Curator's ``curator_register`` hook and
its NeMo Curator mappings through ``curator_migrate_rules``.

Importing this module is cheap: stage modules (and ``openai``) are imported inside the hooks.
"""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl
from curator.plugins.migration import MigrationRules

__all__ = ["curator_register", "curator_migrate_rules"]


@hookimpl
def curator_register(register: Register) -> None:
    # the synthetic-data stages (curator_llm.stages / curator_llm.synthetic) register here
    for cls in _stage_classes():
        register(cls, modality="text")


def _stage_classes() -> list[type]:
    import importlib

    out: list[type] = []
    # each module lists its public stages in __all__; a module not written yet is skipped
    for name in ("curator_llm.stages", "curator_llm.synthetic"):
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        from curator.stages.base import ProcessingStage

        for attr in getattr(mod, "__all__", ()):
            obj = getattr(mod, attr)
            if isinstance(obj, type) and issubclass(obj, ProcessingStage):
                out.append(obj)
    return out


@hookimpl
def curator_migrate_rules() -> MigrationRules:
    from curator_llm.migration import MIGRATION_RULES

    return MIGRATION_RULES
