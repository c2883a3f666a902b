"""NeMo Curator's audio filter pipeline on generated speech, in one command:

    uv run python examples/audio/audio_data_filter.py [--out /tmp/audio_data_filter]

Generates recordings of espeak-ng speech (Debian package ``espeak-ng``) between silences and
white noise at 48 kHz, plus a 16 kHz recording, a silent one and a missing file, then runs
``AudioDataFilterStage`` (mono 48 kHz → Silero VAD → band filter → UTMOS → SigMOS → segment
concatenation → VAD → filters again → timestamp mapping; speaker separation is not offered and is
skipped with a warning) and ``SegmentExtractionStage``. The band classifier, UTMOS and SigMOS are
tiny stand-ins saved in the published layouts (their scores mean nothing): point the config at
the real downloads (``band_filter.model_path``, ``utmos.model_dir``, ``sigmos.model_path``) for
real filtering. Writes ``out/manifest/*.jsonl`` (one row per kept segment, positions in the
original files), ``out/segments/*.wav`` and ``out/rejected/`` (the 16 kHz, silent and missing
inputs with their reasons).
"""

from __future__ import annotations

import argparse
import json
import os

SR = 48000


def make_inputs(folder: str) -> tuple[str, dict]:
    from curator_audio import testing as T

    os.makedirs(folder, exist_ok=True)
    records = []
    for i, layout in enumerate([
            [("silence", 1.0), ("speech", 0), ("noise", 1.5), ("speech", 1), ("silence", 1.0)],
            [("noise", 0.8), ("speech", 2), ("silence", 1.2), ("speech", 3), ("noise", 0.5)],
            [("silence", 0.5), ("speech", 5), ("noise", 2.0)]]):
        wave, _ = T.speech_scene(layout, sr=SR, seed=i)
        records.append({"audio_filepath": T.write_audio(f"{folder}/rec{i}.wav", wave, SR)})
    low, _ = T.speech_scene([("speech", 4)], sr=16000)
    records.append({"audio_filepath": T.write_audio(f"{folder}/rate16k.wav", low, 16000)})
    records.append({"audio_filepath": T.write_audio(f"{folder}/silent.wav", T.silence(3, SR),
                                                    SR)})
    records.append({"audio_filepath": f"{folder}/missing.wav"})
    manifest = f"{folder}/manifest.jsonl"
    with open(manifest, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    T.make_tiny_sigmos_model(f"{folder}/models/sigmos.onnx", bias=5.0)
    models = {
        "band_filter": {"model_path": T.make_band_classifier(f"{folder}/models/band.joblib",
                                                             constant=1)},
        "utmos": {"model_dir": T.make_tiny_utmos_checkout(f"{folder}/models/SpeechMOS"),
                  "mos_threshold": 1.5},
        "sigmos": {"model_path": f"{folder}/models/sigmos.onnx"},
    }
    return manifest, models


def main(argv: list[str] | None = None) -> None:
    from curator import Pipeline
    from curator_audio import (
        AudioDataFilterStage,
        ManifestReader,
        ManifestWriterStage,
        SegmentExtractionStage,
    )

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/tmp/audio_data_filter")
    args = ap.parse_args(argv)
    manifest, models = make_inputs(os.path.join(args.out, "inputs"))
    result = Pipeline("audio-data-filter", stages=[
        ManifestReader(file_paths=manifest, records_per_task=2),
        AudioDataFilterStage(config=models),
        SegmentExtractionStage(output_dir=os.path.join(args.out, "segments")),
        ManifestWriterStage(path=os.path.join(args.out, "manifest"), mode="overwrite"),
    ]).run(rejected_dir=os.path.join(args.out, "rejected"))
    rows = [json.loads(line) for name in sorted(os.listdir(os.path.join(args.out, "manifest")))
            if name.endswith(".jsonl")
            for line in open(os.path.join(args.out, "manifest", name), encoding="utf-8")]
    for r in rows:
        print(f"{os.path.basename(r['original_file'])} {r['original_start_ms']:>6}-"
              f"{r['original_end_ms']:>6} ms  -> {os.path.basename(r['extracted_path'])}")
    print(f"{len(rows)} segments kept; rejected: {result.rejected.counts}")


if __name__ == "__main__":
    main()
