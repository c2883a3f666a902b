"""Synthetic-data stages (NeMo Curator's ``nemo_curator.stages.synthetic``): the Nemotron-CC
stages and :class:`QAMultilingualSyntheticStage`."""

from curator_llm.synthetic.nemotron_cc import (
    BaseSyntheticStage,
    DistillStage,
    DiverseQAPostProcessingStage,
    DiverseQAStage,
    ExtractKnowledgeStage,
    KnowledgeListPostProcessingStage,
    KnowledgeListStage,
    WikipediaParaphrasingStage,
)
from curator_llm.synthetic.qa_multilingual_synthetic import QAMultilingualSyntheticStage

__all__ = [
    "BaseSyntheticStage",
    "WikipediaParaphrasingStage",
    "DiverseQAStage",
    "DiverseQAPostProcessingStage",
    "DistillStage",
    "ExtractKnowledgeStage",
    "KnowledgeListStage",
    "KnowledgeListPostProcessingStage",
    "QAMultilingualSyntheticStage",
]
