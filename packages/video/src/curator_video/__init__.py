"""curator-video: video curation stages for Curator.

read (``VideoReaderStage``) → split (``FixedStrideSplitStage`` / ``SceneCutSplitStage`` /
``TransNetV2ClipExtractionStage``) →
extract frames (``ClipFrameExtractionStage``) → filter (``MotionFilterStage``,
``ClipAestheticFilterStage``) → embed (``ClipEmbeddingStage``) → dedup
(``ClipSemanticDedupStage``) → encode (``ClipTranscodingStage``) → write (``ClipWriterStage``).
Heavy libraries (PyAV, decord, torch) are imported only when a stage runs.
"""

from curator_video.caption.stage import CaptionGenerationStage
from curator_video.embed.dedup import ClipSemanticDedupStage
from curator_video.embed.embedders import ClipEmbedder, FrameMeanClipEmbedder
from curator_video.embed.stage import ClipEmbeddingStage
from curator_video.embed.workflow import ClipSemanticDeduplicationWorkflow
from curator_video.filters.aesthetic import ClipAestheticFilterStage
from curator_video.filters.motion import MotionFilterStage
from curator_video.frames import ClipFrameExtractionStage, FrameExtractionPolicy, FramePurpose
from curator_video.io.reader import (
    VideoListStage,
    VideoMetadataStage,
    VideoReader,
    VideoReaderStage,
)
from curator_video.io.writer import ClipWriterStage
from curator_video.split.detectors import HistogramSceneDetector, SceneDetector
from curator_video.split.fixed_stride import FixedStrideExtractorStage, FixedStrideSplitStage
from curator_video.split.scene import SceneCutSplitStage
from curator_video.split.transnetv2 import TransNetV2ClipExtractionStage
from curator_video.tasks import Clip, Video, VideoMetadata, VideoTask
from curator_video.transcode import ClipTranscodingStage

__all__ = [
    "Clip", "Video", "VideoMetadata", "VideoTask",
    "VideoReaderStage", "VideoReader", "VideoListStage", "VideoMetadataStage",
    "FixedStrideSplitStage", "FixedStrideExtractorStage", "SceneCutSplitStage",
    "TransNetV2ClipExtractionStage",
    "SceneDetector", "HistogramSceneDetector",
    "ClipFrameExtractionStage", "FrameExtractionPolicy", "FramePurpose", "MotionFilterStage", "ClipAestheticFilterStage",
    "ClipEmbedder", "FrameMeanClipEmbedder", "ClipEmbeddingStage", "ClipSemanticDedupStage",
    "ClipSemanticDeduplicationWorkflow",
    "CaptionGenerationStage", "ClipTranscodingStage", "ClipWriterStage",
]
