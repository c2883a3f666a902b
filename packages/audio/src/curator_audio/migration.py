"""curator-audio's NeMo Curator mappings for ``curator migrate`` and NeMo's test shim."""

from __future__ import annotations

from curator.plugins.migration import CORE_MODULES, MigrationRules

__all__ = ["MIGRATION_RULES"]

_CORE = CORE_MODULES
_A = "nemo_curator.stages.audio"

_NEMO_TOOLKIT = ("needs the NeMo toolkit (nemo.collections.asr) and its checkpoints, which "
                 "curator-audio does not depend on; not offered this round")

MIGRATION_RULES = MigrationRules(
    modules=(
        ("nemo_curator.stages.audio", ("curator_audio", "curator_audio.asr", *_CORE)),
        ("nemo_curator.tasks", ("curator_audio",)),
        ("nemo_curator.utils", ("curator_audio",)),
    ),
    not_offered={
        **{f"{module}.AudioTask": (
            "AudioTask (NeMo: one manifest record per task, `data` a dict) is not offered: "
            "curator-audio's stages take AudioBatch (`data` a list of record dicts, many per "
            "task); build AudioBatch(data=[record, ...]) and read `task.data[i]` for "
            "`task.data`") for module in ("nemo_curator.tasks", "nemo_curator.tasks.audio_task")},
        f"{_A}.segmentation.speaker_separation": (
            "SpeakerSeparationStage: NeMo's SortFormer diarization model " + _NEMO_TOOLKIT
            + "; AudioDataFilterStage skips it with a warning"),
        f"{_A}.segmentation.speaker_separation_module": "speaker separation " + _NEMO_TOOLKIT,
        # class keys (a capitalised last part names a class): the names NeMo exports it under
        **{f"{module}.SpeakerSeparationStage": (
            "SpeakerSeparationStage: NeMo's SortFormer diarization model " + _NEMO_TOOLKIT
            + "; AudioDataFilterStage skips it with a warning")
           for module in (_A, f"{_A}.segmentation", f"{_A}.segmentation.speaker_separation")},
        f"{_A}.inference.speaker_diarization.pyannote": (
            "PyAnnoteDiarizationStage: pyannote.audio's gated hub pipeline "
            "(pyannote/speaker-diarization) needs a hub token and downloads at run time; not "
            "offered this round"),
        f"{_A}.inference.speaker_diarization.sortformer": (
            "InferenceSortformerStage: Sortformer diarization " + _NEMO_TOOLKIT),
        f"{_A}.inference.sed": (
            "SEDInferenceStage: NeMo's sound-event-detection model " + _NEMO_TOOLKIT),
        f"{_A}.inference.asr": (
            "NeMo FastConformer / Qwen ASR adapters: " + _NEMO_TOOLKIT.replace(
                "(nemo.collections.asr)", "(nemo.collections.asr) or Qwen's audio models")
            + "; use ASRStage with Whisper or wav2vec2"),
        f"{_A}.inference.base": "NeMo's ASR inference base " + _NEMO_TOOLKIT,
        f"{_A}.inference.vad": (
            "WhisperXVADStage: whisperx's pyannote VAD downloads its weights at run time; use "
            "VADSegmentationStage (Silero VAD, weights in the silero-vad wheel)"),
        f"{_A}.tagging": (
            "the tagging pipeline (split, NeMo ASR alignment, diarization merge, module "
            "segments, PyAnnote diarization, WhisperX VAD) " + _NEMO_TOOLKIT + "; "
            "InverseTextNormalizationStage: nemo_text_processing installs here but its grammars "
            "compile for minutes at first use, not offered this round; ResampleAudioStage is "
            "offered"),
        f"{_A}.tagging.text.itn": (
            "InverseTextNormalizationStage: nemo_text_processing installs here, but its "
            "inverse-normalisation grammars (pynini) compile for minutes at first use; not "
            "offered this round"),
    },
    shim={
        f"{_A}.io.convert": ("curator_audio.stages.convert",),
        f"{_A}.datasets.fleurs": ("curator_audio.stages.datasets",),
        f"{_A}.datasets.fleurs.create_initial_manifest": ("curator_audio.stages.datasets",),
        f"{_A}.datasets.readspeech": ("curator_audio.stages.datasets",),
        f"{_A}.datasets.readspeech.create_initial_manifest": ("curator_audio.stages.datasets",),
        f"{_A}.segmentation": ("curator_audio",),
        f"{_A}.segmentation.vad_segmentation": ("curator_audio.stages.vad_segmentation",),
        f"{_A}.preprocessing": ("curator_audio.stages.preprocessing",),
        f"{_A}.preprocessing.mono_conversion": ("curator_audio.stages.preprocessing",),
        f"{_A}.preprocessing.concatenation": ("curator_audio.stages.preprocessing",),
        f"{_A}.postprocessing": ("curator_audio.stages.timestamp_mapper",),
        f"{_A}.postprocessing.timestamp_mapper": ("curator_audio.stages.timestamp_mapper",),
        f"{_A}.io.extract_segments": ("curator_audio.stages.extract_segments",),
        f"{_A}.metrics": ("curator_audio",),
        f"{_A}.metrics.bandwidth": ("curator_audio.stages.bandwidth",),
        f"{_A}.metrics.wer": ("curator_audio.stages.compute_wer", "curator_audio.stages.wer"),
        f"{_A}.filtering": ("curator_audio.stages.band", "curator_audio.stages.mos"),
        f"{_A}.filtering.band": ("curator_audio.stages.band",),
        f"{_A}.filtering.utmos": ("curator_audio.stages.mos",),
        f"{_A}.filtering.sigmos": ("curator_audio.stages.mos",),
        f"{_A}.text_filtering": ("curator_audio.stages.text_filtering",),
        f"{_A}.text_filtering.whisper_hallucination": ("curator_audio.stages.text_filtering",),
        f"{_A}.advanced_pipelines": ("curator_audio.stages.audio_data_filter",),
        f"{_A}.advanced_pipelines.audio_data_filter": ("curator_audio.stages.audio_data_filter",),
        f"{_A}.tagging.resample_audio": ("curator_audio.stages.preprocessing",),
        f"{_A}.alm": ("curator_audio.stages.alm",),
        f"{_A}.alm.alm_data_builder": ("curator_audio.stages.alm",),
        f"{_A}.alm.alm_data_overlap": ("curator_audio.stages.alm",),
        f"{_A}.alm.pretrain": ("curator_audio.stages.alm_pretrain",),
        f"{_A}.alm.pretrain.planning": ("curator_audio.stages.alm_pretrain.planning",),
        f"{_A}.alm.pretrain.io": ("curator_audio.stages.alm_pretrain.reader",
                                  "curator_audio.stages.alm_pretrain.output"),
        f"{_A}.alm.pretrain.extraction": ("curator_audio.stages.alm_pretrain.output",),
        f"{_A}.alm.pretrain.pipeline": ("curator_audio.stages.alm_pretrain.pipeline",),
        f"{_A}.alm.pretrain.finalize": ("curator_audio.stages.alm_pretrain.pipeline",),
    },
)
