"""The curator-audio plugin: registers its stages through Curator's single ``curator_register``
hook (each stage's kind comes from its class).

Importing this module is cheap: stage modules are imported inside the hook, and those import
soundfile / torch / torchaudio only when a stage runs.
"""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl
from curator.plugins.migration import MigrationRules

__all__ = ["curator_migrate_rules", "curator_register"]


@hookimpl
def curator_register(register: Register) -> None:
    from curator_audio.io.directory import AudioDirectoryReader
    from curator_audio.io.manifest import ManifestReader, ManifestWriterStage
    from curator_audio.stages.asr import ASRStage
    from curator_audio.stages.decode import AudioDecodeStage, GetAudioDurationStage
    from curator_audio.stages.filters import PreserveByValueStage
    from curator_audio.stages.quality import (
        AudioClippingStage,
        AudioRMSStage,
        AudioSilenceFractionStage,
        AudioSNRStage,
    )
    from curator_audio.stages.segment import AudioSegmentationStage
    from curator_audio.stages.squim import (
        TorchSquimQualityFilterStage,
        TorchSquimQualityMetricsStage,
    )
    from curator_audio.stages.wer import GetPairwiseWerStage

    for cls in (ManifestReader, AudioDirectoryReader, ManifestWriterStage, PreserveByValueStage,
                TorchSquimQualityFilterStage, ASRStage, TorchSquimQualityMetricsStage,
                AudioDecodeStage, GetAudioDurationStage, AudioRMSStage, AudioClippingStage,
                AudioSilenceFractionStage, AudioSNRStage, AudioSegmentationStage,
                GetPairwiseWerStage):
        register(cls, modality="audio")
    from curator_audio.stages.alm import ALMDataBuilderStage, ALMDataOverlapStage
    from curator_audio.stages.alm_pretrain import (
        OverlapFilterStage,
        PretrainMetricsAggregatorStage,
        ReadLongFormManifestStage,
        SnippetCutPlannerStage,
        SnippetExtractionStage,
        SnippetManifestWriterStage,
        SnippetRepetitionFilterStage,
    )
    from curator_audio.stages.audio_data_filter import AudioDataFilterStage
    from curator_audio.stages.band import BandFilterStage
    from curator_audio.stages.bandwidth import BandwidthEstimationStage
    from curator_audio.stages.compute_wer import ComputeWERStage
    from curator_audio.stages.convert import AudioToDocumentStage
    from curator_audio.stages.datasets import (
        CreateInitialManifestFleursStage,
        CreateInitialManifestReadSpeechStage,
    )
    from curator_audio.stages.extract_segments import SegmentExtractionStage
    from curator_audio.stages.mos import SIGMOSFilterStage, UTMOSFilterStage
    from curator_audio.stages.preprocessing import (
        MonoConversionStage,
        ResampleAudioStage,
        SegmentConcatenationStage,
    )
    from curator_audio.stages.text_filtering import WhisperHallucinationStage
    from curator_audio.stages.timestamp_mapper import TimestampMapperStage
    from curator_audio.stages.vad_segmentation import VADSegmentationStage

    for cls in (VADSegmentationStage, MonoConversionStage, ResampleAudioStage,
                SegmentConcatenationStage, TimestampMapperStage, SegmentExtractionStage,
                BandwidthEstimationStage, BandFilterStage, UTMOSFilterStage, SIGMOSFilterStage,
                AudioDataFilterStage, ComputeWERStage, WhisperHallucinationStage,
                ALMDataBuilderStage, ALMDataOverlapStage, AudioToDocumentStage,
                CreateInitialManifestFleursStage, CreateInitialManifestReadSpeechStage,
                ReadLongFormManifestStage, OverlapFilterStage, SnippetCutPlannerStage,
                SnippetRepetitionFilterStage, SnippetExtractionStage, SnippetManifestWriterStage,
                PretrainMetricsAggregatorStage):
        register(cls, modality="audio")
    from curator_audio.tasks import AudioBatch

    register(AudioBatch, modality="audio", kind="task")  # stored as its waveforms + JSON


@hookimpl
def curator_migrate_rules() -> MigrationRules:
    from curator_audio.migration import MIGRATION_RULES

    return MIGRATION_RULES
