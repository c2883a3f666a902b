"""Image pipeline throughput and memory.

    uv run python benchmarks/image.py [--images 512] [--size 256] [--workdir /tmp/curator-bench]

Reports images/s for (1) read + decode alone (the floor every pipeline pays), (2) the whole CPU
pipeline (read -> tiny CLIP embed -> aesthetic -> NSFW -> write) and peak RSS. When CUDA is
present it also measures (3) a CLIP ViT-L/14-sized random-weight model on the GPU, fed by CPU
decoding through the streaming executor, with the GPU stage's busy fraction. Without CUDA (3) is
skipped and says so. (4) on the CPU, a ViT-B/32-sized random CLIP embeds ``--base-images``
images beside the decode floor of (1). Numbers are noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import time

os.environ.setdefault("CURATOR_SUMMARY", "0")


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run(stages) -> tuple[float, object]:
    from curator import Pipeline

    start = time.perf_counter()
    result = Pipeline("bench", stages=stages).run()
    return time.perf_counter() - start, result


def _count(result) -> int:
    return sum(len(t.data) for t in result)


def make_vit_l14(path: str, base: bool = False) -> str:
    """A CLIP ViT-L/14-sized vision tower with random weights (224px, 24 layers, 1024 wide);
    ``base``: ViT-B/32-sized (12 layers, 768 wide, patch 32)."""
    if os.path.isfile(os.path.join(path, "config.json")):
        return path
    from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModelWithProjection

    cfg = CLIPVisionConfig(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24,
                           num_attention_heads=16, image_size=224, patch_size=14,
                           projection_dim=768) if not base else CLIPVisionConfig(
        hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
        image_size=224, patch_size=32, projection_dim=512)
    CLIPVisionModelWithProjection(cfg).save_pretrained(path)
    CLIPImageProcessor(size={"shortest_edge": 224},
                       crop_size={"height": 224, "width": 224}).save_pretrained(path)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--images", type=int, default=512)
    parser.add_argument("--per-shard", type=int, default=64)
    parser.add_argument("--base-images", type=int, default=64,
                        help="images for the CPU ViT-B/32-sized embedding (0: skip)")
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--gpu-images", type=int, default=4096)
    parser.add_argument("--workdir", default="/tmp/curator-image-bench")
    args = parser.parse_args()

    from curator_image import (
        ImageAestheticFilterStage,
        ImageEmbeddingStage,
        ImageNSFWFilterStage,
        ImageReaderStage,
        ImageWriterStage,
    )
    from curator_image.testing import (
        TINY_CLIP_EMBED_DIM,
        make_tiny_aesthetic_model,
        make_tiny_clip_model,
        make_tiny_nsfw_model,
        make_webdataset_shards,
    )

    wd = args.workdir
    shards_dir = os.path.join(wd, f"shards_{args.images}_{args.size}")
    if not os.path.isdir(shards_dir):
        make_webdataset_shards(shards_dir, n_shards=max(1, args.images // args.per_shard),
                               per_shard=args.per_shard, size=(args.size, args.size))
    clip = make_tiny_clip_model(os.path.join(wd, "clip"))
    aes = make_tiny_aesthetic_model(os.path.join(wd, "aes"), TINY_CLIP_EMBED_DIM)
    nsfw = make_tiny_nsfw_model(os.path.join(wd, "nsfw"), TINY_CLIP_EMBED_DIM)

    secs, res = _run([ImageReaderStage(shards_dir, task_batch_size=64)])
    n = _count(res)
    print(f"read+decode ({args.size}px JPEG): {n} images in {secs:.2f}s = {n / secs:.0f} images/s")

    out = os.path.join(wd, "out")
    shutil.rmtree(out, ignore_errors=True)
    secs, res = _run([ImageReaderStage(shards_dir, task_batch_size=64),
                      ImageEmbeddingStage(model_dir=clip, model_inference_batch_size=64,
                                          remove_image_data=True),
                      ImageAestheticFilterStage(model_dir=aes, score_threshold=-1e9),
                      ImageNSFWFilterStage(model_dir=nsfw, score_threshold=1.0),
                      ImageWriterStage(output_dir=out)])
    print(f"whole CPU pipeline (tiny CLIP): {n} images in {secs:.2f}s = {n / secs:.0f} images/s")
    if args.base_images:
        vit_b = make_vit_l14(os.path.join(wd, "vit_b32"), base=True)
        base_dir = os.path.join(wd, f"base_shards_{args.base_images}_{args.size}")
        if not os.path.isdir(base_dir):
            make_webdataset_shards(base_dir, n_shards=1, per_shard=args.base_images,
                                   size=(args.size, args.size))
        secs, res = _run([ImageReaderStage(base_dir, task_batch_size=32),
                          ImageEmbeddingStage(model_dir=vit_b, model_inference_batch_size=32,
                                              remove_image_data=True)])
        print(f"CPU ViT-B/32 embedding (read+decode+preprocess+forward): {_count(res)} images in "
              f"{secs:.2f}s = {_count(res) / secs:.1f} images/s")
    print(f"peak RSS: {_peak_rss_mb():.0f} MiB")

    import torch

    if not torch.cuda.is_available():
        print("GPU benchmark: NOT RUN (no CUDA device on this machine)")
        return
    gpu_shards = os.path.join(wd, f"gpu_shards_{args.gpu_images}")
    if not os.path.isdir(gpu_shards):
        make_webdataset_shards(gpu_shards, n_shards=max(1, args.gpu_images // 256),
                               per_shard=256, size=(args.size, args.size))
    vit = make_vit_l14(os.path.join(wd, "vit_l14"))
    embed = ImageEmbeddingStage(model_dir=vit, model_inference_batch_size=256,
                                num_gpus_per_worker=1.0, remove_image_data=True)
    ImageEmbeddingStage(model_dir=vit, num_gpus_per_worker=1.0).model().embed(  # warm-up
        [__import__("numpy").zeros((224, 224, 3), "uint8")] * 8)
    from curator import Pipeline

    start = time.perf_counter()
    result = Pipeline("gpu", stages=[ImageReaderStage(gpu_shards, task_batch_size=256,
                                                      num_threads=8), embed]).run()
    secs = time.perf_counter() - start
    n = _count(result)
    busy = sum(s.busy_s for s in result.stats.stages if s.name == "ImageEmbeddingStage")
    print(f"GPU ViT-L/14 embedding: {n} images in {secs:.2f}s = {n / secs:.0f} images/s; "
          f"GPU stage busy {busy / secs:.0%} of the run")


if __name__ == "__main__":
    main()
