"""Text embedding stages (transformers / sentence-transformers models from a local directory):
NeMo Curator's ``EmbeddingCreatorStage``, ``EmbeddingModelStage`` and
``SentenceTransformerEmbeddingModelStage``."""

from __future__ import annotations

from curator_text.embedders.embedding import (
    POOLINGS,
    EmbeddingCreatorStage,
    EmbeddingModelStage,
    SentenceTransformerEmbeddingModelStage,
    SentenceTransformerLayout,
    pool_embeddings,
    read_sentence_transformer_layout,
)

__all__ = ["EmbeddingCreatorStage", "EmbeddingModelStage",
           "SentenceTransformerEmbeddingModelStage", "SentenceTransformerLayout",
           "read_sentence_transformer_layout", "pool_embeddings", "POOLINGS"]
