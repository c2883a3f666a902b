"""MINT-1T shards -> filters -> image dedup -> Parquet, on generated shards.

    uv run python examples/interleaved/shards_to_parquet.py [WORKDIR]

Generates a few MINT-1T style shards (``curator_interleaved.testing``), then:

1. first pass: read the shards and find the duplicate images across documents (exact by
   content hash; near by CLIP embedding when ``--clip DIR`` names a local CLIP model);
2. second pass: read -> aspect-ratio filter -> image-to-text ratio filter -> duplicate removal
   -> interleaved Parquet, with every removed row in the rejected sink (``split=True``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from curator import Pipeline
from curator_interleaved import (
    InterleavedAspectRatioFilterStage,
    InterleavedImageToTextRatioFilterStage,
    InterleavedParquetWriterStage,
    InterleavedWebdatasetReader,
)
from curator_interleaved.dedup import InterleavedImageDuplicateRemovalStage, find_image_duplicates
from curator_interleaved.testing import make_mint_shards


def main(workdir: str, clip_dir: str | None = None) -> dict:
    shards = os.path.join(workdir, "shards")
    make_mint_shards(shards, n_shards=3, docs_per_shard=6, seed=7)
    read = InterleavedWebdatasetReader(file_paths=shards, fields=("url",))
    first = Pipeline("find_duplicates", stages=[read]).run(summary=False)
    duplicates = find_image_duplicates(first, model_dir=clip_dir)
    out = os.path.join(workdir, "parquet")
    result = Pipeline("shards_to_parquet", stages=[
        InterleavedWebdatasetReader(file_paths=shards, fields=("url",)),
        InterleavedImageDuplicateRemovalStage(duplicates=duplicates, split=True),
        InterleavedAspectRatioFilterStage(min_aspect_ratio=0.5, max_aspect_ratio=2.5, split=True),
        InterleavedImageToTextRatioFilterStage(max_ratio=0.2, split=True),
        InterleavedParquetWriterStage(path=out),
    ]).run(rejected_dir=os.path.join(workdir, "rejected"), summary=False)
    files = sorted(f for f in os.listdir(out) if f.endswith(".parquet"))
    print(f"{len(duplicates)} duplicate images; wrote {len(files)} Parquet files to {out}; "
          f"rejected: {result.rejected.counts}")
    return {"result": result, "duplicates": duplicates, "files": files, "out": out}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workdir", nargs="?", default=None)
    parser.add_argument("--clip", default=None, help="a local CLIP directory for near dedup")
    args = parser.parse_args()
    main(args.workdir or tempfile.mkdtemp(prefix="interleaved-"), args.clip)
    sys.exit(0)
