import json
import os

import numpy as np
import pyarrow.parquet as pq
import pytest
from curator import Pipeline
from curator.testing import check_stage_contract
from curator_video import (
    ClipFrameExtractionStage,
    ClipTranscodingStage,
    ClipWriterStage,
    FixedStrideSplitStage,
    VideoReaderStage,
)


def listing(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs if not f.startswith("."))


def run(video_dir, out, mode="error"):
    stages = [VideoReaderStage([f"{video_dir}/moving.mp4", f"{video_dir}/scenes.mp4"]),
              FixedStrideSplitStage(2.0, min_clip_length_s=0.5),
              ClipFrameExtractionStage(num_frames=2), ClipTranscodingStage(),
              ClipWriterStage(str(out), generate_previews=True, mode=mode)]
    return Pipeline("write", stages=stages).run()


def test_writes_clips_records_previews_and_parquet_deterministically(video_dir, tmp_path):
    result = run(video_dir, tmp_path)
    files = listing(tmp_path)
    assert sorted(os.path.relpath(f, tmp_path) for t in result for f in t.data) == files
    clips = [f for f in files if f.startswith("clips/")]
    assert len(clips) == 2 + 2                       # 3 s and 4 s videos, 2 s clips
    assert len([f for f in files if f.startswith("previews/")]) == 4
    assert len([f for f in files if f.startswith("metadata/")]) == 2
    uuid = clips[0].split("/")[1][:-4]
    rec = json.loads((tmp_path / "metas" / f"{uuid}.json").read_text())
    assert rec["clip_uuid"] == uuid and rec["span_end"] > rec["span_start"]
    assert rec["video_codec"] == "h264" and rec["num_frames"] == 2
    table = pq.read_table(tmp_path / "metadata").to_pylist()
    assert sorted(r["clip_uuid"] for r in table) == sorted(c.split("/")[1][:-4] for c in clips)
    # a re-run overwrites the same names: nothing duplicated, no temporary file left behind
    run(video_dir, tmp_path, mode="overwrite")
    assert listing(tmp_path) == files


def test_embeddings_written_as_npy(load_video, tmp_path):
    task = FixedStrideSplitStage(1.5).process(load_video("static.mp4"))
    for i, clip in enumerate(task.data.clips):
        clip.embedding = np.full(4, i, np.float32)
    out = ClipWriterStage(str(tmp_path), metadata_format="json").process(task)
    npys = sorted(f for f in out.data if f.endswith(".npy"))
    assert len(npys) == 2 and {float(np.load(f)[0]) for f in npys} == {0.0, 1.0}
    # one embedding table per video (the input of ClipSemanticDeduplicationWorkflow), and no
    # metadata table with metadata_format="json"
    (table,) = [f for f in out.data if f.endswith(".parquet")]
    assert f"/embeddings_parquet/{task.task_id}.parquet" in table
    rows = pq.read_table(table).to_pylist()
    assert [r["id"] for r in rows] == [c.uuid for c in task.data.clips]
    assert [r["embedding"] for r in rows] == [[0.0] * 4, [1.0] * 4]


def test_config_errors():
    with pytest.raises(ValueError, match="ClipWriterStage: output_path"):
        ClipWriterStage()
    with pytest.raises(ValueError, match="metadata_format"):
        ClipWriterStage("/tmp/x", metadata_format="xml")


def test_contract(load_video, tmp_path):
    check_stage_contract(ClipWriterStage(str(tmp_path)),
                         FixedStrideSplitStage(1.0).process(load_video("moving.mp4")))
