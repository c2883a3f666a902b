"""curator-text's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim."""

from __future__ import annotations

from curator.plugins.migration import CORE_MODULES, MigrationRules

__all__ = ["MIGRATION_RULES", "TEXT_MODULES"]

_CORE = CORE_MODULES
TEXT_MODULES = ("curator_text", "curator_text.dedup", "curator_text.embedders", "curator_text.models",
         "curator_text.classifiers", "curator_text.filters", "curator_text.modifiers",
         "curator_text.io", "curator_text.tokenization", "curator_text.decontamination",
         "curator_text.pii")
_TEXT = TEXT_MODULES
_WEB = ("curator_web", "curator_web.download")

MIGRATION_RULES = MigrationRules(
    modules=(
        ("nemo_curator.stages.text.deduplication", ("curator_text.dedup", "curator.dedup", *_TEXT,
                                                    *_CORE)),
        ("nemo_curator.stages.deduplication.fuzzy", ("curator_text.dedup", "curator.dedup",
                                                     *_TEXT, *_CORE)),
        ("nemo_curator.stages.deduplication", ("curator_text.dedup", *_TEXT)),
        ("nemo_curator.stages.text", (*_TEXT, *_WEB, *_CORE)),
        ("nemo_curator.stages.math", (*_TEXT, *_WEB, *_CORE)),
        ("nemo_curator.stages", _TEXT),
        ("nemo_curator.tasks", ("curator_text",)),
        ("nemo_curator.utils", ("curator_text",)),
        ("nemo_curator", _TEXT),
    ),
    shim={
        "nemo_curator.tasks": ("curator_text.tasks",),
        "nemo_curator.tasks.document": ("curator_text.tasks",),
        "nemo_curator.stages.text.filters": ("curator_text.filters",),
        "nemo_curator.stages.text.filters.doc_filter": ("curator_text.filters.base",),
        "nemo_curator.stages.text.filters.heuristic": ("curator_text.filters",),
        "nemo_curator.stages.text.filters.heuristic.code": ("curator_text.filters",),
        "nemo_curator.stages.text.filters.heuristic.repetition": ("curator_text.filters",),
        "nemo_curator.stages.text.filters.histogram": ("curator_text.filters.histogram",),
        "nemo_curator.stages.text.filters.token": ("curator_text.filters.token",),
        "nemo_curator.stages.text.filters.fasttext": ("curator_text.filters.fasttext",),
        "nemo_curator.stages.text.utils.constants": ("curator_text.filters.heuristic",
                                                     "curator_text.modifiers.text"),
        "nemo_curator.stages.text.modifiers": ("curator_text.modifiers",),
        "nemo_curator.stages.text.modifiers.modifier": ("curator_text.modifiers.base",),
        "nemo_curator.stages.text.modifiers.string": ("curator_text.modifiers",),
        "nemo_curator.stages.text.modifiers.unicode": ("curator_text.modifiers",),
        "nemo_curator.stages.text.modules": ("curator_text.stages",),
        "nemo_curator.stages.text.modules.add_id": ("curator_text.stages.add_id",),
        "nemo_curator.stages.text.embedders": ("curator_text.embedders",),
        "nemo_curator.stages.text.embedders.base": ("curator_text.embedders.embedding",),
        "nemo_curator.stages.text.deduplication.semantic": ("curator_text.dedup.semantic",),
    },
)
