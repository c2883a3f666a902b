"""The YAML example builds through the spec loader and runs end to end on the test videos."""

from __future__ import annotations

import os

from curator.spec import load_spec, pipeline_from_spec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = os.path.join(ROOT, "examples", "video", "pipeline.yaml")


def test_yaml_spec_runs_every_stage_on_generated_videos(video_dir, tiny_models, tmp_path):
    spec = load_spec(SPEC)
    stages = spec["stages"]
    stages[0]["input_video_path"] = video_dir
    for item in stages:
        if "model_dir" in item:
            item["model_dir"] = tiny_models[0]
        if "aesthetic_model_dir" in item:
            item["aesthetic_model_dir"] = tiny_models[1]
    stages[-1]["output_path"] = str(tmp_path / "dataset")
    pipeline = pipeline_from_spec(spec)
    result = pipeline.run(rejected_dir=str(tmp_path / "rejected"))
    assert result.rejected.counts == {"VideoMetadataStage": 1}          # corrupt.mp4
    written = [f for t in result for f in t.data]
    clips = [f for f in written if f.endswith(".mp4")]
    assert clips and all(os.path.getsize(f) > 0 for f in clips)
    assert len([f for f in written if f.endswith(".json")]) == len(clips)
    assert len([f for f in written if f.endswith(".jpg")]) == len(clips)
