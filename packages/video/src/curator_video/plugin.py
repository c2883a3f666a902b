"""The curator-video plugin: registers its stages through Curator's hooks.

Importing this module is cheap: stage classes are imported inside the hooks, and they import
PyAV, decord and torch only when they run.
"""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl


@hookimpl
def curator_register_readers(register: Register) -> None:
    from curator_video.io.reader import VideoReaderStage
    register(VideoReaderStage, modality="video")


@hookimpl
def curator_register_writers(register: Register) -> None:
    from curator_video.io.writer import ClipWriterStage
    register(ClipWriterStage, modality="video")


@hookimpl
def curator_register_filters(register: Register) -> None:
    from curator_video.filters.aesthetic import ClipAestheticFilterStage
    from curator_video.filters.motion import MotionFilterStage
    register(MotionFilterStage, modality="video")
    register(ClipAestheticFilterStage, modality="video")


@hookimpl
def curator_register_embedders(register: Register) -> None:
    from curator_video.embed.stage import ClipEmbeddingStage
    register(ClipEmbeddingStage, modality="video")


@hookimpl
def curator_register_deduplicators(register: Register) -> None:
    from curator_video.embed.dedup import ClipSemanticDedupStage
    from curator_video.embed.workflow import ClipSemanticDeduplicationWorkflow
    register(ClipSemanticDedupStage, modality="video")
    register(ClipSemanticDeduplicationWorkflow, modality="video")


@hookimpl
def curator_register_stages(register: Register) -> None:
    from curator_video.caption.stage import CaptionGenerationStage
    from curator_video.frames import ClipFrameExtractionStage
    from curator_video.io.reader import VideoListStage, VideoMetadataStage
    from curator_video.split.fixed_stride import FixedStrideSplitStage
    from curator_video.split.scene import SceneCutSplitStage
    from curator_video.split.transnetv2 import TransNetV2ClipExtractionStage
    from curator_video.transcode import ClipTranscodingStage
    for cls in (VideoListStage, VideoMetadataStage, FixedStrideSplitStage, SceneCutSplitStage,
                TransNetV2ClipExtractionStage, ClipFrameExtractionStage, ClipTranscodingStage,
                CaptionGenerationStage):
        register(cls, modality="video")
