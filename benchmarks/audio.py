"""Audio throughput benchmark.

1. decode + duration + quality (RMS, clipping, silence, SNR) through a Pipeline on the local
   executor: hours of audio processed per minute of wall time (CPU).
2. ASR real-time factor (processing seconds / audio seconds; < 1 is faster than real time) of the
   wav2vec2 CTC path (batched, padded) on CPU, for a base-sized model (wav2vec2_base shape,
   random weights), a whisper-base-sized random Whisper (``--asr-models whisper_base``; 32 new
   tokens per 30 s chunk) and the tiny test model; on CUDA too when a GPU is present.
3. WER and CER of two 3,000-character transcripts (the case of issue 18: 7.2 s for the CER with
   the former pure-Python edit distance on this machine; jiwer now). ``--only-wer`` runs just this.
4. Peak RSS of the process.

    uv run python benchmarks/audio.py [--minutes 20] [--asr-seconds 60] [--workers 2]
                                      [--asr-models tiny,base] [--only-wer]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time

import numpy as np


def make_corpus(folder: str, minutes: float, clip_s: float = 10.0) -> str:
    from curator_audio import testing as T

    n = max(1, int(minutes * 60 / clip_s))
    records = []
    for i in range(n):
        wave = np.concatenate([T.speech_like(clip_s * 0.7, seed=i), T.silence(clip_s * 0.1),
                               T.noise(clip_s * 0.2, amp=0.02, seed=i)])
        name = f"clip_{i:04d}.{'flac' if i % 2 else 'wav'}"
        T.write_audio(os.path.join(folder, name), wave)
        records.append({"audio_filepath": name, "text": "x"})
    manifest = os.path.join(folder, "manifest.jsonl")
    with open(manifest, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    return manifest


def bench_quality(manifest: str, workers: int) -> dict:
    from curator import LocalExecutor, Pipeline
    from curator_audio import (
        AudioClippingStage,
        AudioDecodeStage,
        AudioRMSStage,
        AudioSilenceFractionStage,
        AudioSNRStage,
        GetAudioDurationStage,
        ManifestReader,
    )

    stages = [ManifestReader(file_paths=manifest, records_per_task=8), AudioDecodeStage(),
              GetAudioDurationStage(), AudioRMSStage(), AudioClippingStage(),
              AudioSilenceFractionStage(), AudioSNRStage()]
    executor = LocalExecutor(cpus=workers)
    t0 = time.perf_counter()
    result = Pipeline("bench-audio", stages=stages).run(executor=executor)
    wall = time.perf_counter() - t0
    hours = sum(r["duration"] for t in result for r in t.data) / 3600.0
    return {"audio_hours": round(hours, 3), "wall_s": round(wall, 2),
            "hours_per_minute": round(hours / (wall / 60.0), 2)}


def _labels() -> list[str]:
    from curator_audio.testing import TINY_LABELS

    return TINY_LABELS


def bench_asr(seconds: float, device: str, size: str, batch: int = 8) -> dict:
    import torch
    from curator_audio import testing as T
    from curator_audio.asr.wav2vec2 import Wav2Vec2CTCModel
    from torchaudio.models import wav2vec2_base

    if size == "base":
        model = wav2vec2_base(aux_num_out=len(_labels())).eval().to(device)
        asr = Wav2Vec2CTCModel(model, _labels(), device, {"normalize_waveform": True})
    elif size == "whisper_base":  # whisper-base widths, random weights, byte-level vocab
        from curator_audio.asr.whisper import WhisperModel

        path = T.make_tiny_whisper_model(
            tempfile.mkdtemp(prefix="whisper_base_"), d_model=512, encoder_layers=6,
            decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
            encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_target_positions=448,
            timestamp_tokens=False)
        # random weights never emit end-of-text: every chunk decodes max_new_tokens (an upper
        # bound on a real model's decode time for short utterances)
        asr = WhisperModel.load(path, device, language="en", max_new_tokens=32)
    else:
        path = T.make_tiny_wav2vec2_model(tempfile.mkdtemp(prefix="tiny_w2v_"))
        asr = Wav2Vec2CTCModel.load(path, device)
    clip_s = 5.0
    waves = [T.speech_like(clip_s, seed=i) for i in range(max(1, int(seconds / clip_s)))]
    asr.transcribe(waves[:1])                       # warm-up (kernels, allocator)
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(0, len(waves), batch):
        asr.transcribe(waves[i:i + batch])
    if device == "cuda":
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    audio = len(waves) * clip_s
    return {"model": size, "device": device, "audio_s": audio, "wall_s": round(wall, 2),
            "rtf": round(wall / audio, 4), "torch_threads": torch.get_num_threads()}


def bench_wer(chars: int = 3000, repeats: int = 5) -> dict:
    """Seconds per WER and per CER call on two random ``chars``-character transcripts."""
    import random

    from curator_audio.metrics import char_error_rate, word_error_rate

    rng = random.Random(0)
    vocab = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(2, 8)))
             for _ in range(2000)]

    def text() -> str:
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < chars:
            words.append(rng.choice(vocab))
        return " ".join(words)[:chars]

    ref, hyp = text(), text()
    out = {"chars": chars}
    for name, fn in (("wer", word_error_rate), ("cer", char_error_rate)):
        t0 = time.perf_counter()
        for _ in range(repeats):
            value = fn(ref, hyp)
        out[f"{name}_s"] = round((time.perf_counter() - t0) / repeats, 4)
        out[name] = round(value, 4)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=20.0, help="audio for the quality benchmark")
    ap.add_argument("--asr-seconds", type=float, default=60.0, help="audio for the ASR benchmark")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--asr-models", default="tiny,base", help="comma list of tiny, base, whisper_base")
    ap.add_argument("--only-wer", action="store_true", help="run only the WER/CER timing")
    args = ap.parse_args(argv)
    os.environ.setdefault("CURATOR_SUMMARY", "0")
    print("WER/CER (3,000 characters, jiwer):", bench_wer(), flush=True)
    if args.only_wer:
        return
    with tempfile.TemporaryDirectory(prefix="bench_audio_") as tmp:
        manifest = make_corpus(tmp, args.minutes)
        print("decode+duration+quality (CPU):", bench_quality(manifest, args.workers), flush=True)
    sizes = [s for s in args.asr_models.split(",") if s]
    for size in sizes:
        print("ASR CPU:", bench_asr(args.asr_seconds, "cpu", size), flush=True)
    import torch

    if torch.cuda.is_available():
        for size in sizes:
            print("ASR GPU:", bench_asr(args.asr_seconds * 10, "cuda", size), flush=True)
    else:
        print("ASR GPU: not run (no CUDA device on this machine)")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS: {rss / 1024:.0f} MiB", file=sys.stdout)


if __name__ == "__main__":
    main()
