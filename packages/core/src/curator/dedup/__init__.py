"""Deduplication workflows shared by every modality: exact (content hash) and semantic
(embeddings, k-means + cosine similarity). Fuzzy (MinHash LSH) text deduplication lives in
``curator_text.dedup``.

Heavy work happens in the workflows' stages; names are imported on first use
(:func:`curator._lazy.lazy_exports`), so a reader that needs only ``CURATOR_DEDUP_ID_STR`` loads
none of the workflows.
"""

from __future__ import annotations

from curator._lazy import lazy_exports

_EXPORTS = {
    "ExactDeduplicationWorkflow": "curator.dedup.exact",
    **dict.fromkeys(["CURATOR_DEDUP_ID_STR", "create_id_generator_actor",
                     "get_id_generator_actor", "kill_id_generator_actor",
                     "write_id_generator_to_disk"], "curator.dedup.id_generator"),
    **dict.fromkeys(["KEEP_STRATEGIES", "find_semantic_duplicates"], "curator.dedup.semantic"),
    "SemanticDeduplicationStage": "curator.dedup.semantic_stage",
    "SemanticDeduplicationWorkflow": "curator.dedup.semantic_workflow",
    **dict.fromkeys(["DeduplicationResult", "DeduplicationWorkflow", "RemoveDuplicatesStage"],
                    "curator.dedup.workflow"),
}

__all__ = ["ExactDeduplicationWorkflow", "SemanticDeduplicationWorkflow", "DeduplicationWorkflow",
           "DeduplicationResult", "RemoveDuplicatesStage", "find_semantic_duplicates",
           "KEEP_STRATEGIES", "SemanticDeduplicationStage", "CURATOR_DEDUP_ID_STR",
           "create_id_generator_actor", "get_id_generator_actor", "kill_id_generator_actor",
           "write_id_generator_to_disk"]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
