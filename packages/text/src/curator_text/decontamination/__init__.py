"""Benchmark decontamination: remove the parts of documents that share long n-grams with local
evaluation sets."""

from curator_text.decontamination.task import (
    NGramIndex,
    TaskDecontamination,
    TaskNGramCounter,
    get_words,
    read_match_counts,
)

__all__ = ["TaskDecontamination", "TaskNGramCounter", "NGramIndex", "get_words",
           "read_match_counts"]
