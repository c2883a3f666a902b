"""ASRStage: transcribe audio records with a pluggable ASR model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.asr.base import ASRModel, get_asr_model
from curator_audio.decode import record_waveform
from curator_audio.stages.base import AudioRecordStage, public_record
from curator_audio.tasks import AudioBatch

__all__ = ["ASRStage"]


@dataclass
class ASRStage(AudioRecordStage):
    """Transcribes each record into ``pred_text_key``.

    The model is an :class:`curator_audio.asr.ASRModel` chosen by ``model_type``; built in:

    - ``wav2vec2``: a Hugging Face ``Wav2Vec2ForCTC`` directory (e.g. a download of
      ``facebook/wav2vec2-base-960h``) or the torchaudio layout (``config.json`` with
      ``wav2vec2_model`` arguments + ``model.pt`` + ``labels.json``) or a torchaudio bundle's
      checkpoint alone (``model_dir`` = the ``.pth``, e.g. WAV2VEC2_ASR_BASE_960H's
      ``wav2vec2_fairseq_base_ls960_asr_ls960.pth``); greedy CTC decoding;
    - ``wav2vec2_hf``: the Hugging Face layout only;
    - ``whisper``: a ``WhisperForConditionalGeneration`` directory (e.g. a download of
      ``openai/whisper-large-v3``); ``model_kwargs`` ``language``, ``task``
      (``transcribe``/``translate``), ``chunk_length_s`` (long audio is cut into chunks of at
      most 30 s), ``max_new_tokens``, ``num_beams``, ``fp16``; segment-level timestamps with
      ``return_timestamps=True``.

    Plugins register more. Audio is decoded
    (or taken from ``waveform``), resampled to the model's rate, sorted by length and run in
    padded batches of ``inference_batch_size`` with their lengths. Runs on CUDA when the stage's
    resources ask for a GPU and one is present, else on CPU. Undecodable audio is rejected.

    Args:
        model_dir: directory (any fsspec path) holding the model files (for ``wav2vec2`` also
            a torchaudio ``.pth``/``.pt`` checkpoint file).
        model_type: registered ASR model name.
        model_kwargs: options for the model's ``load`` (see above).
        pred_text_key: output field for the transcript.
        inference_batch_size: waveforms per forward pass.
        return_timestamps: also store the transcript's segments, a list of
            ``{"start", "end", "text"}`` (seconds from the start of the audio), in
            ``timestamps_key`` (models that support it: ``whisper``).
        timestamps_key: output field for the segments.
    """

    model_dir: str = ""
    path_params: ClassVar[tuple[str, ...]] = ("model_dir",)  # resolved on the driver
    model_type: str = "wav2vec2"
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    pred_text_key: str = "pred_text"
    inference_batch_size: int = 16
    return_timestamps: bool = False
    timestamps_key: str = "pred_timestamps"
    filepath_key: str = "audio_filepath"
    name: str = "ASRStage"
    kind: ClassVar[str] = "classifier"
    reject_reason = "undecodable_audio"

    def __post_init__(self) -> None:
        if not self.model_dir:
            raise ConfigError(f"{self.name}: model_dir is required (a directory with the model)")
        if "://" not in self.model_dir:
            import os

            checkpoint = self.model_dir.endswith((".pth", ".pt")) and os.path.isfile(
                self.model_dir)
            if not (os.path.isdir(self.model_dir) or checkpoint):
                raise ConfigError(f"{self.name}: model_dir {self.model_dir!r} is not a directory "
                                  f"(or a torchaudio .pth checkpoint); build a test model with "
                                  f"curator_audio.testing.make_tiny_wav2vec2_model(path)")
        model_cls = get_asr_model(self.model_type)  # unknown type: a clear error now
        if self.return_timestamps and not model_cls.supports_timestamps:
            raise ConfigError(f"{self.name}: return_timestamps=True but model_type "
                              f"{self.model_type!r} does not produce timestamps (use 'whisper')")
        if not isinstance(self.model_kwargs, dict):
            raise ConfigError(f"{self.name}: model_kwargs must be a dict of options for "
                              f"{self.model_type!r}, got {self.model_kwargs!r}")
        if not isinstance(self.inference_batch_size, int) or self.inference_batch_size < 1:
            raise ConfigError(f"{self.name}: inference_batch_size must be an int >= 1")

    def outputs(self) -> StageIO:
        return ["data"], [self.pred_text_key] + (
            [self.timestamps_key] if self.return_timestamps else [])

    @property
    def device(self) -> str:
        """``"cuda"`` when the stage asks for a GPU and torch sees one, else ``"cpu"``."""
        return self.resources.torch_device()

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        self._model: ASRModel = get_asr_model(self.model_type).load(
            self.model_dir, self.device, **self.model_kwargs)

    def process(self, task: AudioBatch) -> AudioBatch:
        model = self._model
        waves: dict[int, Any] = {}
        for i, record in enumerate(task.data):
            try:
                waves[i] = record_waveform(record, self.filepath_key, model.sample_rate)[0]
            except Exception as exc:
                self.reject(task, self.reject_reason, record=public_record(record), error=exc,
                            source=str(record.get(self.filepath_key, "")))
        order = sorted(waves, key=lambda i: len(waves[i]))
        texts: dict[int, str] = {}
        segments: dict[int, list[dict[str, Any]]] = {}
        for b in range(0, len(order), self.inference_batch_size):
            idx = order[b:b + self.inference_batch_size]
            batch = [waves[i] for i in idx]
            if self.return_timestamps:
                for i, (text, segs) in zip(idx, model.transcribe_with_timestamps(batch),
                                           strict=True):
                    texts[i], segments[i] = text, segs
            else:
                texts.update(zip(idx, model.transcribe(batch), strict=True))
        extra = (lambda i: {self.timestamps_key: segments[i]}) if self.return_timestamps \
            else (lambda i: {})
        return task.derive([{**task.data[i], self.pred_text_key: texts[i], **extra(i)}
                            for i in sorted(texts)])

    def teardown(self) -> None:
        self._model = None  # type: ignore[assignment]

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_model", None)  # models are loaded by setup(), never shipped
        return state
