"""The curator-text plugin: registers its stages through Curator's hooks. Imports here are
cheap (pyarrow, numpy); fastText and ftfy load inside setup()."""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl
from curator.plugins.migration import MigrationRules

__all__ = ["curator_migrate_rules", "curator_register_readers", "curator_register_writers",
           "curator_register_filters",
           "curator_register_modifiers",
           "curator_register_stages", "curator_register_commands",
           "curator_register_deduplicators", "curator_register_embedders",
           "curator_register_classifiers"]


@hookimpl
def curator_register_readers(register: Register) -> None:
    from curator_text.io import JsonlReader, LanceReader, ParquetReader

    register(JsonlReader, modality="text")
    register(ParquetReader, modality="text")
    register(LanceReader, modality="text")  # pylance loads when it reads (curator-text[lance])


@hookimpl
def curator_register_writers(register: Register) -> None:
    from curator_text.io import JsonlWriter, LanceWriter, ParquetWriter

    register(JsonlWriter, modality="text")
    register(ParquetWriter, modality="text")
    register(LanceWriter, modality="text")
    from curator_text.tokenization import MegatronTokenizerWriter

    register(MegatronTokenizerWriter, modality="text")


@hookimpl
def curator_register_filters(register: Register) -> None:
    from curator_text import filters as F

    for cls in (F.ScoreFilter, F.Score, F.Filter, *F.HEURISTIC_FILTERS, *F.MODEL_FILTERS,
                *F.FINEWEB_FILTERS):
        register(cls, modality="text")
    from curator_text.decontamination import TaskDecontamination

    register(TaskDecontamination, modality="text")


@hookimpl
def curator_register_modifiers(register: Register) -> None:
    from curator_text.modifiers import MODIFIERS, Modify

    for cls in (Modify, *MODIFIERS):
        register(cls, modality="text")
    from curator_text.pii import PiiModifier, PiiRedactionStage

    register(PiiModifier, modality="text")
    register(PiiRedactionStage, modality="text")


@hookimpl
def curator_register_stages(register: Register) -> None:
    from curator_text.filters import ScoreBucketer
    from curator_text.stages import AddId, DocumentJoiner, DocumentSplitter

    register(AddId, modality="text")
    register(DocumentSplitter, modality="text")
    register(DocumentJoiner, modality="text")
    register(ScoreBucketer, modality="text")
    from curator_text.decontamination import TaskNGramCounter

    register(TaskNGramCounter, modality="text")
    from curator_text.tasks import DocumentBatch

    register(DocumentBatch, modality="text", kind="task")  # stored as Parquet
    # FilePartitioningStage is core's: curator.builtin_plugin registers it.


@hookimpl
def curator_register_commands(register) -> None:
    from curator_text import analyze

    register("analyze", analyze.add_arguments, analyze.run,
             help="score text with filters (nothing dropped) and print score distributions")


@hookimpl
def curator_register_deduplicators(register: Register) -> None:
    from curator_text.dedup import (
        CandidateDocsStage,
        FuzzyDeduplicationWorkflow,
        LSHBucketsStage,
        MinHashLSHStage,
        TextSemanticDeduplicationWorkflow,
    )

    for cls in (FuzzyDeduplicationWorkflow, MinHashLSHStage, LSHBucketsStage, CandidateDocsStage,
                TextSemanticDeduplicationWorkflow):
        register(cls, modality="text")


@hookimpl
def curator_register_embedders(register: Register) -> None:
    from curator_text.embedders import (
        EmbeddingCreatorStage,
        EmbeddingModelStage,
        SentenceTransformerEmbeddingModelStage,
    )

    for cls in (EmbeddingCreatorStage, EmbeddingModelStage,
                SentenceTransformerEmbeddingModelStage):
        register(cls, modality="text", kind="embedder")


@hookimpl
def curator_register_classifiers(register: Register) -> None:
    from curator_text.classifiers import CLASSIFIERS
    from curator_text.models import TokenizerStage

    for cls in CLASSIFIERS:
        register(cls, modality="text")
    register(TokenizerStage, modality="text")  # its class kind: stage


@hookimpl
def curator_migrate_rules() -> MigrationRules:
    from curator_text.migration import MIGRATION_RULES

    return MIGRATION_RULES
