"""Audio-language-model training windows from generated conversations, in one command:

    uv run python examples/audio/alm_build.py [--out /tmp/alm_build]

Generates two-speaker conversations of espeak-ng speech (Debian package ``espeak-ng``; two
voices) with pauses and background noise at 48 kHz, and a diarized manifest entry per
conversation (``segments`` with ``start``, ``end``, ``speaker``, ``text`` and word timings spread
over each turn). Then: ``BandwidthEstimationStage`` measures each segment's bandwidth from the
audio (a telephone-band turn, low-passed at 3.4 kHz, is left out of the windows),
``ALMDataBuilderStage`` builds ~30 s windows of 2-5 speakers (the turn crossing a window's end
cut at a word, NeMo's ``truncation=True``), ``ALMDataOverlapStage`` keeps windows overlapping by
less than half, and the entries go to ``out/manifest/*.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os

SR = 48000
VOICES = {"spk_a": "en-us", "spk_b": "en+f3"}


def make_conversation(folder: str, index: int, turns: int = 14) -> dict:
    import numpy as np
    import scipy.signal
    from curator_audio import testing as T

    rng = np.random.default_rng(index)
    parts, segments, pos = [], [], 0.0
    for t in range(turns):
        speaker = "spk_a" if t % 2 == 0 else "spk_b"
        text = T.SENTENCES[(index + t) % len(T.SENTENCES)]
        wave = T.espeak_speech(text, SR, voice=VOICES[speaker])
        wave = 0.5 * wave / max(float(np.abs(wave).max()), 1e-9)
        if t == 5:   # a telephone-band turn
            sos = scipy.signal.ellip(10, 0.1, 80, 3400, btype="low", fs=SR, output="sos")
            wave = scipy.signal.sosfilt(sos, wave).astype(np.float32)
        pause = float(rng.uniform(0.3, 0.9))
        parts += [wave, np.zeros(int(pause * SR), dtype=np.float32)]
        start, end = pos, pos + len(wave) / SR
        words = text.split()
        step = (end - start) / len(words)
        segments.append({"start": round(start, 3), "end": round(end, 3), "speaker": speaker,
                         "text": text,
                         "words": [{"word": w, "start": round(start + i * step, 3),
                                    "end": round(start + (i + 1) * step, 3)}
                                   for i, w in enumerate(words)]})
        pos = end + pause
    audio = np.concatenate(parts)
    audio = audio + rng.uniform(-0.0005, 0.0005, len(audio)).astype(np.float32)
    path = T.write_audio(os.path.join(folder, f"conversation{index}.wav"), audio, SR)
    return {"audio_filepath": path, "audio_sample_rate": SR, "duration": len(audio) / SR,
            "segments": segments}


def main(argv: list[str] | None = None) -> None:
    from curator import Pipeline
    from curator_audio import (
        ALMDataBuilderStage,
        ALMDataOverlapStage,
        BandwidthEstimationStage,
        ManifestReader,
        ManifestWriterStage,
    )

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/alm_build")
    ap.add_argument("--conversations", type=int, default=2)
    args = ap.parse_args(argv)
    inputs = os.path.join(args.out, "inputs")
    os.makedirs(inputs, exist_ok=True)
    manifest = os.path.join(inputs, "manifest.jsonl")
    with open(manifest, "w") as fh:
        for i in range(args.conversations):
            fh.write(json.dumps(make_conversation(inputs, i)) + "\n")
    out_dir = os.path.join(args.out, "manifest")
    Pipeline("alm-build", stages=[
        ManifestReader(file_paths=manifest, records_per_task=1),
        BandwidthEstimationStage(),
        ALMDataBuilderStage(target_window_duration=30.0, tolerance=0.1, min_bandwidth=8000),
        ALMDataOverlapStage(overlap_percentage=50, target_duration=30.0),
        ManifestWriterStage(path=out_dir, mode="overwrite"),
    ]).run()
    for name in sorted(n for n in os.listdir(out_dir) if n.endswith(".jsonl")):
        for line in open(os.path.join(out_dir, name), encoding="utf-8"):
            entry = json.loads(line)
            print(f"{os.path.basename(entry['audio_filepath'])}: {len(entry['windows'])} windows,"
                  f" {len(entry['filtered_windows'])} after overlap filtering "
                  f"({entry['filtered_dur']:.1f} s); lost to bandwidth: "
                  f"{entry['stats']['lost_bw']} segment(s); cuts at window edges: "
                  f"{entry['truncation_events']}")


if __name__ == "__main__":
    main()
