"""Pluggable ASR models: a small base class and a registry keyed by ``model_type``."""

from curator_audio.asr.base import (
    ASRModel,
    get_asr_model,
    register_asr_model,
    registered_asr_models,
)
from curator_audio.asr.ct2_whisper import (
    WHISPER_BASE_CT2_WHEELS,
    CTranslate2WhisperModel,
    assemble_model_from_wheels,
    is_ct2_whisper_dir,
    whisper_base_ct2_dir,
)

__all__ = ["ASRModel", "get_asr_model", "register_asr_model", "registered_asr_models",
           "CTranslate2WhisperModel", "is_ct2_whisper_dir", "whisper_base_ct2_dir",
           "assemble_model_from_wheels", "WHISPER_BASE_CT2_WHEELS"]
