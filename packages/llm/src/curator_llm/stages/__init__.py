"""Stages that call a served model on every record: :class:`LLMCleanupStage` (NeMo Curator's
math-pipeline cleanup) and the translation stages (segment, translate, reassemble)."""

from curator_llm.stages.cleanup import LLMCleanupStage
from curator_llm.stages.translation import (
    ReassemblyStage,
    SegmentationStage,
    SegmentTranslationStage,
    TranslationStage,
)

__all__ = ["LLMCleanupStage", "TranslationStage", "SegmentationStage",
           "SegmentTranslationStage", "ReassemblyStage"]
