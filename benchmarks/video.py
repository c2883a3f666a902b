"""Video throughput benchmark.

1. split + extract + motion on CPU through a Pipeline on the local executor (read metadata →
   fixed-stride or scene-cut split → decord frame extraction → motion filter): seconds of video
   processed per second of wall time.
2. The clip embedding stage (mean of CLIP frame embeddings, tiny random-weight CLIP model) on
   CPU: clips and video-seconds per second; on CUDA too when a GPU is present (skipped, and said
   so, when there is none).
3. TransNetV2 scene detection with a published-size random-weight model (F=16, D=1024, the
   published state-dict layout): the decode floor (PyAV, every frame at 48x27) beside the
   network alone and the whole ``TransNetV2ClipExtractionStage``, in frames/s; on CUDA too when
   a GPU is present.
4. Peak RSS of the process (and of worker processes, if any).

    uv run python benchmarks/video.py [--videos 8] [--seconds 20] [--size 320x240] [--fps 24]
        [--skip-embedding] [--skip-transnetv2]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable

os.environ.setdefault("CURATOR_SUMMARY", "0")


def make_corpus(folder: str, n: int, seconds: float, size: tuple[int, int], fps: int) -> float:
    """``n`` synthetic videos of ``seconds`` each (scene cuts every 3 s, a moving square);
    returns the total duration in seconds."""
    from curator_video.synthetic import scene_frames, write_video

    w, h = size
    frames_per_scene = 3 * fps
    scenes = [frames_per_scene] * max(1, int(seconds * fps) // frames_per_scene)
    for i in range(n):
        write_video(os.path.join(folder, f"video_{i:03d}.mp4"),
                    scene_frames(scenes, w, h, moving=True, offset=i), fps=fps)
    return n * len(scenes) * frames_per_scene / fps


def bench_split_extract_motion(folder: str, total_s: float, splitter: str, workers: int) -> dict:
    from curator import LocalExecutor, Pipeline
    from curator_video import (
        ClipFrameExtractionStage,
        FixedStrideSplitStage,
        MotionFilterStage,
        SceneCutSplitStage,
        VideoReaderStage,
    )

    split = (FixedStrideSplitStage(clip_len_s=5.0, clip_stride_s=5.0, min_clip_length_s=1.0)
             if splitter == "fixed" else SceneCutSplitStage(min_clip_length_s=1.0))
    stages = [VideoReaderStage(folder), split,
              ClipFrameExtractionStage(target_fps=2.0, target_res=(224, 224)),
              MotionFilterStage(method="frame_diff", global_mean_threshold=0.001)]
    t0 = time.perf_counter()
    result = Pipeline(f"bench-video-{splitter}", stages=stages).run(
        executor=LocalExecutor(cpus=workers))
    wall = time.perf_counter() - t0
    clips = sum(len(t.data.clips) for t in result)
    return {"stage": f"read+{splitter}_split+extract+motion", "videos": len(result),
            "video_s": round(total_s, 1), "clips_kept": clips, "wall_s": round(wall, 2),
            "video_s_per_s": round(total_s / wall, 2)}


def bench_embedding(folder: str, device: str, model_dir: str) -> dict:
    from curator import FileGroupTask, stable_id
    from curator_video import (
        ClipEmbeddingStage,
        ClipFrameExtractionStage,
        FixedStrideSplitStage,
        VideoMetadataStage,
    )

    tasks = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        (t,) = VideoMetadataStage().process(FileGroupTask(stable_id(path), "bench", [path]))
        t = FixedStrideSplitStage(clip_len_s=5.0).process(t)
        tasks.append(ClipFrameExtractionStage(num_frames=8).process(t))
    video_s = sum(c.duration for t in tasks for c in t.data.clips)
    stage = ClipEmbeddingStage(model_dir=model_dir, device=device)
    stage.setup()
    stage.process(tasks[0])                                # warm-up
    t0 = time.perf_counter()
    for t in tasks:
        stage.process(t)
    wall = time.perf_counter() - t0
    clips = sum(len(t.data.clips) for t in tasks)
    return {"stage": f"clip_embedding[{device}]", "clips": clips, "frames": clips * 8,
            "wall_s": round(wall, 2), "clips_per_s": round(clips / wall, 1),
            "video_s_per_s": round(video_s / wall, 1)}


def bench_transnetv2(folder: str, device: str, model_dir: str) -> dict:
    from curator import FileGroupTask, stable_id
    from curator_video import TransNetV2ClipExtractionStage, VideoMetadataStage
    from curator_video.decode import read_all_frames_av
    from curator_video.models.transnetv2 import INPUT_HW, transition_probabilities

    paths = [os.path.join(folder, n) for n in sorted(os.listdir(folder))]
    t0 = time.perf_counter()
    decoded = [read_all_frames_av(p, INPUT_HW[1], INPUT_HW[0])[0] for p in paths]
    decode_wall = time.perf_counter() - t0
    frames = sum(len(f) for f in decoded)
    stage = TransNetV2ClipExtractionStage(model_dir=model_dir, device=device)
    stage.setup()
    transition_probabilities(stage._model, decoded[0][:100], stage._device)   # warm-up
    t0 = time.perf_counter()
    for f in decoded:
        transition_probabilities(stage._model, f, stage._device)
    model_wall = time.perf_counter() - t0
    tasks = [VideoMetadataStage().process(FileGroupTask(stable_id(p), "bench", [p]))[0]
             for p in paths]
    t0 = time.perf_counter()
    clips = sum(len(stage.process(t).data.clips) for t in tasks)
    stage_wall = time.perf_counter() - t0
    return {"stage": f"transnetv2[{device}]", "frames": frames, "clips": clips,
            "decode_floor_fps": round(frames / decode_wall, 1),
            "model_fps": round(frames / model_wall, 1),
            "stage_fps": round(frames / stage_wall, 1)}


def on_cpu_and_cuda(bench: Callable[[str, str, str], dict], folder: str, model_dir: str,
                    what: str) -> list[dict]:
    """``bench(folder, device, model_dir)`` on the CPU, then on CUDA when torch sees a GPU (else
    a line saying that ``what`` was not measured)."""
    import torch

    rows = [bench(folder, "cpu", model_dir)]
    if torch.cuda.is_available():
        rows.append(bench(folder, "cuda", model_dir))
    else:
        print(f"no GPU in this environment: {what} was not measured", flush=True)
    return rows


def peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--size", default="320x240")
    parser.add_argument("--fps", type=int, default=24)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--skip-embedding", action="store_true")
    parser.add_argument("--skip-transnetv2", action="store_true")
    args = parser.parse_args()
    size = tuple(int(x) for x in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = os.path.join(tmp, "videos")
        os.makedirs(folder)
        t0 = time.perf_counter()
        total_s = make_corpus(folder, args.videos, args.seconds, size, args.fps)  # type: ignore[arg-type]
        print(f"corpus: {args.videos} videos, {total_s:.0f} s of {args.size} @ {args.fps} fps "
              f"(generated in {time.perf_counter() - t0:.1f}s); {args.workers} CPUs", flush=True)
        import av  # noqa: F401 - import the decoders before timing
        import decord  # noqa: F401
        rows = [bench_split_extract_motion(folder, total_s, s, args.workers)
                for s in ("fixed", "scene")]
        if not args.skip_embedding:
            from curator_image.testing import make_tiny_clip_model
            model = make_tiny_clip_model(os.path.join(tmp, "clip"))
            rows += on_cpu_and_cuda(bench_embedding, folder, model, "the CUDA embedding path")
        if not args.skip_transnetv2:
            from curator_video.testing import make_tiny_transnetv2
            model = make_tiny_transnetv2(os.path.join(tmp, "transnetv2"), F=16, D=1024)
            rows += on_cpu_and_cuda(bench_transnetv2, folder, model, "TransNetV2 on CUDA")
        for row in rows:
            print("  ".join(f"{k}={v}" for k, v in row.items()))
        print(f"peak RSS: {peak_rss_mb()} MB")


if __name__ == "__main__":
    sys.exit(main())
