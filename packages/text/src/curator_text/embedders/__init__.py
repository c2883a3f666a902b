"""Text embedding stages (transformers models loaded from a local directory)."""

from __future__ import annotations

from curator_text.embedders.embedding import EmbeddingCreatorStage

__all__ = ["EmbeddingCreatorStage"]
