"""The video curation pipeline in Python (run from the repository root):

    uv run python examples/video/pipeline.py [--output examples/video/output/python]

read → split at scene cuts → extract frames → motion filter → aesthetic filter → CLIP clip
embeddings → semantic dedup of clips → encode clips (libx264) → write clips, metadata, previews.
Data and tiny models are generated first if missing (see prepare_data.py); the corrupt video is
rejected into ``{output}/rejected``.
"""

from __future__ import annotations

import argparse
import os
import sys

from curator import Pipeline
from curator_video import (
    ClipAestheticFilterStage,
    ClipEmbeddingStage,
    ClipFrameExtractionStage,
    ClipSemanticDedupStage,
    ClipTranscodingStage,
    ClipWriterStage,
    MotionFilterStage,
    SceneCutSplitStage,
    VideoReaderStage,
)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare_data import HERE, prepare


def build(paths: dict[str, str], output: str) -> Pipeline:
    return Pipeline("video_curation", description="Split, filter, embed, dedup and write clips",
                    stages=[
        VideoReaderStage(input_video_path=paths["videos"]),
        SceneCutSplitStage(threshold=0.35, min_clip_length_s=1.0, max_clip_length_s=3.0),
        ClipFrameExtractionStage(target_fps=2.0),
        MotionFilterStage(method="frame_diff", global_mean_threshold=0.004),
        ClipAestheticFilterStage(model_dir=paths["clip"], aesthetic_model_dir=paths["aesthetic"],
                                 score_threshold=-1e9, reduction="mean"),  # random tiny model
        ClipEmbeddingStage(model_dir=paths["clip"]),
        ClipSemanticDedupStage(eps=0.001, n_clusters=4),
        ClipTranscodingStage(encoder="libx264", bit_rate=300_000),
        ClipWriterStage(output_path=os.path.join(output, "dataset"), generate_previews=True,
                        mode="overwrite"),
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description="video curation example")
    parser.add_argument("--output", default=os.path.join(HERE, "output", "python"))
    args = parser.parse_args()
    paths = prepare()
    result = build(paths, args.output).run(rejected_dir=os.path.join(args.output, "rejected"),
                                           raise_on_failure=False)
    files = [f for t in result for f in t.data]
    print(f"{len(result)} videos, {sum(f.endswith('.mp4') for f in files)} clips written to "
          f"{args.output}/dataset; rejected: "
          + (", ".join(f"{n} by {s}" for s, n in result.rejected.counts.items()) or "none"))
    sys.exit(0 if result.ok else 1)


if __name__ == "__main__":
    main()
