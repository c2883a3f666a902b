"""Nemotron-CC synthetic-data stages and their prompts (NeMo Curator's
``nemo_curator.stages.synthetic.nemotron_cc``)."""

from curator_llm.synthetic.nemotron_cc.base import BaseSyntheticStage
from curator_llm.synthetic.nemotron_cc.nemotron_cc import (
    DistillStage,
    DiverseQAPostProcessingStage,
    DiverseQAStage,
    ExtractKnowledgeStage,
    KnowledgeListPostProcessingStage,
    KnowledgeListStage,
    WikipediaParaphrasingStage,
)

__all__ = [
    "BaseSyntheticStage",
    "WikipediaParaphrasingStage",
    "DiverseQAStage",
    "DiverseQAPostProcessingStage",
    "DistillStage",
    "ExtractKnowledgeStage",
    "KnowledgeListStage",
    "KnowledgeListPostProcessingStage",
]
