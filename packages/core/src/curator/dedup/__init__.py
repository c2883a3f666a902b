"""Deduplication workflows shared by every modality: exact (content hash) and semantic
(embeddings, k-means + cosine similarity). Fuzzy (MinHash LSH) text deduplication lives in
``curator_text.dedup``.

Heavy work happens in the workflows' stages; importing this package loads only NumPy/PyArrow.
"""

from __future__ import annotations

from curator.dedup.exact import ExactDeduplicationWorkflow
from curator.dedup.id_generator import (
    CURATOR_DEDUP_ID_STR,
    create_id_generator_actor,
    get_id_generator_actor,
    kill_id_generator_actor,
    write_id_generator_to_disk,
)
from curator.dedup.semantic import KEEP_STRATEGIES, find_semantic_duplicates
from curator.dedup.semantic_stage import SemanticDeduplicationStage
from curator.dedup.semantic_workflow import SemanticDeduplicationWorkflow
from curator.dedup.workflow import DeduplicationResult, DeduplicationWorkflow, RemoveDuplicatesStage

__all__ = ["ExactDeduplicationWorkflow", "SemanticDeduplicationWorkflow", "DeduplicationWorkflow",
           "DeduplicationResult", "RemoveDuplicatesStage", "find_semantic_duplicates",
           "KEEP_STRATEGIES", "SemanticDeduplicationStage", "CURATOR_DEDUP_ID_STR",
           "create_id_generator_actor", "get_id_generator_actor", "kill_id_generator_actor",
           "write_id_generator_to_disk"]
