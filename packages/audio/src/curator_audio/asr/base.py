"""ASRModel: the interface every ASR model implements, and the ``model_type`` registry.

A plugin adds a model by subclassing :class:`ASRModel` and registering it, typically from one
of its plugin hooks (which run when Curator loads plugins)::

    from curator_audio.asr import ASRModel, register_asr_model

    @register_asr_model("whisper")
    class WhisperModel(ASRModel):
        @classmethod
        def load(cls, model_dir, device): ...
        def transcribe(self, waveforms): ...

``ASRStage(model_type="whisper", model_dir=...)`` then uses it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np
from curator.errors import ConfigError

__all__ = ["ASRModel", "register_asr_model", "get_asr_model", "registered_asr_models"]

_MODELS: dict[str, str | type[ASRModel]] = {
    # imported on first use
    "wav2vec2": "curator_audio.asr.wav2vec2:Wav2Vec2CTCModel",  # torchaudio or HF layout
    "wav2vec2_hf": "curator_audio.asr.hf_wav2vec2:HFWav2Vec2CTCModel",
    "whisper": "curator_audio.asr.whisper:WhisperModel",  # a CTranslate2 dir: whisper_ct2
    "whisper_ct2": "curator_audio.asr.ct2_whisper:CTranslate2WhisperModel",
}


class ASRModel(ABC):
    """A speech recogniser: loaded once per worker, transcribes batches of mono waveforms."""

    sample_rate: int = 16000
    """The rate (Hz) the model expects; the stage resamples audio to it."""
    supports_timestamps: bool = False
    """Whether :meth:`transcribe_with_timestamps` is implemented."""

    @classmethod
    @abstractmethod
    def load(cls, model_dir: str, device: str, **options: Any) -> ASRModel:
        """Load the model from ``model_dir`` onto ``device`` (``"cpu"`` or ``"cuda"``);
        ``options`` are the stage's ``model_kwargs`` (a model without options takes none)."""

    @abstractmethod
    def transcribe(self, waveforms: list[np.ndarray]) -> list[str]:
        """One transcript per float32 waveform (at :attr:`sample_rate`), in order."""

    def transcribe_with_timestamps(self, waveforms: list[np.ndarray]
                                   ) -> list[tuple[str, list[dict[str, Any]]]]:
        """Per waveform: the transcript and its segments ``{"start", "end", "text"}`` (seconds);
        only models with :attr:`supports_timestamps`."""
        raise ConfigError(f"{type(self).__name__} does not produce timestamps")


def register_asr_model(name: str, cls: type[ASRModel] | None = None
                       ) -> Callable[[type[ASRModel]], type[ASRModel]] | type[ASRModel]:
    """Register ``cls`` as ``model_type`` ``name`` (usable as a decorator). Re-registering the
    same class is allowed; a different class under a taken name is an error."""
    def add(klass: type[ASRModel]) -> type[ASRModel]:
        if not (isinstance(klass, type) and issubclass(klass, ASRModel)):
            raise TypeError(f"register_asr_model({name!r}): {klass!r} is not an ASRModel subclass")
        old = _MODELS.get(name)
        if old is not None and old is not klass and not isinstance(old, str):
            raise ConfigError(f"ASR model_type {name!r} is already registered by {old!r}")
        _MODELS[name] = klass
        return klass
    return add(cls) if cls is not None else add


def registered_asr_models() -> list[str]:
    """The known ``model_type`` names."""
    return sorted(_MODELS)


def get_asr_model(name: str) -> type[ASRModel]:
    """The class registered as ``name``; a clear error listing the known names otherwise."""
    if name not in _MODELS:
        raise ConfigError(f"unknown ASR model_type {name!r}; known: {registered_asr_models()}. "
                          f"A plugin adds one with curator_audio.asr.register_asr_model(name, cls)")
    entry = _MODELS[name]
    if isinstance(entry, str):
        import importlib

        module, attr = entry.split(":")
        entry = _MODELS[name] = getattr(importlib.import_module(module), attr)
    return entry
