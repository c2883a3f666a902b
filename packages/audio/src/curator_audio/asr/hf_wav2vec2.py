"""wav2vec2 CTC from a Hugging Face ``Wav2Vec2ForCTC`` directory, with greedy CTC decoding.

``model_dir`` is a local directory as ``save_pretrained`` / a hub download leaves it (e.g.
``facebook/wav2vec2-base-960h``): ``config.json`` (``"architectures": ["Wav2Vec2ForCTC"]``),
``model.safetensors`` (or ``pytorch_model.bin``), ``vocab.json``, ``tokenizer_config.json``,
``special_tokens_map.json`` and ``preprocessor_config.json``. Nothing is fetched from the hub.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from curator.errors import ConfigError

from curator_audio.asr.base import ASRModel

__all__ = ["HFWav2Vec2CTCModel", "is_hf_directory"]


def is_hf_directory(model_dir: str) -> bool:
    """True when ``model_dir/config.json`` is a transformers config (has ``model_type`` or
    ``architectures``), False for the torchaudio layout."""
    import json
    import os

    path = os.path.join(model_dir, "config.json")
    if "://" in model_dir or not os.path.exists(path):
        return False
    with open(path) as fh:
        config = json.load(fh)
    return "model_type" in config or "architectures" in config


class HFWav2Vec2CTCModel(ASRModel):
    """``Wav2Vec2ForCTC`` + ``Wav2Vec2Processor`` (normalisation and padding as its
    ``preprocessor_config.json`` says; the attention mask is passed when the feature extractor
    returns one, as for the layer-norm "lv60" models), decoded by the CTC tokenizer."""

    def __init__(self, model: Any, processor: Any, device: str) -> None:
        self.model, self.processor, self.device = model, processor, device
        self.sample_rate = int(processor.feature_extractor.sampling_rate)

    @classmethod
    def load(cls, model_dir: str, device: str = "cpu") -> HFWav2Vec2CTCModel:
        from transformers import Wav2Vec2ForCTC, Wav2Vec2Processor

        if "://" in model_dir:
            raise ConfigError(f"wav2vec2_hf: model_dir must be a local directory (transformers loads "
                              f"local files only), got {model_dir!r}; copy the model to each node")
        processor = Wav2Vec2Processor.from_pretrained(model_dir, local_files_only=True)
        model = Wav2Vec2ForCTC.from_pretrained(model_dir, local_files_only=True)
        return cls(model.eval().to(device), processor, device)

    def transcribe(self, waveforms: list[np.ndarray]) -> list[str]:
        import torch

        if not waveforms:
            return []
        fe = self.processor.feature_extractor
        feats = fe([np.asarray(w, dtype=np.float32) for w in waveforms],
                   sampling_rate=self.sample_rate, padding=True, return_tensors="pt")
        kwargs = {}
        if "attention_mask" in feats:
            kwargs["attention_mask"] = feats.attention_mask.to(self.device)
        with torch.inference_mode():
            logits = self.model(feats.input_values.to(self.device), **kwargs).logits
        ids = logits.argmax(dim=-1).cpu()
        lengths = self.model._get_feat_extract_output_lengths(
            torch.tensor([len(w) for w in waveforms]))
        return [self.processor.tokenizer.decode(ids[i, :int(n)], skip_special_tokens=True).strip()
                for i, n in enumerate(lengths)]
