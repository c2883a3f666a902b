"""The curator-video plugin: registers its stages through Curator's single ``curator_register``
hook (each stage's kind comes from its class).

Importing this module is cheap: stage classes are imported inside the hook, and they import
PyAV, decord and torch only when they run.
"""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl
from curator.plugins.migration import MigrationRules

__all__ = ["curator_migrate_rules", "curator_register"]


@hookimpl
def curator_register(register: Register) -> None:
    from curator_video.caption.stage import CaptionGenerationStage
    from curator_video.embed.dedup import ClipSemanticDedupStage
    from curator_video.embed.stage import ClipEmbeddingStage
    from curator_video.embed.workflow import ClipSemanticDeduplicationWorkflow
    from curator_video.filters.aesthetic import ClipAestheticFilterStage
    from curator_video.filters.motion import MotionFilterStage
    from curator_video.frames import ClipFrameExtractionStage
    from curator_video.io.reader import (
        VideoListStage,
        VideoMetadataStage,
        VideoReader,
        VideoReaderStage,
    )
    from curator_video.io.writer import ClipWriterStage
    from curator_video.split.fixed_stride import FixedStrideSplitStage
    from curator_video.split.scene import SceneCutSplitStage
    from curator_video.split.transnetv2 import TransNetV2ClipExtractionStage
    from curator_video.transcode import ClipTranscodingStage

    for cls in (VideoReaderStage, ClipWriterStage, MotionFilterStage, ClipAestheticFilterStage,
                ClipEmbeddingStage, ClipSemanticDedupStage, VideoListStage, VideoMetadataStage,
                FixedStrideSplitStage, SceneCutSplitStage, TransNetV2ClipExtractionStage,
                ClipFrameExtractionStage, ClipTranscodingStage, CaptionGenerationStage,
                VideoReader):
        register(cls, modality="video")
    register(ClipSemanticDeduplicationWorkflow, modality="video", kind="deduplicator")
    from curator_video.tasks import VideoTask

    register(VideoTask, modality="video", kind="task")  # stored as its clip files + JSON


@hookimpl
def curator_migrate_rules() -> MigrationRules:
    from curator_video.migration import MIGRATION_RULES

    return MIGRATION_RULES
