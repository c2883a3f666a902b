"""The curator-audio plugin: registers its stages through Curator's hooks.

Importing this module is cheap: stage modules are imported inside the hooks, and those import
soundfile / torch / torchaudio only when a stage runs.
"""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl

__all__ = ["curator_register_readers", "curator_register_writers", "curator_register_filters",
           "curator_register_classifiers", "curator_register_stages"]

_AUDIO = "audio"


@hookimpl
def curator_register_readers(register: Register) -> None:
    from curator_audio.io.directory import AudioDirectoryReader
    from curator_audio.io.manifest import ManifestReader

    register(ManifestReader, modality=_AUDIO)
    register(AudioDirectoryReader, modality=_AUDIO)


@hookimpl
def curator_register_writers(register: Register) -> None:
    from curator_audio.io.manifest import ManifestWriterStage

    register(ManifestWriterStage, modality=_AUDIO)


@hookimpl
def curator_register_filters(register: Register) -> None:
    from curator_audio.stages.filters import PreserveByValueStage
    from curator_audio.stages.squim import TorchSquimQualityFilterStage

    register(PreserveByValueStage, modality=_AUDIO)
    register(TorchSquimQualityFilterStage, modality=_AUDIO)


@hookimpl
def curator_register_classifiers(register: Register) -> None:
    from curator_audio.stages.asr import ASRStage
    from curator_audio.stages.squim import TorchSquimQualityMetricsStage

    register(ASRStage, modality=_AUDIO)
    register(TorchSquimQualityMetricsStage, modality=_AUDIO)


@hookimpl
def curator_register_stages(register: Register) -> None:
    from curator_audio.stages.decode import AudioDecodeStage, GetAudioDurationStage
    from curator_audio.stages.quality import (
        AudioClippingStage,
        AudioRMSStage,
        AudioSilenceFractionStage,
        AudioSNRStage,
    )
    from curator_audio.stages.segment import AudioSegmentationStage
    from curator_audio.stages.wer import GetPairwiseWerStage

    for stage in (AudioDecodeStage, GetAudioDurationStage, AudioRMSStage, AudioClippingStage,
                  AudioSilenceFractionStage, AudioSNRStage, AudioSegmentationStage,
                  GetPairwiseWerStage):
        register(stage, modality=_AUDIO)
