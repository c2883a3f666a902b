"""TokenCountFilter: keeps documents by their number of tokens (NeMo Curator's names)."""

from __future__ import annotations

from typing import Any

from curator.errors import ConfigError
from curator.stages.lifecycle import ensure_setup

from curator_text.filters.base import DocumentFilter

__all__ = ["TokenCountFilter"]


class TokenCountFilter(DocumentFilter):
    """Keeps documents with ``min_tokens`` to ``max_tokens`` tokens (``tokenizer.encode(text)``,
    special tokens included as the tokenizer adds them).

    Parameters:
        tokenizer: a loaded tokenizer with ``encode`` (e.g. a transformers ``AutoTokenizer``).
        hf_model_name: instead, a local tokenizer directory or a model name already in the
            Hugging Face cache (loaded with ``local_files_only=True``; nothing is downloaded).
        hf_token: accepted for NeMo Curator compatibility; unused (nothing is downloaded).
        min_tokens, max_tokens: the kept range (inclusive).
        transformers_init_kwargs: extra ``AutoTokenizer.from_pretrained`` arguments.
    """

    def __init__(self, tokenizer: Any = None, hf_model_name: str | None = None,
                 hf_token: str | None = None, min_tokens: int = 0,
                 max_tokens: float = float("inf"),
                 transformers_init_kwargs: dict[str, Any] | None = None) -> None:
        super().__init__()
        if (tokenizer is None) == (hf_model_name is None):
            raise ConfigError("TokenCountFilter: pass exactly one of tokenizer or hf_model_name")
        kwargs = dict(transformers_init_kwargs or {})
        if "local_files_only" in kwargs:
            raise ConfigError("TokenCountFilter: transformers_init_kwargs may not set "
                              "local_files_only (tokenizers are always loaded from local files)")
        self._tokenizer, self._hf_model_name, self._kwargs = tokenizer, hf_model_name, kwargs
        self._min_tokens, self._max_tokens = min_tokens, max_tokens

    def setup(self) -> None:
        if self._tokenizer is None:
            try:
                from transformers import AutoTokenizer
            except ImportError as e:
                raise ImportError("TokenCountFilter(hf_model_name=...) needs transformers: "
                                  "install curator-text[embed], or pass tokenizer=") from e

            self._tokenizer = AutoTokenizer.from_pretrained(
                self._hf_model_name, local_files_only=True, **self._kwargs)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        if self._hf_model_name is not None:
            state["_tokenizer"] = None
        return state

    def score_document(self, text: str) -> int:
        ensure_setup(self)
        return len(self._tokenizer.encode(text))

    def keep_document(self, score: int) -> bool:
        return self._min_tokens <= score <= self._max_tokens
