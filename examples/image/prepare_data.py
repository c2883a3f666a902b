"""Create the example's tiny random-weight models and generated WebDataset shards if missing.

    uv run python examples/image/prepare_data.py [--root examples/image/data]
"""

from __future__ import annotations

import argparse
import os

from curator_image.testing import (
    TINY_CLIP_EMBED_DIM,
    make_tiny_aesthetic_model,
    make_tiny_clip_model,
    make_tiny_nsfw_model,
    make_webdataset_shards,
)

HERE = os.path.dirname(os.path.abspath(__file__))


def prepare(root: str = os.path.join(HERE, "data"), n_shards: int = 4,
            per_shard: int = 32) -> dict[str, str]:
    """Models under ``root/models``, shards under ``root/shards`` (each shard plants 2 exact
    duplicates). Returns their paths."""
    paths = {"clip": make_tiny_clip_model(os.path.join(root, "models", "clip")),
             "shards": os.path.join(root, "shards")}
    paths["aesthetic"] = make_tiny_aesthetic_model(os.path.join(root, "models", "aesthetic"),
                                                   TINY_CLIP_EMBED_DIM)
    paths["nsfw"] = make_tiny_nsfw_model(os.path.join(root, "models", "nsfw"),
                                         TINY_CLIP_EMBED_DIM)
    if not os.path.isdir(paths["shards"]):
        make_webdataset_shards(paths["shards"], n_shards=n_shards, per_shard=per_shard,
                               duplicates=2)
    return paths


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=os.path.join(HERE, "data"))
    paths = prepare(parser.parse_args().root)
    print("prepared the example's data and tiny models:")
    for name, path in paths.items():
        print(f"  {name:<10} {path}")
    print("next: uv run python examples/image/pipeline.py   or   "
          "uv run curator run examples/image/pipeline.yaml")
