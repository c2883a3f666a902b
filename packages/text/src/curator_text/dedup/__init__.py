"""Fuzzy (MinHash LSH) deduplication of text; exact and semantic workflows are re-exported from
``curator.dedup``."""

from __future__ import annotations

from curator.dedup import ExactDeduplicationWorkflow, SemanticDeduplicationWorkflow

from curator_text.dedup.components import connected_components, jaccard
from curator_text.dedup.fuzzy import FuzzyDeduplicationWorkflow
from curator_text.dedup.minhash import band_hashes, minhash_signatures, shingle_hashes
from curator_text.dedup.removal import TextDuplicatesRemovalWorkflow
from curator_text.dedup.semantic import TextSemanticDeduplicationWorkflow, TextSemanticDedupResult
from curator_text.dedup.stages import CandidateDocsStage, LSHBucketsStage, MinHashLSHStage

__all__ = ["FuzzyDeduplicationWorkflow", "ExactDeduplicationWorkflow",
           "SemanticDeduplicationWorkflow", "MinHashLSHStage", "LSHBucketsStage",
           "CandidateDocsStage", "minhash_signatures", "band_hashes", "shingle_hashes",
           "connected_components", "jaccard", "TextDuplicatesRemovalWorkflow",
           "TextSemanticDeduplicationWorkflow", "TextSemanticDedupResult"]
