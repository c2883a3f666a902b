"""VAD segmentation throughput and memory (issue 46).

1. ``AudioDataFilterStage`` configured as VAD only (mono 48 kHz → Silero VAD → timestamp mapping)
   plus ``SegmentExtractionStage``, run as a Pipeline on the local executor, against a plain
   loop doing the same work (soundfile read → ``silero_vad.get_speech_timestamps`` → each
   segment written with soundfile): audio seconds per wall second, each run in its own fresh
   process, alternated, median of ``--repeats``. Both use the same torch thread count.
2. The full composite (band filter, UTMOS, SigMOS on both passes, concatenation, second VAD;
   speaker separation skipped) with tiny stand-in models in the published layouts (their
   compute is not the real models'): its audio seconds per wall second, stated beside.
3. Peak RSS (all processes) of the VAD-only pipeline on ``--mem-small`` and ``--mem-large``
   minutes of audio (the same 60 s recordings, more of them).
4. Peak RSS (all processes) of the VAD-only pipeline on ONE recording of ``--long-small``
   minutes and ONE of ``--long-large`` minutes (the long-form case: the file is streamed, read
   block by block, never held whole), with the pipeline's and the plain loop's audio seconds per
   wall second on the long one (``--long-loop``; the loop decodes the whole file), and the full
   composite's peak on both (``--long-full``).
5. ``--long-resample``: peak RSS (all processes) of ``ResampleAudioStage`` (48 kHz to 16 kHz,
   streamed: both files are longer than its ``stream_above_sec``) on the same two long files,
   and of the same stage decoding the long one whole (``stream_above_sec=None``) beside it;
   ``--long-skip-vad`` leaves out the VAD runs of 4.

The audio is espeak-ng speech (Debian ``espeak-ng``) between silences and noise at 48 kHz.

    uv run python benchmarks/audio_vad.py [--minutes 3] [--repeats 3] [--mem-small 6]
                                          [--mem-large 60] [--long-small 6] [--long-large 60]
                                          [--skip-full] [--skip-memory] [--skip-long]
                                          [--long-loop] [--long-full]
                                          [--long-resample] [--long-skip-vad]
    (``--repeats 0``: no VAD-only / loop comparison)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SR = 48000
VAD = {"min_duration_sec": 2.0, "max_duration_sec": 60.0, "threshold": 0.5,
       "min_interval_ms": 500, "speech_pad_ms": 300}


def base_recordings() -> list:
    """3 distinct 60 s recordings at 48 kHz (mono float32)."""
    import numpy as np
    from curator_audio import testing as T

    bases = []
    for b in range(3):
        layout, seconds, k = [], 0.0, 0
        while seconds < 60.0:
            layout += [("silence" if k % 2 else "noise", 1.0 + 0.5 * (k % 3)), ("speech", b + k)]
            seconds += 1.0 + 0.5 * (k % 3) + 4.5
            k += 1
        wave, _ = T.speech_scene(layout, sr=SR, seed=b)
        bases.append(np.pad(wave, (0, max(0, 60 * SR - len(wave))))[:60 * SR])
    return bases


def make_corpus(folder: str, minutes: float) -> str:
    """``minutes`` of 60 s recordings (copies of 3 distinct ones) and a manifest of them."""
    from curator_audio import testing as T

    os.makedirs(folder, exist_ok=True)
    bases = [T.write_audio(os.path.join(folder, f"base{b}.wav"), wave, SR)
             for b, wave in enumerate(base_recordings())]
    records = []
    for i in range(max(1, round(minutes))):
        path = os.path.join(folder, f"rec{i:04d}.wav")
        shutil.copyfile(bases[i % 3], path)
        records.append({"audio_filepath": path})
    manifest = os.path.join(folder, "manifest.jsonl")
    with open(manifest, "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in records)
    return manifest


def make_long(folder: str, minutes: float, bases: list) -> str:
    """ONE recording of ``minutes`` minutes (the 60 s recordings in turn, 16-bit WAV, written a
    minute at a time) and a manifest of it."""
    import soundfile as sf

    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "long.wav")
    with sf.SoundFile(path, "w", samplerate=SR, channels=1, subtype="PCM_16") as out:
        for i in range(max(1, round(minutes))):
            out.write(bases[i % len(bases)])
    manifest = os.path.join(folder, "manifest.jsonl")
    with open(manifest, "w") as fh:
        fh.write(json.dumps({"audio_filepath": path}) + "\n")
    return manifest


def _models(folder: str) -> dict:
    from curator_audio import testing as T

    T.make_tiny_sigmos_model(os.path.join(folder, "sigmos.onnx"), bias=5.0)
    return {"band_filter": {"model_path": T.make_band_classifier(
                os.path.join(folder, "band.joblib"), constant=1)},
            "utmos": {"model_dir": T.make_tiny_utmos_checkout(os.path.join(folder, "SpeechMOS")),
                      "mos_threshold": 0.0},
            "sigmos": {"model_path": os.path.join(folder, "sigmos.onnx")}}


def run_pipeline(manifest: str, out: str, full: bool, models_dir: str) -> dict:
    from curator import LocalExecutor, Pipeline
    from curator_audio import AudioDataFilterStage, ManifestReader, SegmentExtractionStage

    off = {"enable": False}
    config = {"vad": VAD, "speaker_separation": off}
    if full:
        config = {**_models(models_dir), "vad": VAD}
    else:
        config.update(band_filter=off, utmos=off, sigmos=off)
    stages = [ManifestReader(file_paths=manifest, records_per_task=1),
              AudioDataFilterStage(config=config), SegmentExtractionStage(output_dir=out)]
    Pipeline("vad-bench", stages=stages).run(executor=LocalExecutor(cpus=1))
    return {}


def run_loop(manifest: str, out: str) -> dict:
    import numpy as np
    import soundfile as sf
    import torch
    from silero_vad import get_speech_timestamps, load_silero_vad

    model = load_silero_vad()
    os.makedirs(out, exist_ok=True)
    with open(manifest) as fh:
        paths = [json.loads(line)["audio_filepath"] for line in fh]
    for path in paths:
        audio, sr = sf.read(path, dtype="float32", always_2d=True)
        wave = np.ascontiguousarray(audio.mean(axis=1))
        spans = get_speech_timestamps(
            torch.from_numpy(wave), model, sampling_rate=sr, threshold=VAD["threshold"],
            min_speech_duration_ms=VAD["min_duration_sec"] * 1000,
            max_speech_duration_s=VAD["max_duration_sec"],
            min_silence_duration_ms=VAD["min_interval_ms"], speech_pad_ms=VAD["speech_pad_ms"])
        stem = os.path.splitext(os.path.basename(path))[0]
        for s in spans:
            start, end = s["start"] * 1000 // sr, s["end"] * 1000 // sr   # samples at sr
            sf.write(os.path.join(out, f"{stem}_segment_{start}-{end}.wav"),
                     wave[start * sr // 1000:end * sr // 1000], sr, subtype="PCM_16")
    return {}


def run_resample(manifest: str, out: str, stream: bool) -> dict:
    from curator import LocalExecutor, Pipeline
    from curator_audio import ManifestReader, ResampleAudioStage

    stages = [ManifestReader(file_paths=manifest, records_per_task=1),
              ResampleAudioStage(resampled_audio_dir=out, target_sample_rate=16000,
                                 **({} if stream else {"stream_above_sec": None}))]
    Pipeline("resample-bench", stages=stages).run(executor=LocalExecutor(cpus=1))
    return {}


def child(kind: str, manifest: str, models_dir: str) -> None:
    """One measured run in this (fresh) process; prints a JSON line."""
    import warnings

    import soundfile as sf
    import torch

    warnings.filterwarnings("ignore")
    sys.path.insert(0, HERE)
    from _rss import PeakRSS

    torch.set_num_threads(1)
    with open(manifest) as fh:
        audio_s = sum(sf.info(json.loads(line)["audio_filepath"]).duration for line in fh)
    out = tempfile.mkdtemp(prefix=f"vad_{kind}_")
    try:
        with PeakRSS() as rss:
            t0 = time.perf_counter()
            if kind == "loop":
                run_loop(manifest, out)
            elif kind.startswith("resample"):
                run_resample(manifest, out, stream=kind == "resample")
            else:
                run_pipeline(manifest, out, full=kind == "full", models_dir=models_dir)
            wall = time.perf_counter() - t0
        written = len(os.listdir(out))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(json.dumps({"kind": kind, "audio_s": round(audio_s, 1), "wall_s": round(wall, 2),
                      "audio_s_per_s": round(audio_s / wall, 2), "segments": written,
                      "peak_rss_mb": round(rss.peak / 2**20, 1)}))


def measure(kind: str, manifest: str, models_dir: str) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CURATOR_SUMMARY": "0"}
    proc = subprocess.run([sys.executable, __file__, "--child", kind, "--manifest", manifest,
                           "--models-dir", models_dir], capture_output=True, text=True, env=env,
                          check=False)
    if proc.returncode:
        raise RuntimeError(f"{kind} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--mem-small", type=float, default=6.0)
    ap.add_argument("--mem-large", type=float, default=60.0)
    ap.add_argument("--long-small", type=float, default=6.0)
    ap.add_argument("--long-large", type=float, default=60.0)
    ap.add_argument("--skip-full", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--skip-long", action="store_true")
    ap.add_argument("--long-loop", action="store_true",
                    help="also run the plain loop on the long recording (it decodes it whole)")
    ap.add_argument("--long-full", action="store_true",
                    help="also run the full composite (tiny stand-in models) on each long file")
    ap.add_argument("--long-resample", action="store_true",
                    help="also run ResampleAudioStage on each long file (and whole on the long "
                         "one)")
    ap.add_argument("--long-skip-vad", action="store_true",
                    help="leave out the VAD-only runs on the long files")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--manifest", help=argparse.SUPPRESS)
    ap.add_argument("--models-dir", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child, args.manifest, args.models_dir)
        return
    work = tempfile.mkdtemp(prefix="audio_vad_bench_")
    try:
        manifest = make_corpus(os.path.join(work, "tp"), args.minutes)
        runs: dict[str, list[dict]] = {"composite": [], "loop": []}
        for _ in range(args.repeats):   # alternated, same session
            for kind in ("composite", "loop"):
                runs[kind].append(measure(kind, manifest, work))
                print(json.dumps(runs[kind][-1]), flush=True)
        report: dict = {}
        if args.repeats:
            med = {k: statistics.median(r["audio_s_per_s"] for r in v) for k, v in runs.items()}
            report = {"vad_only_audio_s_per_s": med["composite"],
                      "plain_loop_audio_s_per_s": med["loop"],
                      "ratio": round(med["composite"] / med["loop"], 3),
                      "segments": {k: v[0]["segments"] for k, v in runs.items()}}
        if not args.skip_full:
            full = measure("full", manifest, work)
            print(json.dumps(full), flush=True)
            report["full_composite_audio_s_per_s"] = full["audio_s_per_s"]
        if not args.skip_memory:
            for label, minutes in (("small", args.mem_small), ("large", args.mem_large)):
                m = make_corpus(os.path.join(work, label), minutes)
                r = measure("composite", m, work)
                print(json.dumps(r), flush=True)
                report[f"peak_rss_mb_{label}"] = r["peak_rss_mb"]
                report[f"audio_min_{label}"] = round(r["audio_s"] / 60, 1)
            report["memory_ratio"] = round(report["peak_rss_mb_large"]
                                           / report["peak_rss_mb_small"], 3)
        if not args.skip_long:
            bases = base_recordings()
            for label, minutes in (("small", args.long_small), ("large", args.long_large)):
                m = make_long(os.path.join(work, f"long_{label}"), minutes, bases)
                if not args.long_skip_vad:
                    r = measure("composite", m, work)
                    print(json.dumps(r), flush=True)
                    report[f"one_file_peak_rss_mb_{label}"] = r["peak_rss_mb"]
                    report[f"one_file_audio_min_{label}"] = round(r["audio_s"] / 60, 1)
                    report[f"one_file_audio_s_per_s_{label}"] = r["audio_s_per_s"]
                for kind in ("resample", "resample_whole") if args.long_resample else ():
                    if kind == "resample_whole" and label != "large":
                        continue
                    r = measure(kind, m, work)
                    print(json.dumps(r), flush=True)
                    report[f"one_file_{kind}_peak_rss_mb_{label}"] = r["peak_rss_mb"]
                    report[f"one_file_{kind}_audio_s_per_s_{label}"] = r["audio_s_per_s"]
                if args.long_full:
                    full = measure("full", m, work)
                    print(json.dumps(full), flush=True)
                    report[f"one_file_full_peak_rss_mb_{label}"] = full["peak_rss_mb"]
                if label == "large" and args.long_loop:
                    loop = measure("loop", m, work)
                    print(json.dumps(loop), flush=True)
                    report["one_file_loop_audio_s_per_s_large"] = loop["audio_s_per_s"]
                    report["one_file_loop_peak_rss_mb_large"] = loop["peak_rss_mb"]
                shutil.rmtree(os.path.join(work, f"long_{label}"), ignore_errors=True)
            if not args.long_skip_vad:
                report["one_file_memory_ratio"] = round(report["one_file_peak_rss_mb_large"]
                                                        / report["one_file_peak_rss_mb_small"], 3)
            if args.long_resample:
                report["one_file_resample_memory_ratio"] = round(
                    report["one_file_resample_peak_rss_mb_large"]
                    / report["one_file_resample_peak_rss_mb_small"], 3)
            if args.long_full:
                report["one_file_full_memory_ratio"] = round(
                    report["one_file_full_peak_rss_mb_large"]
                    / report["one_file_full_peak_rss_mb_small"], 3)
        print(json.dumps(report, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
