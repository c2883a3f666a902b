"""Pluggable ASR models: a small base class and a registry keyed by ``model_type``."""

from curator_audio.asr.base import (
    ASRModel,
    get_asr_model,
    register_asr_model,
    registered_asr_models,
)

__all__ = ["ASRModel", "get_asr_model", "register_asr_model", "registered_asr_models"]
