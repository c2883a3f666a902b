"""Tokens for training: :class:`TokenizerStage` (token-id columns) and
:class:`MegatronTokenizerWriter` (Megatron-LM ``.bin`` + ``.idx`` files)."""

from curator_text.models.tokenizer import TokenizerStage
from curator_text.tokenization.megatron import (
    DTYPE_CODES,
    INDEX_HEADER,
    MegatronTokenizerWriter,
    write_indexed_dataset,
)
from curator_text.tokenization.merge import merge_file_prefixes

__all__ = ["TokenizerStage", "MegatronTokenizerWriter", "write_indexed_dataset", "INDEX_HEADER",
           "DTYPE_CODES", "merge_file_prefixes"]
