"""Test helpers: synthetic audio and a tiny random-weight wav2vec2 CTC model."""

from __future__ import annotations

import json
import os

import numpy as np

__all__ = ["tone", "noise", "silence", "speech_like", "write_audio", "write_corrupt_files",
           "make_tiny_wav2vec2_model", "TINY_LABELS"]

TINY_LABELS = ["<blank>", "|", *"abcdefghijklmnopqrstuvwxyz", "'"]


def tone(freq: float = 440.0, seconds: float = 1.0, sr: int = 16000, amp: float = 0.5) -> np.ndarray:
    """A sine tone (float32)."""
    t = np.arange(int(seconds * sr)) / sr
    return (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def noise(seconds: float = 1.0, sr: int = 16000, amp: float = 0.1, seed: int = 0) -> np.ndarray:
    """Uniform white noise in [-amp, amp] (seeded)."""
    return np.random.default_rng(seed).uniform(-amp, amp, int(seconds * sr)).astype(np.float32)


def silence(seconds: float = 1.0, sr: int = 16000) -> np.ndarray:
    """Digital silence."""
    return np.zeros(int(seconds * sr), dtype=np.float32)


def speech_like(seconds: float = 1.0, sr: int = 16000, syllable_hz: float = 4.0,
                seed: int = 0) -> np.ndarray:
    """A harmonic 'voice' (120 Hz + formant-ish partials) amplitude-modulated at syllable rate."""
    t = np.arange(int(seconds * sr)) / sr
    voice = sum(np.sin(2 * np.pi * f * t) / k for k, f in enumerate((120, 240, 700, 1200), 1))
    envelope = np.clip(np.sin(2 * np.pi * syllable_hz * t), 0, None)
    rng = np.random.default_rng(seed)
    out = 0.3 * voice * envelope / 2.1 + rng.normal(0, 0.002, len(t))
    return out.astype(np.float32)


def write_audio(path: str, wave: np.ndarray, sr: int = 16000) -> str:
    """Write ``wave`` with soundfile (format from the suffix: .wav .flac .ogg .mp3)."""
    import soundfile as sf

    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    sf.write(path, wave, sr)
    return path


def write_corrupt_files(folder: str, sr: int = 16000) -> dict[str, str]:
    """Write an empty file, a truncated WAV, a truncated FLAC and a non-audio file; returns
    their paths by kind."""
    os.makedirs(folder, exist_ok=True)
    out = {k: os.path.join(folder, n) for k, n in
           (("empty", "empty.wav"), ("truncated_wav", "truncated.wav"),
            ("truncated_flac", "truncated.flac"), ("garbage", "garbage.wav"))}
    open(out["empty"], "wb").close()
    for kind, ext in (("truncated_wav", "wav"), ("truncated_flac", "flac")):
        full = write_audio(os.path.join(folder, f"_full.{ext}"), noise(1.0, sr), sr)
        with open(full, "rb") as fh:
            data = fh.read()
        os.remove(full)
        with open(out[kind], "wb") as fh:
            fh.write(data[: len(data) // 2])
    with open(out["garbage"], "wb") as fh:
        fh.write(b"this is not audio at all" * 20)
    return out


def make_tiny_wav2vec2_model(path: str, labels: list[str] | None = None, seed: int = 0,
                             sample_rate: int = 16000) -> str:
    """Build a tiny random-weight ``torchaudio.models.wav2vec2_model`` CTC model and save
    ``config.json``, ``model.pt`` (state_dict) and ``labels.json`` under ``path``; returns
    ``path``. Loaded by ``ASRStage(model_dir=path)`` with the same code users run."""
    import torch
    from torchaudio.models import wav2vec2_model

    from curator_audio.asr.wav2vec2 import CONFIG_FILE, LABELS_FILE, WEIGHTS_FILE

    labels = list(labels or TINY_LABELS)
    config = {
        "extractor_mode": "layer_norm",
        # wav2vec2's own 7-layer extractor shape (320x downsampling, 20 ms frames), 16 channels
        "extractor_conv_layer_config": [[16, 10, 5]] + [[16, 3, 2]] * 4 + [[16, 2, 2]] * 2,
        "extractor_conv_bias": False,
        "encoder_embed_dim": 32, "encoder_projection_dropout": 0.0,
        "encoder_pos_conv_kernel": 8, "encoder_pos_conv_groups": 4,
        "encoder_num_layers": 2, "encoder_num_heads": 2, "encoder_attention_dropout": 0.0,
        "encoder_ff_interm_features": 64, "encoder_ff_interm_dropout": 0.0,
        "encoder_dropout": 0.0, "encoder_layer_norm_first": True, "encoder_layer_drop": 0.0,
        "aux_num_out": len(labels),
    }
    torch.manual_seed(seed)
    model = wav2vec2_model(**{**config, "extractor_conv_layer_config":
                              [tuple(c) for c in config["extractor_conv_layer_config"]]})
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, CONFIG_FILE), "w") as fh:
        json.dump({**config, "sample_rate": sample_rate, "blank_id": 0, "word_delimiter": "|",
                   "normalize_waveform": True}, fh, indent=1)
    with open(os.path.join(path, LABELS_FILE), "w") as fh:
        json.dump(labels, fh)
    torch.save(model.state_dict(), os.path.join(path, WEIGHTS_FILE))
    return path
