"""Long-form audio cut into snippets for audio-language-model pretraining (NeMo Curator's
``stages/audio/alm/pretrain``): read a manifest of diarized long recordings, drop empty and
overlapping segments, plan snippet cuts, drop repetitive snippets, cut the snippets into tar
shards with manifest and metrics shards. :func:`build_audio_pretrain_pipeline` chains the stages;
:func:`finalize_audio_pretrain_outputs` merges the shards into the final files.

Records carry their counters under ``_pretrain_long_form`` and the plan under
``_snippet_plan`` (NeMo keeps the counters in the task's metadata, one record per task)."""

from curator_audio.stages.alm_pretrain.output import (
    PretrainMetricsAggregatorStage,
    SnippetExtractionStage,
    SnippetManifestWriterStage,
)
from curator_audio.stages.alm_pretrain.pipeline import (
    AudioPretrainFinalizeSummary,
    build_audio_pretrain_pipeline,
    finalize_audio_pretrain_outputs,
    prepare_audio_pretrain_outputs,
)
from curator_audio.stages.alm_pretrain.planning import (
    OverlapFilterStage,
    SnippetCutPlannerStage,
    SnippetRepetitionFilterStage,
    filter_empty_segments,
    find_overlapping_indices,
    plan_snippets,
    relativize_segments,
)
from curator_audio.stages.alm_pretrain.reader import ReadLongFormManifestStage
from curator_audio.stages.alm_pretrain.utils import make_snippet_id, resolve_audio_path

__all__ = ["ReadLongFormManifestStage", "OverlapFilterStage", "SnippetCutPlannerStage",
           "SnippetRepetitionFilterStage", "SnippetExtractionStage", "SnippetManifestWriterStage",
           "PretrainMetricsAggregatorStage", "filter_empty_segments", "find_overlapping_indices",
           "plan_snippets", "relativize_segments", "make_snippet_id", "resolve_audio_path",
           "build_audio_pretrain_pipeline", "prepare_audio_pretrain_outputs",
           "finalize_audio_pretrain_outputs", "AudioPretrainFinalizeSummary"]
