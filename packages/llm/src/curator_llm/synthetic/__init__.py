"""Synthetic-data stages (NeMo Curator's ``nemo_curator.stages.synthetic``): the Nemotron-CC
stages and :class:`QAMultilingualSyntheticStage`."""

from curator_llm.synthetic import nemotron_cc
from curator_llm.synthetic.nemotron_cc import *  # noqa: F403 (its __all__)
from curator_llm.synthetic.qa_multilingual_synthetic import QAMultilingualSyntheticStage

__all__ = [*nemotron_cc.__all__, "QAMultilingualSyntheticStage"]
