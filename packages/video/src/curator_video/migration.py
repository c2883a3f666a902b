"""curator-video's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim."""

from __future__ import annotations

from curator.plugins.migration import CORE_MODULES, MigrationRules

__all__ = ["MIGRATION_RULES"]

_CORE = CORE_MODULES

MIGRATION_RULES = MigrationRules(
    modules=(
        ("nemo_curator.stages.video", ("curator_video", "curator_image", *_CORE)),
        ("nemo_curator.tasks", ("curator_video",)),
        ("nemo_curator.utils", ("curator_video",)),
        # FrameExtractionPolicy and FramePurpose map; the rest of the module is not offered
        ("nemo_curator.utils.decoder_utils", ("curator_video",)),
        ("nemo_curator.models.base", ("curator_video.models.base",)),
    ),
    shim={"nemo_curator.models.base": ("curator_video.models.base",)},
    not_offered={
        "nemo_curator.utils.decoder_utils": "NeMo's video decoding internals; curator_video "
                                            "decodes on its own",
        "nemo_curator.stages.video.clipping.video_frame_extraction.VideoFrameExtractionStage":
            "curator_video's TransNetV2ClipExtractionStage decodes the small frames it scores "
            "itself: drop this stage from the pipeline",
        "nemo_curator.stages.video.filtering.motion_filter.MotionVectorDecodeStage":
            "curator_video's MotionFilterStage scores motion from the extracted frames, not "
            "from H.264 motion vectors: drop this stage and run ClipFrameExtractionStage before "
            "MotionFilterStage",
        "nemo_curator.stages.video.preview.preview.PreviewStage":
            "previews are written by ClipWriterStage(generate_previews=True) (a JPEG of each "
            "clip's middle frame, not an animated WebP)",
        "nemo_curator.stages.video.caption.caption_preparation.CaptionPreparationStage":
            "curator_video's CaptionGenerationStage prepares the caption windows and frames "
            "itself: drop this stage",
    },
)
