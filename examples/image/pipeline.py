"""The NeMo Curator image curation pipeline on generated shards and tiny random models:
read -> CLIP embed -> aesthetic filter -> NSFW filter -> exact + semantic dedup -> write.

    uv run python examples/image/pipeline.py [--root DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from curator_image import (
    ImageAestheticFilterStage,
    ImageEmbeddingStage,
    ImageNSFWFilterStage,
    ImageReaderStage,
    ImageSemanticDeduplicationWorkflow,
)
from prepare_data import HERE, prepare


def main(root: str = os.path.join(HERE, "data"), out: str = os.path.join(HERE, "output"),
         aesthetic_threshold: float = -1e9, nsfw_threshold: float = 0.9):
    paths = prepare(root)
    read_stage = ImageReaderStage(file_paths=paths["shards"], task_batch_size=32, num_threads=4)
    img_embedding_stage = ImageEmbeddingStage(model_dir=paths["clip"],
                                              model_inference_batch_size=32,
                                              remove_image_data=True)
    aesthetic_filter_stage = ImageAestheticFilterStage(model_dir=paths["aesthetic"],
                                                       score_threshold=aesthetic_threshold)
    nsfw_filter_stage = ImageNSFWFilterStage(model_dir=paths["nsfw"],
                                             score_threshold=nsfw_threshold)
    workflow = ImageSemanticDeduplicationWorkflow(
        stages=[read_stage, img_embedding_stage, aesthetic_filter_stage, nsfw_filter_stage],
        output_dir=os.path.join(out, "dataset"), work_dir=os.path.join(out, "work"),
        eps=1e-4, n_clusters=4)
    result = workflow.run(rejected_dir=os.path.join(out, "rejected"))
    print(f"{result.n_images} images after filters, {len(result.removed)} duplicates removed, "
          f"{len(result.output_files)} files in {out}/dataset; rejected: "
          + (", ".join(f"{n} by {s}" for s, n in result.rejected_counts.items()) or "none"))
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=os.path.join(HERE, "data"))
    parser.add_argument("--out", default=os.path.join(HERE, "output"))
    args = parser.parse_args()
    main(args.root, args.out)
