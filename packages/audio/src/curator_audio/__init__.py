"""curator-audio: speech-data curation for Curator.

Read a manifest (or a folder of audio) → decode → measure → transcribe → score against the
reference text → filter → write. Heavy libraries (soundfile, torch, torchaudio) are imported only
when a stage runs.

Every name is imported on first use (:func:`curator._lazy.lazy_exports`); :data:`STAGES` is the
one list of the stages the plugin registers.
"""

from curator._lazy import lazy_exports

STAGES: dict[str, tuple[str, ...]] = {
    "curator_audio.io.manifest": ("ManifestReader", "ManifestWriterStage"),
    "curator_audio.io.directory": ("AudioDirectoryReader",),
    "curator_audio.stages.filters": ("PreserveByValueStage",),
    "curator_audio.stages.asr": ("ASRStage",),
    "curator_audio.stages.squim": ("TorchSquimQualityFilterStage", "TorchSquimQualityMetricsStage"),
    "curator_audio.stages.decode": ("AudioDecodeStage", "GetAudioDurationStage"),
    "curator_audio.stages.quality":
        ("AudioRMSStage", "AudioClippingStage", "AudioSilenceFractionStage", "AudioSNRStage"),
    "curator_audio.stages.segment": ("AudioSegmentationStage",),
    "curator_audio.stages.wer": ("GetPairwiseWerStage",),
    "curator_audio.stages.vad_segmentation": ("VADSegmentationStage",),
    "curator_audio.stages.preprocessing":
        ("MonoConversionStage", "ResampleAudioStage", "SegmentConcatenationStage"),
    "curator_audio.stages.timestamp_mapper": ("TimestampMapperStage",),
    "curator_audio.stages.extract_segments": ("SegmentExtractionStage",),
    "curator_audio.stages.bandwidth": ("BandwidthEstimationStage",),
    "curator_audio.stages.band": ("BandFilterStage",),
    "curator_audio.stages.mos": ("UTMOSFilterStage", "SIGMOSFilterStage"),
    "curator_audio.stages.audio_data_filter": ("AudioDataFilterStage",),
    "curator_audio.stages.compute_wer": ("ComputeWERStage",),
    "curator_audio.stages.text_filtering": ("WhisperHallucinationStage",),
    "curator_audio.stages.alm": ("ALMDataBuilderStage", "ALMDataOverlapStage"),
    "curator_audio.stages.convert": ("AudioToDocumentStage",),
    "curator_audio.stages.datasets":
        ("CreateInitialManifestFleursStage", "CreateInitialManifestReadSpeechStage"),
    "curator_audio.stages.alm_pretrain":
        ("ReadLongFormManifestStage", "OverlapFilterStage", "SnippetCutPlannerStage",
         "SnippetRepetitionFilterStage", "SnippetExtractionStage", "SnippetManifestWriterStage",
         "PretrainMetricsAggregatorStage"),
}
"""Module -> the stage classes in it that the curator-audio plugin registers."""

_EXPORTS = {
    **{name: module for module, names in STAGES.items() for name in names},
    **dict.fromkeys(["ASRModel", "get_asr_model", "register_asr_model", "registered_asr_models"],
                    "curator_audio.asr"),
    **dict.fromkeys(["AudioDecodeError", "audio_info", "load_audio", "resample"],
                    "curator_audio.decode"),
    **dict.fromkeys(["char_error_rate", "edit_distance", "normalize_text", "word_error_rate"],
                    "curator_audio.metrics"),
    **dict.fromkeys(["build_audio_pretrain_pipeline", "prepare_audio_pretrain_outputs",
                     "finalize_audio_pretrain_outputs", "AudioPretrainFinalizeSummary"],
                    "curator_audio.stages.alm_pretrain.pipeline"),
    "AudioRecordStage": "curator_audio.stages.base",
    "AudioMeasureStage": "curator_audio.stages.quality",
    "AudioBatch": "curator_audio.tasks",
}

__all__ = [
    "AudioBatch", "ManifestReader", "ManifestWriterStage", "AudioDirectoryReader",
    "AudioDecodeStage", "GetAudioDurationStage", "AudioRecordStage", "AudioMeasureStage",
    "AudioRMSStage", "AudioClippingStage", "AudioSilenceFractionStage", "AudioSNRStage",
    "PreserveByValueStage", "GetPairwiseWerStage", "AudioSegmentationStage", "ASRStage",
    "TorchSquimQualityMetricsStage", "TorchSquimQualityFilterStage",
    "VADSegmentationStage", "MonoConversionStage", "ResampleAudioStage",
    "SegmentConcatenationStage", "TimestampMapperStage", "SegmentExtractionStage",
    "BandwidthEstimationStage", "BandFilterStage", "UTMOSFilterStage", "SIGMOSFilterStage",
    "AudioDataFilterStage", "ComputeWERStage", "WhisperHallucinationStage",
    "ALMDataBuilderStage", "ALMDataOverlapStage", "AudioToDocumentStage",
    "CreateInitialManifestFleursStage", "CreateInitialManifestReadSpeechStage",
    "ReadLongFormManifestStage", "OverlapFilterStage", "SnippetCutPlannerStage",
    "SnippetRepetitionFilterStage", "SnippetExtractionStage", "SnippetManifestWriterStage",
    "PretrainMetricsAggregatorStage", "build_audio_pretrain_pipeline",
    "prepare_audio_pretrain_outputs", "finalize_audio_pretrain_outputs",
    "AudioPretrainFinalizeSummary",
    "ASRModel", "register_asr_model", "get_asr_model", "registered_asr_models",
    "AudioDecodeError", "load_audio", "audio_info", "resample",
    "word_error_rate", "char_error_rate", "edit_distance", "normalize_text",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
