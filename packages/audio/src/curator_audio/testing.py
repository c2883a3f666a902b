"""Test helpers: synthetic audio and tiny random-weight models saved in the layouts users download
(torchaudio wav2vec2, Hugging Face ``Wav2Vec2ForCTC`` and ``WhisperForConditionalGeneration``,
torchaudio SQUIM objective)."""

from __future__ import annotations

import json
import os

import numpy as np

__all__ = ["tone", "noise", "silence", "speech_like", "write_audio", "write_corrupt_files",
           "make_tiny_wav2vec2_model", "make_tiny_hf_wav2vec2_model", "make_tiny_whisper_model",
           "make_squim_objective_weights", "TINY_LABELS", "TINY_SQUIM_CONFIG", "HF_W2V2_VOCAB", "WHISPER_LANGUAGES",
           "espeak_available", "espeak_speech", "speech_scene", "SENTENCES",
           "make_tiny_utmos_checkout", "make_tiny_sigmos_model", "make_band_classifier"]

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


HF_W2V2_VOCAB = ["<pad>", "<s>", "</s>", "<unk>", "|", *"ETAONIHSRDLUMWCFGYPBVK'XJQZ"]
"""The token order of ``facebook/wav2vec2-base-960h``'s ``vocab.json``."""


def make_tiny_hf_wav2vec2_model(path: str, seed: int = 0, lv60: bool = True) -> str:
    """Save a tiny random-weight ``Wav2Vec2ForCTC`` under ``path`` with ``save_pretrained``:
    ``config.json``, ``model.safetensors``, ``vocab.json``, ``tokenizer_config.json``,
    ``special_tokens_map.json``, ``preprocessor_config.json`` - the files of a hub download.
    ``lv60``: the layer-norm layout that uses an attention mask (``wav2vec2-large-960h-lv60``);
    else the group-norm base layout (``wav2vec2-base-960h``)."""
    import torch
    from transformers import (
        Wav2Vec2Config,
        Wav2Vec2CTCTokenizer,
        Wav2Vec2FeatureExtractor,
        Wav2Vec2ForCTC,
    )

    os.makedirs(path, exist_ok=True)
    vocab_file = os.path.join(path, "vocab.json")
    with open(vocab_file, "w") as fh:
        json.dump({t: i for i, t in enumerate(HF_W2V2_VOCAB)}, fh)
    tokenizer = Wav2Vec2CTCTokenizer(vocab_file, unk_token="<unk>", pad_token="<pad>",
                                     word_delimiter_token="|")
    extractor = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0,
                                         do_normalize=True, return_attention_mask=lv60)
    config = Wav2Vec2Config(
        vocab_size=len(HF_W2V2_VOCAB), hidden_size=32, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=64, conv_dim=(16,) * 7,
        num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=4, pad_token_id=0,
        feat_extract_norm="layer" if lv60 else "group", do_stable_layer_norm=lv60,
        conv_bias=lv60, hidden_dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
        feat_proj_dropout=0.0, layerdrop=0.0, mask_time_prob=0.0,
        architectures=["Wav2Vec2ForCTC"])
    torch.manual_seed(seed)
    Wav2Vec2ForCTC(config).save_pretrained(path)
    extractor.save_pretrained(path)  # preprocessor_config.json, as on the hub
    tokenizer.save_pretrained(path)
    return path


WHISPER_LANGUAGES = ("en", "de", "fr")


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-to-printable-character map (the alphabet of Whisper's byte-level BPE)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1)) + \
        list(range(ord("\xae"), ord("\xff") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs], strict=True))


def make_tiny_whisper_model(path: str, seed: int = 0, timestamp_tokens: bool = True,
                            **dims: int) -> str:
    """Save a tiny random-weight ``WhisperForConditionalGeneration`` under ``path`` with
    ``save_pretrained``: ``config.json``, ``generation_config.json`` (``lang_to_id``,
    ``task_to_id``, ``no_timestamps_token_id`` as in OpenAI's checkpoints), ``model.safetensors``,
    a byte-level BPE tokenizer (``vocab.json``, ``merges.txt``, Whisper's special and timestamp
    tokens) and
    the 80-mel ``preprocessor_config.json``. Whisper's 30 s window (1500 encoder positions) is
    kept; the widths are tiny unless ``dims`` (``WhisperConfig`` sizes such as ``d_model``,
    ``encoder_layers``) say otherwise. ``timestamp_tokens=False`` leaves out the 1,501 timestamp
    tokens (random weights then cannot emit them where a trained model would not)."""
    import torch
    from transformers import (
        GenerationConfig,
        WhisperConfig,
        WhisperFeatureExtractor,
        WhisperForConditionalGeneration,
        WhisperTokenizer,
    )

    os.makedirs(path, exist_ok=True)
    vocab_file, merges_file = os.path.join(path, "vocab.json"), os.path.join(path, "merges.txt")
    with open(vocab_file, "w") as fh:
        json.dump({c: i for i, c in enumerate(_bytes_to_unicode().values())}, fh)
    with open(merges_file, "w") as fh:
        fh.write("#version: 0.2\n")
    eot = "<|endoftext|>"
    specials = ["<|startoftranscript|>", *[f"<|{lang}|>" for lang in WHISPER_LANGUAGES],
                "<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>",
                "<|nospeech|>", "<|notimestamps|>"]
    tokenizer = WhisperTokenizer(vocab_file, merges_file, unk_token=eot, bos_token=eot,
                                 eos_token=eot, pad_token=eot)
    tokenizer.add_special_tokens({"additional_special_tokens": specials})
    # OpenAI's 1,501 timestamp tokens <|0.00|> .. <|30.00|> follow <|notimestamps|> (plain
    # added tokens, as in the hub's tokenizer files)
    if timestamp_tokens:
        tokenizer.add_tokens([f"<|{i * 0.02:.2f}|>" for i in range(1501)])
    ids = dict(zip([eot, *specials], tokenizer.convert_tokens_to_ids([eot, *specials]),
                   strict=True))
    sizes = {"d_model": 16, "encoder_layers": 1, "decoder_layers": 1,
             "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 32,
             "decoder_ffn_dim": 32, "max_target_positions": 64, **dims}
    config = WhisperConfig(
        vocab_size=len(tokenizer), num_mel_bins=80, max_source_positions=1500, **sizes,
        pad_token_id=ids[eot], bos_token_id=ids[eot],
        eos_token_id=ids[eot], decoder_start_token_id=ids["<|startoftranscript|>"],
        init_std=0.5, architectures=["WhisperForConditionalGeneration"])
    torch.manual_seed(seed)
    model = WhisperForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=ids["<|startoftranscript|>"], eos_token_id=ids[eot],
        pad_token_id=ids[eot], bos_token_id=ids[eot], is_multilingual=True,
        lang_to_id={f"<|{lang}|>": ids[f"<|{lang}|>"] for lang in WHISPER_LANGUAGES},
        task_to_id={"transcribe": ids["<|transcribe|>"], "translate": ids["<|translate|>"]},
        no_timestamps_token_id=ids["<|notimestamps|>"], prev_sot_token_id=ids["<|startofprev|>"],
        max_initial_timestamp_index=50)
    model.save_pretrained(path)
    WhisperFeatureExtractor(feature_size=80).save_pretrained(path)  # preprocessor_config.json
    tokenizer.save_pretrained(path)
    return path


TINY_SQUIM_CONFIG = {"feat_dim": 16, "win_len": 64, "d_model": 16, "nhead": 2,
                     "hidden_dim": 16, "num_blocks": 1, "rnn_type": "LSTM", "chunk_size": 71}
"""``squim_objective_model`` arguments of a narrow SQUIM objective (fast tests)."""


def make_squim_objective_weights(path: str, seed: int = 0,
                                 model_config: dict | None = None) -> str:
    """Build ``torchaudio.models.squim_objective_base()`` (the architecture of torchaudio's
    published ``SQUIM_OBJECTIVE`` bundle), or ``squim_objective_model(**model_config)``, with
    random weights and ``torch.save`` its ``state_dict`` to ``path`` - a stand-in for the
    published ``squim_objective_dns2020.pth`` file, loaded by
    ``TorchSquimQualityMetricsStage(model_path=path)``. Returns ``path``."""
    import torch
    from torchaudio.models import squim_objective_base, squim_objective_model

    torch.manual_seed(seed)
    model = squim_objective_model(**model_config) if model_config else squim_objective_base()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    torch.save(model.state_dict(), path)
    return path


def espeak_available() -> bool:
    """Whether the ``espeak-ng`` program (Debian package ``espeak-ng``) is on ``PATH``."""
    import shutil

    return shutil.which("espeak-ng") is not None


def espeak_speech(text: str, sr: int = 16000, voice: str = "en", words_per_minute: int = 160,
                  amplitude: int = 100) -> np.ndarray:
    """Real synthetic speech: ``text`` spoken by ``espeak-ng`` (its 22.05 kHz WAV read with
    soundfile and resampled to ``sr``), as mono float32. Raises ``RuntimeError`` when espeak-ng
    is not installed (``apt-get install espeak-ng``)."""
    import subprocess
    import tempfile

    import soundfile as sf

    from curator_audio.decode import resample

    if not espeak_available():
        raise RuntimeError("espeak-ng is not installed: apt-get install -y espeak-ng")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "speech.wav")
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(words_per_minute), "-a",
                        str(amplitude), "-w", out, text], check=True, capture_output=True,
                       timeout=60)
        wave, file_sr = sf.read(out, dtype="float32", always_2d=True)
    wave = wave.mean(axis=1)
    return np.ascontiguousarray(resample(wave, file_sr, sr), dtype=np.float32)


SENTENCES = (
    "The quick brown fox jumps over the lazy dog near the quiet river bank.",
    "Please call Stella and ask her to bring these things with her from the store.",
    "Six spoons of fresh snow peas, five thick slabs of blue cheese, and maybe a snack.",
    "We also need a small plastic snake and a big toy frog for the kids.",
    "She can scoop these things into three red bags, and we will go meet her on Wednesday.",
    "A rainbow is a division of white light into many beautiful colors.",
)
"""English sentences for :func:`speech_scene` (the 'Please call Stella' elicitation text)."""


def speech_scene(layout: list[tuple[str, float]], sr: int = 16000, noise_amp: float = 0.003,
                 speech_gain: float = 0.6, seed: int = 0
                 ) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """A recording with espeak-ng speech at known offsets between silences and noise.

    ``layout`` is a list of ``(kind, value)``: ``("silence", seconds)``, ``("noise", seconds)``
    (white noise of ``noise_amp``) or ``("speech", sentence_index)`` (a sentence of
    :data:`SENTENCES`, scaled to ``speech_gain`` peak). Quiet background noise of
    ``noise_amp / 3`` runs under everything. Returns the waveform and the true speech spans in
    seconds: each sentence's first and last sample above 1 % of its peak (espeak-ng's own lead-in
    and tail silence excluded)."""
    rng = np.random.default_rng(seed)
    parts: list[np.ndarray] = []
    truth: list[tuple[float, float]] = []
    pos = 0
    for kind, value in layout:
        if kind == "silence":
            piece = np.zeros(int(value * sr), dtype=np.float32)
        elif kind == "noise":
            piece = rng.uniform(-noise_amp, noise_amp, int(value * sr)).astype(np.float32)
        elif kind == "speech":
            piece = espeak_speech(SENTENCES[int(value) % len(SENTENCES)], sr)
            piece = piece * (speech_gain / max(float(np.abs(piece).max()), 1e-9))
            loud = np.nonzero(np.abs(piece) > 0.01 * speech_gain)[0]
            truth.append(((pos + loud[0]) / sr, (pos + loud[-1] + 1) / sr))
        else:
            raise ValueError(f"speech_scene: unknown part {kind!r} (silence, noise or speech)")
        parts.append(piece.astype(np.float32))
        pos += len(piece)
    wave = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    wave = wave + rng.uniform(-noise_amp / 3, noise_amp / 3, len(wave)).astype(np.float32)
    return wave.astype(np.float32), truth


_UTMOS_HUBCONF = '''"""A stand-in for tarepan/SpeechMOS's hubconf.py (written by curator_audio.testing): the
entry point utmos22_strong returns a model called as model(wave[1, N], sr=16000) -> MOS,
here 1 + scale * mean |wave|."""
import torch

dependencies = ["torch"]


class _TinyMOS(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(SCALE))

    def forward(self, wave, sr=16000):
        assert sr == 16000 and wave.dim() == 2
        return 1.0 + self.scale * wave.abs().mean(dim=-1)


def utmos22_strong(progress=True, pretrained=True):
    return _TinyMOS()
'''


def make_tiny_utmos_checkout(path: str, scale: float = 20.0) -> str:
    """A local torch.hub checkout in the layout of ``tarepan/SpeechMOS`` (a ``hubconf.py`` with
    the ``utmos22_strong`` entry point) whose model scores ``1 + scale * mean|wave|``; load it
    with ``UTMOSFilterStage(model_dir=path)``. Returns ``path``."""
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "hubconf.py"), "w") as fh:
        fh.write(_UTMOS_HUBCONF.replace("SCALE", repr(float(scale))))
    return path


def make_tiny_sigmos_model(path: str, bias: float = 3.0, seed: int = 0
                           ) -> tuple[np.ndarray, np.ndarray]:
    """Save an ONNX graph with SigMOS's input (``(1, 3, frames, 481)`` float) and output
    (``(1, 7)``: COL, DISC, LOUD, NOISE, REVERB, SIG, OVRL) at ``path``: the mean over frames
    through a fixed linear layer ``W`` (1443 x 7, small random) plus ``bias``. Returns (W, b)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    w = rng.normal(0, 0.05, (3 * 481, 7)).astype(np.float32)
    b = np.full(7, bias, np.float32)
    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["input"], ["m"], axes=[2], keepdims=0),
         helper.make_node("Flatten", ["m"], ["f"], axis=1),
         helper.make_node("Gemm", ["f", "W", "B"], ["output"])],
        "tiny_sigmos",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, "frames", 481])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 7])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    onnx.save(model, path)
    return w, b


def make_band_classifier(path: str, constant: int | None = None, seed: int = 0) -> str:
    """Save a scikit-learn classifier with joblib at ``path`` in the layout of NeMo's band
    classifier (24 band-energy features, label 1 = full band): a decision tree trained on
    white noise low-passed at 4 kHz (narrow) and 20 kHz (full) at 48 kHz, or, with
    ``constant``, a ``DummyClassifier`` always answering it. Returns ``path``."""
    import joblib
    import scipy.signal
    from sklearn.dummy import DummyClassifier
    from sklearn.tree import DecisionTreeClassifier

    from curator_audio.stages.band import band_energy_features, feature_vector

    if constant is not None:
        clf = DummyClassifier(strategy="constant", constant=constant).fit(np.zeros((2, 24)),
                                                                          [0, 1])
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        joblib.dump(clf, path)
        return path
    sr = 48000
    feats, labels = [], []
    for label, cutoff in ((0, 4000), (1, 20000)):
        sos = scipy.signal.ellip(12, 0.1, 100, cutoff, btype="low", fs=sr, output="sos")
        for s in range(3):
            y = scipy.signal.sosfilt(sos, noise(1.0, sr, amp=0.5, seed=seed + s))
            feats.append(feature_vector(band_energy_features(y, sr)))
            labels.append(label)
    clf = DecisionTreeClassifier(random_state=seed).fit(np.stack(feats), labels)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    joblib.dump(clf, path)
    return path
