"""Benchmark decontamination: remove the parts of documents that share long n-grams with local
evaluation sets."""

from curator_text.decontamination.task import NGramIndex, TaskDecontamination, get_words

__all__ = ["TaskDecontamination", "NGramIndex", "get_words"]
