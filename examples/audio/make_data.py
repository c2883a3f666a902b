"""Generate the example's data: a few synthetic recordings, a manifest and a tiny random-weight
wav2vec2 model (skipped when already there). Run from anywhere:

    uv run python examples/audio/make_data.py
"""

from __future__ import annotations

import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
MODEL = os.path.join(DATA, "tiny_wav2vec2")
MANIFEST = os.path.join(DATA, "manifest.jsonl")


def make_data() -> None:
    """Write data/*.wav|flac|ogg, data/manifest.jsonl and data/tiny_wav2vec2/ if missing."""
    from curator_audio import testing as T

    if not os.path.exists(os.path.join(MODEL, "model.pt")):
        T.make_tiny_wav2vec2_model(MODEL)
    if os.path.exists(MANIFEST):
        return
    clips = {
        "speech_1.wav": (T.speech_like(2.0, seed=1), "hello world"),
        "speech_2.flac": (T.speech_like(1.5, seed=2), "good morning"),
        "noisy.ogg": (T.speech_like(1.5, seed=3) + T.noise(1.5, amp=0.2), "too noisy"),
        "silence.wav": (T.silence(1.0), ""),
        "long_talk.wav": (np.concatenate([T.speech_like(2.0, seed=4), T.silence(0.8),
                                          T.speech_like(3.0, seed=5)]), "a long recording"),
    }
    records = []
    for name, (wave, text) in clips.items():
        T.write_audio(os.path.join(DATA, name), np.clip(wave, -1, 1))
        records.append({"audio_filepath": name, "text": text, "speaker": name.split("_")[0]})
    T.write_corrupt_files(os.path.join(DATA, "bad"))
    records.append({"audio_filepath": "bad/truncated.wav", "text": "cut off"})
    with open(MANIFEST, "w") as fh:
        for rec in records:
            fh.write(json.dumps(rec) + "\n")
        fh.write("{this line is not json\n")


if __name__ == "__main__":
    make_data()
    print(f"prepared the example's recordings, manifest and tiny model in {DATA}")
    print("next: uv run python examples/audio/pipeline.py   or   "
          "uv run curator run examples/audio/pipeline.yaml")
