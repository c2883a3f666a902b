"""Run-wide clip semantic dedup: core's workflow over the embeddings ClipWriterStage wrote."""

import glob
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest
from curator import Pipeline
from curator.dedup.workflow import read_id_table
from curator_video import (
    ClipEmbedder,
    ClipEmbeddingStage,
    ClipFrameExtractionStage,
    ClipSemanticDeduplicationWorkflow,
    ClipWriterStage,
    FixedStrideSplitStage,
    VideoReaderStage,
)
from curator_video.io.writer import EMBEDDINGS_PARQUET


class PixelEmbedder(ClipEmbedder):
    """Subsampled raw pixels: distinct for different content, equal for equal content."""

    def embed_clips(self, frames):
        return np.stack([f[:, ::8, ::8].ravel() for f in frames]).astype(np.float32)


@pytest.fixture(scope="module")
def written_run(video_dir, tmp_path_factory):
    """Three videos (a and b identical, c static) split into 1 s clips and written, each video
    in its own pipeline run so no in-pipeline batch ever sees two videos together."""
    src = tmp_path_factory.mktemp("dedup_src")
    shutil.copy(f"{video_dir}/moving.mp4", src / "a.mp4")
    shutil.copy(f"{video_dir}/moving.mp4", src / "b.mp4")
    shutil.copy(f"{video_dir}/static.mp4", src / "c.mp4")
    out = str(tmp_path_factory.mktemp("dedup_clips"))
    uuids = {}
    for name in ("a.mp4", "b.mp4", "c.mp4"):
        stages = [VideoReaderStage(str(src / name)), FixedStrideSplitStage(1.0),
                  ClipFrameExtractionStage(num_frames=3),
                  ClipEmbeddingStage(embedder=PixelEmbedder()),
                  ClipWriterStage(out, write_clips=False, mode="append")]
        Pipeline(f"write_{name}", stages=stages).run()
    for f in glob.glob(f"{out}/metadata/*.parquet"):
        t = pq.read_table(f)
        uuids[t.column("source_video")[0].as_py().rsplit("/", 1)[-1]] = \
            t.column("clip_uuid").to_pylist()
    return out, uuids


def test_writer_writes_one_embedding_table_per_video(written_run):
    out, uuids = written_run
    tables = [pq.read_table(f) for f in glob.glob(f"{out}/{EMBEDDINGS_PARQUET}/*.parquet")]
    assert len(tables) == 3 and all(t.column_names == ["id", "embedding"] for t in tables)
    assert sorted(i for t in tables for i in t.column("id").to_pylist()) == \
        sorted(u for us in uuids.values() for u in us)


def test_duplicates_are_found_across_all_clips_of_the_run(written_run, tmp_path):
    out, uuids = written_run
    assert [len(uuids[n]) for n in ("a.mp4", "b.mp4", "c.mp4")] == [3, 3, 3]
    result = ClipSemanticDeduplicationWorkflow(out, str(tmp_path / "dedup"), eps=1e-3,
                                               n_clusters=2, perform_removal=True).run()
    dups = set(read_id_table(result.duplicates_path).column("id").to_pylist())
    assert result.num_duplicates == len(dups) == 5
    # a and b are the same video: of each pair of equal clips exactly one is kept
    for a, b in zip(uuids["a.mp4"], uuids["b.mp4"], strict=True):
        assert (a in dups) != (b in dups)
    # c's three clips are identical: one survives
    assert sum(u in dups for u in uuids["c.mp4"]) == 2
    kept = {i for f in glob.glob(f"{tmp_path}/dedup/deduplicated/*.parquet")
            for i in pq.read_table(f).column("id").to_pylist()}
    assert len(kept) == 4 and not kept & dups


def test_config_errors(tmp_path):
    with pytest.raises(ValueError, match="clips_path"):
        ClipSemanticDeduplicationWorkflow(output_path=str(tmp_path))
    with pytest.raises(ValueError, match="eps"):
        ClipSemanticDeduplicationWorkflow(str(tmp_path), str(tmp_path / "o"), eps=5)
