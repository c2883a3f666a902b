"""curator-audio: speech-data curation for Curator.

Read a manifest (or a folder of audio) → decode → measure → transcribe → score against the
reference text → filter → write. Heavy libraries (soundfile, torch, torchaudio) are imported only
when a stage runs.
"""

from curator_audio.asr import ASRModel, get_asr_model, register_asr_model, registered_asr_models
from curator_audio.decode import AudioDecodeError, audio_info, load_audio, resample
from curator_audio.io.directory import AudioDirectoryReader
from curator_audio.io.manifest import ManifestReader, ManifestWriterStage
from curator_audio.metrics import char_error_rate, edit_distance, normalize_text, word_error_rate
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
from curator_audio.stages.asr import ASRStage
from curator_audio.stages.audio_data_filter import AudioDataFilterStage
from curator_audio.stages.band import BandFilterStage
from curator_audio.stages.bandwidth import BandwidthEstimationStage
from curator_audio.stages.base import AudioRecordStage
from curator_audio.stages.compute_wer import ComputeWERStage
from curator_audio.stages.convert import AudioToDocumentStage
from curator_audio.stages.datasets import (
    CreateInitialManifestFleursStage,
    CreateInitialManifestReadSpeechStage,
)
from curator_audio.stages.decode import AudioDecodeStage, GetAudioDurationStage
from curator_audio.stages.extract_segments import SegmentExtractionStage
from curator_audio.stages.filters import PreserveByValueStage
from curator_audio.stages.mos import SIGMOSFilterStage, UTMOSFilterStage
from curator_audio.stages.preprocessing import (
    MonoConversionStage,
    ResampleAudioStage,
    SegmentConcatenationStage,
)
from curator_audio.stages.quality import (
    AudioClippingStage,
    AudioMeasureStage,
    AudioRMSStage,
    AudioSilenceFractionStage,
    AudioSNRStage,
)
from curator_audio.stages.segment import AudioSegmentationStage
from curator_audio.stages.squim import TorchSquimQualityFilterStage, TorchSquimQualityMetricsStage
from curator_audio.stages.text_filtering import WhisperHallucinationStage
from curator_audio.stages.timestamp_mapper import TimestampMapperStage
from curator_audio.stages.vad_segmentation import VADSegmentationStage
from curator_audio.stages.wer import GetPairwiseWerStage
from curator_audio.tasks import AudioBatch

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
    "PretrainMetricsAggregatorStage",
    "ASRModel", "register_asr_model", "get_asr_model", "registered_asr_models",
    "AudioDecodeError", "load_audio", "audio_info", "resample",
    "word_error_rate", "char_error_rate", "edit_distance", "normalize_text",
]
