"""A torchaudio wav2vec2 CTC model loaded from a directory, with greedy CTC decoding.

A directory whose ``config.json`` is a transformers config (a ``Wav2Vec2ForCTC`` download) is
handed to :class:`curator_audio.asr.hf_wav2vec2.HFWav2Vec2CTCModel` instead. The torchaudio
layout:

``model_dir`` holds:

- ``config.json``: keyword arguments of ``torchaudio.models.wav2vec2_model`` (``aux_num_out`` =
  number of labels), plus optional ``sample_rate`` (16000), ``blank_id`` (0),
  ``word_delimiter`` (``"|"``) and ``normalize_waveform`` (false);
- ``model.pt``: the model's ``state_dict`` (``torch.save``);
- ``labels.json``: the CTC vocabulary, a JSON list of tokens indexed like the output.

A torchaudio bundle checkpoint alone (``model_dir`` is the ``.pth``/``.pt`` file, or a directory
with only that file) needs no config or labels: see
:mod:`curator_audio.asr.torchaudio_checkpoint`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from curator_audio.asr.base import ASRModel

__all__ = ["Wav2Vec2CTCModel", "greedy_ctc_decode", "CONFIG_FILE", "WEIGHTS_FILE", "LABELS_FILE"]

CONFIG_FILE, WEIGHTS_FILE, LABELS_FILE = "config.json", "model.pt", "labels.json"
_EXTRA_KEYS = ("sample_rate", "blank_id", "word_delimiter", "normalize_waveform")


def greedy_ctc_decode(ids: list[int], labels: list[str], blank_id: int = 0,
                      word_delimiter: str = "|") -> str:
    """Collapse repeats, drop blanks, map ids to labels; the delimiter becomes a space."""
    out, prev = [], None
    for i in ids:
        if i != prev and i != blank_id:
            out.append(labels[i])
        prev = i
    text = "".join(" " if t == word_delimiter else t for t in out)
    return " ".join(text.split())


def _read(model_dir: str, name: str, mode: str = "rt") -> Any:
    import fsspec
    from curator.io import join_path

    with fsspec.open(join_path(model_dir, name), mode) as fh:
        return json.load(fh) if mode == "rt" else fh.read()


class Wav2Vec2CTCModel(ASRModel):
    """``torchaudio.models.wav2vec2_model`` + greedy CTC decoding, batched with padding."""

    def __init__(self, model: Any, labels: list[str], device: str, config: dict[str, Any]):
        self.model, self.labels, self.device = model, labels, device
        self.sample_rate = int(config.get("sample_rate", 16000))
        self.blank_id = int(config.get("blank_id", 0))
        self.word_delimiter = str(config.get("word_delimiter", "|"))
        self.normalize_waveform = bool(config.get("normalize_waveform", False))

    @classmethod
    def load(cls, model_dir: str, device: str = "cpu") -> ASRModel:
        import io

        import torch
        from torchaudio.models import wav2vec2_model

        from curator_audio.asr.hf_wav2vec2 import HFWav2Vec2CTCModel, is_hf_directory
        from curator_audio.asr.torchaudio_checkpoint import (
            find_lone_checkpoint,
            load_torchaudio_checkpoint,
        )

        if is_hf_directory(model_dir):
            return HFWav2Vec2CTCModel.load(model_dir, device)
        checkpoint = find_lone_checkpoint(model_dir)
        if checkpoint is not None:
            model, labels, options = load_torchaudio_checkpoint(checkpoint)
            return cls(model.eval().to(device), labels, device, options)

        config = _read(model_dir, CONFIG_FILE)
        labels = _read(model_dir, LABELS_FILE)
        kwargs = {k: v for k, v in config.items() if k not in _EXTRA_KEYS}
        kwargs["extractor_conv_layer_config"] = [tuple(c) for c in
                                                 kwargs.get("extractor_conv_layer_config") or []] or None
        if kwargs.get("aux_num_out") not in (None, len(labels)):
            raise ValueError(f"{model_dir}: config aux_num_out={kwargs['aux_num_out']} but "
                             f"{LABELS_FILE} has {len(labels)} labels")
        kwargs["aux_num_out"] = len(labels)
        model = wav2vec2_model(**kwargs)
        state = torch.load(io.BytesIO(_read(model_dir, WEIGHTS_FILE, "rb")), map_location="cpu",
                           weights_only=True)
        model.load_state_dict(state)
        model.eval().to(device)
        return cls(model, labels, device, config)

    def transcribe(self, waveforms: list[np.ndarray]) -> list[str]:
        import torch

        if not waveforms:
            return []
        lengths = torch.tensor([len(w) for w in waveforms], dtype=torch.long)
        batch = torch.zeros(len(waveforms), int(lengths.max()), dtype=torch.float32)
        for i, w in enumerate(waveforms):
            x = torch.from_numpy(np.asarray(w, dtype=np.float32))
            if self.normalize_waveform:
                x = (x - x.mean()) / (x.std() + 1e-7)
            batch[i, :len(x)] = x
        with torch.inference_mode():
            emissions, out_lengths = self.model(batch.to(self.device), lengths.to(self.device))
        ids = emissions.argmax(dim=-1).cpu()
        if out_lengths is None:
            out_lengths = torch.full((len(waveforms),), ids.shape[1])
        return [greedy_ctc_decode(ids[i, :int(n)].tolist(), self.labels, self.blank_id,
                                  self.word_delimiter) for i, n in enumerate(out_lengths.cpu())]
