import json
import subprocess
import sys

import curator_video
from curator.plugins.manager import build_registry

HEAVY = ["torch", "av", "decord", "transformers", "curator_image", "PIL", "ray"]


def test_importing_plugin_and_package_imports_no_heavy_library():
    code = ("import sys, json, curator_video.plugin, curator_video; "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_every_public_stage_is_registered_by_the_plugin():
    registry = build_registry()
    names = {e.name: e for e in registry.list(modality="video")}
    for cls in ["VideoReaderStage", "FixedStrideSplitStage", "SceneCutSplitStage",
                "ClipFrameExtractionStage", "MotionFilterStage", "ClipAestheticFilterStage",
                "ClipEmbeddingStage", "ClipSemanticDedupStage", "ClipTranscodingStage",
                "ClipWriterStage", "TransNetV2ClipExtractionStage", "CaptionGenerationStage",
                "ClipSemanticDeduplicationWorkflow"]:
        assert cls in names, cls
        assert cls in curator_video.__all__
    assert names["VideoReaderStage"].kind == "reader"
    assert names["ClipWriterStage"].kind == "writer"
    assert names["MotionFilterStage"].kind == "filter"
    assert names["ClipSemanticDeduplicationWorkflow"].kind == "deduplicator"


def test_all_names_exist():
    for name in curator_video.__all__:
        assert getattr(curator_video, name) is not None
