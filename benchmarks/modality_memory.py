"""Peak memory of the image, audio and video readers on a small and a large input.

Each modality's plain pipeline (reader as the docs call it -> real stages -> writer, the
local executor's defaults) runs in a fresh process on a small input and on a large one; the
peak is the summed RSS of that process and its children. Inputs are generated once under
``--workdir`` (outside the repository):

- image: WebDataset tars of varied JPEGs (gradients, shapes, noise; 400-1600 px sides) with a
  caption and JSON per sample, ~100 MB and ~1 GB uncompressed;
  ``ImageReaderStage(file_paths=tar)`` -> mean brightness -> ``ImageWriterStage``.
- audio: WAV and FLAC files of 2-20 s speech-like audio; a short manifest and one with 10x the
  lines; ``ManifestReader(file_paths=manifest)`` -> ``AudioRMSStage`` -> ``ManifestWriterStage``.
- video: a directory of 4 x 40 s (~100 MB) and one of 3 x 10 min (~1.1 GB) 1280x720 24 fps
  H.264 videos (~5 Mbit/s, encoded with PyAV). Two pipelines (``--video-pipeline``):
  ``transcode``: ``VideoReaderStage(dir)`` -> ``FixedStrideSplitStage`` ->
  ``ClipTranscodingStage(target_res=(320, 180))`` -> ``ClipWriterStage``;
  ``curate`` (NeMo Curator's split pipeline: clips -> encode -> frames -> embed -> write):
  ``VideoReaderStage(dir)`` -> ``FixedStrideSplitStage(clip_len_s=10)`` ->
  ``ClipTranscodingStage(target_res=(320, 180))`` -> ``ClipFrameExtractionStage(target_fps=2)``
  (source resolution) -> ``ClipEmbeddingStage`` (a tiny random-weight CLIP on the CPU: the
  frames go through CLIP's real preprocessing) -> ``ClipWriterStage(generate_previews=True)``;
  ``frames``: split -> frame extraction -> writer with previews (no torch in the process).

Small and large run back to back ``--repeat`` times; prints each peak, each ratio
peak(large)/peak(small) and the median ratio (target <= 1.2), with the load average.

    uv run python benchmarks/modality_memory.py --workdir /tmp/mm [--modality image,audio,video]
        [--repeat 3] [--video-window-s none] [--video-pipeline transcode,curate,frames]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("CURATOR_SUMMARY", "0")

MB = 2**20
IMAGE_SIZES = {"small": 100 * MB, "large": 1024 * MB}
AUDIO_LINES = {"small": 1000, "large": 10000}
VIDEO_LAYOUT = {"small": (4, 40.0), "large": (3, 600.0)}  # (videos, seconds each)
VIDEO_SIZE, VIDEO_FPS, VIDEO_BITRATE = (1280, 720), 24, 6_000_000


# ---------------------------------------------------------------- data (made once)

def _jpeg(rng: np.random.Generator) -> bytes:
    """A photo-like JPEG: a smooth two-colour gradient, a few filled shapes, sensor-like noise."""
    from PIL import Image, ImageDraw, ImageFilter

    w, h = int(rng.integers(400, 1601)), int(rng.integers(300, 1201))
    a, b = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    t = (np.linspace(0, 1, w)[None, :] * rng.uniform(0.3, 1)
         + np.linspace(0, 1, h)[:, None] * rng.uniform(0, 0.7))[..., None]
    img = Image.fromarray((a + (b - a) * np.clip(t, 0, 1)).astype(np.uint8))
    draw = ImageDraw.Draw(img)
    for _ in range(int(rng.integers(3, 12))):
        x0, y0 = int(rng.integers(0, w)), int(rng.integers(0, h))
        x1, y1 = x0 + int(rng.integers(20, w // 2)), y0 + int(rng.integers(20, h // 2))
        fill = tuple(int(c) for c in rng.integers(0, 256, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)([x0, y0, x1, y1], fill=fill)
    img = img.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.5, 2.5))))
    arr = np.asarray(img, np.int16) + rng.normal(0, rng.uniform(2, 8), (h, w, 1)).astype(np.int16)
    buf = io.BytesIO()
    Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(
        buf, format="JPEG", quality=int(rng.integers(80, 96)))
    return buf.getvalue()


def make_images(workdir: str) -> dict[str, str]:
    """``small.tar`` (~100 MB) and ``large.tar`` (~1 GB); 500 distinct JPEGs, repeated under new
    keys, captions and metadata (decoding costs the same; generating 1 GB of JPEGs would not)."""
    folder = os.path.join(workdir, "image")
    out = {k: os.path.join(folder, f"{k}.tar") for k in IMAGE_SIZES}
    if os.path.exists(os.path.join(folder, "DONE")):
        return out
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(0)
    pool = [_jpeg(rng) for _ in range(500)]
    for size_name, target in IMAGE_SIZES.items():
        with tarfile.open(out[size_name] + ".tmp", "w") as tar:
            written, i = 0, 0
            while written < target:
                key = f"{size_name}_{i:07d}"
                jpg = pool[i % len(pool)]
                meta = json.dumps({"url": f"https://example.org/{key}.jpg", "width_hint": i % 7})
                for ext, data in (("jpg", jpg), ("txt", f"a picture number {i}".encode()),
                                  ("json", meta.encode())):
                    info = tarfile.TarInfo(f"{key}.{ext}")
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
                written += len(jpg) + 1536
                i += 1
        os.replace(out[size_name] + ".tmp", out[size_name])
    open(os.path.join(folder, "DONE"), "w").close()
    return out


def make_audio(workdir: str) -> dict[str, str]:
    """200 WAV/FLAC files (2-20 s, 16 kHz) and manifests of 1,000 and 10,000 lines over them."""
    from curator_audio import testing as T

    folder = os.path.join(workdir, "audio")
    out = {k: os.path.join(folder, f"{k}.jsonl") for k in AUDIO_LINES}
    if os.path.exists(os.path.join(folder, "DONE")):
        return out
    os.makedirs(os.path.join(folder, "wav"), exist_ok=True)
    rng = np.random.default_rng(0)
    files = []
    for i in range(200):
        secs = float(rng.uniform(2, 20))
        wave = np.concatenate([T.speech_like(secs * 0.8, seed=i), T.silence(secs * 0.05),
                               T.noise(secs * 0.15, amp=0.02, seed=i)])
        name = f"wav/utt_{i:04d}.{'flac' if i % 2 else 'wav'}"
        T.write_audio(os.path.join(folder, name), wave)
        files.append((name, round(secs, 3)))
    for size_name, lines in AUDIO_LINES.items():
        with open(out[size_name], "w") as fh:
            for i in range(lines):
                name, secs = files[i % len(files)]
                fh.write(json.dumps({"audio_filepath": name, "duration": secs,
                                     "text": f"utterance {i} of the corpus", "id": i}) + "\n")
    open(os.path.join(folder, "DONE"), "w").close()
    return out


def _video_frames(n: int, seed: int) -> np.ndarray:
    """``n`` 1280x720 frames: scenes of a textured gradient with moving shapes, cut every 4 s."""
    w, h = VIDEO_SIZE
    rng = np.random.default_rng(seed)
    out = np.empty((n, h, w, 3), np.uint8)
    scene_len = 4 * VIDEO_FPS
    base = None
    for k in range(n):
        if k % scene_len == 0:
            a, b = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
            t = (np.linspace(0, 1, w)[None, :] * 0.6 + np.linspace(0, 1, h)[:, None] * 0.4)
            base = (a + (b - a) * t[..., None]).astype(np.int16)
            base += rng.normal(0, 10, (h, w, 1)).astype(np.int16)
            base = np.clip(base, 0, 255).astype(np.uint8)
            colour = rng.integers(0, 256, 3).astype(np.uint8)
        frame = out[k]
        frame[:] = base
        x = (k * 7) % (w - 200)
        y = (k * 3) % (h - 150)
        frame[y:y + 150, x:x + 200] = colour
    return out


def make_videos(workdir: str) -> dict[str, str]:
    """``small/`` (4 x 30 s) and ``large/`` (2 x 5 min) 1280x720 H.264 MP4s at ~6 Mbit/s."""
    import av

    folder = os.path.join(workdir, "video")
    out = {k: os.path.join(folder, k) for k in VIDEO_LAYOUT}
    if os.path.exists(os.path.join(folder, "DONE")):
        return out
    for size_name, (count, seconds) in VIDEO_LAYOUT.items():
        os.makedirs(out[size_name], exist_ok=True)
        for v in range(count):
            path = os.path.join(out[size_name], f"{size_name}_{v:02d}.mp4")
            with av.open(path + ".tmp", mode="w", format="mp4") as container:
                stream = container.add_stream("libx264", rate=VIDEO_FPS)
                stream.width, stream.height = VIDEO_SIZE
                stream.pix_fmt, stream.bit_rate = "yuv420p", VIDEO_BITRATE
                stream.options = {"preset": "ultrafast", "g": str(2 * VIDEO_FPS)}
                total = int(seconds * VIDEO_FPS)
                for start in range(0, total, 240):
                    for frame in _video_frames(min(240, total - start), seed=v * 1000 + start):
                        vf = av.VideoFrame.from_ndarray(frame, format="rgb24")
                        for packet in stream.encode(vf):
                            container.mux(packet)
                for packet in stream.encode():
                    container.mux(packet)
            os.replace(path + ".tmp", path)
    open(os.path.join(folder, "DONE"), "w").close()
    return out


MAKERS = {"image": make_images, "audio": make_audio, "video": make_videos}


# ---------------------------------------------------------------- pipelines (in the child)

def image_pipeline(src: str, out: str):
    from curator import Pipeline, processing_stage
    from curator_image import ImageReaderStage, ImageWriterStage

    @processing_stage(name="MeanBrightness")
    def brightness(batch):
        for img in batch.data:
            img.metadata["mean_brightness"] = float(img.image_data.mean())
        return batch

    return Pipeline("image-memory", stages=[ImageReaderStage(file_paths=src), brightness,
                                            ImageWriterStage(output_dir=out)])


def audio_pipeline(src: str, out: str):
    from curator import Pipeline
    from curator_audio import AudioRMSStage, ManifestReader, ManifestWriterStage

    return Pipeline("audio-memory", stages=[ManifestReader(file_paths=src), AudioRMSStage(),
                                            ManifestWriterStage(path=out)])


def video_pipeline(src: str, out: str):
    from curator import Pipeline
    from curator_video import (
        ClipEmbeddingStage,
        ClipFrameExtractionStage,
        ClipTranscodingStage,
        ClipWriterStage,
        FixedStrideSplitStage,
        VideoReaderStage,
    )

    window = os.environ.get("BENCH_VIDEO_WINDOW_S")  # --video-window-s: compare with the default
    reader = (VideoReaderStage(input_video_path=src) if window is None else
              VideoReaderStage(input_video_path=src,
                               window_s=None if window == "none" else float(window)))
    kind = os.environ.get("BENCH_VIDEO_PIPELINE", "transcode")  # --video-pipeline
    split = FixedStrideSplitStage(clip_len_s=10.0)
    if kind == "frames":
        return Pipeline("video-memory-frames", stages=[
            reader, split, ClipFrameExtractionStage(target_fps=2.0),
            ClipWriterStage(output_path=out, generate_previews=True)])
    if kind == "curate":
        return Pipeline("video-memory-curate", stages=[
            reader, split, ClipTranscodingStage(target_res=(320, 180)),
            ClipFrameExtractionStage(target_fps=2.0),
            ClipEmbeddingStage(model_dir=os.environ["BENCH_CLIP_DIR"]),
            ClipWriterStage(output_path=out, generate_previews=True)])
    return Pipeline("video-memory", stages=[
        reader, split, ClipTranscodingStage(target_res=(320, 180)),
        ClipWriterStage(output_path=out)])


def make_clip_model(workdir: str) -> str:
    """The tiny random-weight CLIP the ``curate`` pipeline embeds with (made once)."""
    from curator_image.testing import make_tiny_clip_model

    return make_tiny_clip_model(os.path.join(workdir, "models", "clip"))


PIPELINES = {"image": image_pipeline, "audio": audio_pipeline, "video": video_pipeline}


def child(modality: str, src: str, out: str) -> None:
    start = time.perf_counter()
    result = PIPELINES[modality](src, out).run()
    wall = time.perf_counter() - start
    files = sum(len(t.data) for t in result)
    print(json.dumps({"ok": bool(result.ok), "wall_s": round(wall, 1), "files": files,
                      "rejected": dict(result.rejected.counts)}), flush=True)
    sys.exit(0 if result.ok else 1)


# ---------------------------------------------------------------- driver

def run_child(modality: str, src: str, out: str) -> dict:
    """Run one pipeline in a fresh process; peak = the summed RSS of its process tree."""
    from _rss import PeakRSS

    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", modality, src, out]
    with PeakRSS(include_self=False) as rss:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    shutil.rmtree(out, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{modality} pipeline on {src} failed:\n{proc.stderr[-3000:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    return {**info, "peak_mb": round(rss.peak / MB)}


def input_mb(path: str) -> float:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)) / MB
    if path.endswith(".jsonl"):
        with open(path) as fh:
            return float(sum(1 for _ in fh))  # lines, not MB
    return os.path.getsize(path) / MB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", default="/tmp/curator-modality-memory")
    parser.add_argument("--modality", default="image,audio,video")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--video-window-s", help="VideoReaderStage(window_s=...) instead of the "
                        "default ('none': every video read whole, as before windows)")
    parser.add_argument("--video-pipeline", default="transcode,curate",
                        help="comma list of transcode, curate (split, encode, frames, CLIP "
                        "embeddings, write) and frames (split, frames, write)")
    parser.add_argument("--child", nargs=3, metavar=("MODALITY", "SRC", "OUT"))
    args = parser.parse_args()
    if args.child:  # the settings below reach it through its environment
        child(*args.child)
        return
    if args.video_window_s:
        os.environ["BENCH_VIDEO_WINDOW_S"] = args.video_window_s
    for modality in args.modality.split(","):
        t0 = time.perf_counter()
        inputs = MAKERS[modality](args.workdir)
        unit = "lines" if modality == "audio" else "MB"
        print(f"{modality}: inputs ready in {time.perf_counter() - t0:.0f}s: "
              + ", ".join(f"{k}={input_mb(v):.0f} {unit}" for k, v in inputs.items()), flush=True)
        variants = args.video_pipeline.split(",") if modality == "video" else [""]
        for variant in variants:
            if variant:
                os.environ["BENCH_VIDEO_PIPELINE"] = variant
                if variant == "curate":
                    os.environ["BENCH_CLIP_DIR"] = make_clip_model(args.workdir)
            measure(f"{modality}[{variant}]" if variant else modality, modality, inputs,
                    args.workdir, args.repeat)


def measure(label: str, modality: str, inputs: dict[str, str], workdir: str,
            repeat: int) -> None:
    """Small then large ``repeat`` times; prints each run and the medians."""
    ratios, peaks = [], {"small": [], "large": []}
    for r in range(repeat):
        runs = {}
        for size_name in ("small", "large"):
            out = os.path.join(workdir, "out", f"{modality}_{size_name}")
            runs[size_name] = run_child(modality, inputs[size_name], out)
            peaks[size_name].append(runs[size_name]["peak_mb"])
        ratio = runs["large"]["peak_mb"] / runs["small"]["peak_mb"]
        ratios.append(ratio)
        load = os.getloadavg()[0]
        print(f"  {label} run {r + 1}: small {runs['small']}  large {runs['large']}  "
              f"ratio {ratio:.2f}  (load average {load:.1f})", flush=True)
    print(f"{label}: median peak small {statistics.median(peaks['small']):.0f} MB, large "
          f"{statistics.median(peaks['large']):.0f} MB; median peak(large)/peak(small) = "
          f"{statistics.median(ratios):.2f} (target <= 1.2)", flush=True)


if __name__ == "__main__":
    main()
