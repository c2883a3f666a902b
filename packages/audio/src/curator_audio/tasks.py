"""AudioBatch: a batch of audio records following the NeMo manifest convention."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curator import Task

__all__ = ["AudioBatch", "AUDIO_FILEPATH", "DURATION", "TEXT", "WAVEFORM", "SAMPLE_RATE"]

AUDIO_FILEPATH = "audio_filepath"
DURATION = "duration"
TEXT = "text"
WAVEFORM = "waveform"  # mono float32 numpy array or LazyAudio (never in manifests)
SAMPLE_RATE = "sample_rate"


@dataclass
class AudioBatch(Task[list[dict[str, Any]]]):
    """A list of manifest records: dicts with ``audio_filepath``, ``duration``, ``text`` and any
    other fields, which stages pass through untouched.

    Decoded audio, when a stage adds it, lives in ``record["waveform"]`` (mono float32 NumPy array)
    with ``record["sample_rate"]``; manifest writers leave the waveform out. Audio too long to
    hold whole is a :class:`~curator_audio.decode.LazyAudio` there instead: a reference to
    spans of its file that streaming stages read block by block and others decode with
    ``np.asarray``.
    """

    filepath_key: str = AUDIO_FILEPATH

    @property
    def num_items(self) -> int:
        return len(self.data)

    def validate(self) -> bool:
        """Every record is a dict holding the file path key."""
        return all(isinstance(r, dict) and self.filepath_key in r for r in self.data)

    def derive(self, data: Any, *, suffix: str | int | None = None, cls: type[Task] | None = None,
               **kwargs: Any) -> Task:
        if (cls is None or issubclass(cls, AudioBatch)) and "filepath_key" not in kwargs:
            kwargs["filepath_key"] = self.filepath_key
        return super().derive(data, suffix=suffix, cls=cls, **kwargs)

    def dump_data(self, files: Any) -> list[dict[str, Any]]:
        """The manifest records as JSON, each decoded waveform as its own ``.npy`` file
        (``{stem}.{i}.waveform.npy``, float32 as decoded; see :mod:`curator.task_files`); a
        :class:`~curator_audio.decode.LazyAudio` (here or in nested ``segments``) as its
        reference ``{"lazy_waveform": {...}}`` (file spans and silences), not as samples."""
        import numpy as np
        from curator.task_files import dump_array, dump_value

        out = []
        for i, rec in enumerate(self.data):
            rec = _lazy_to_state(rec)
            wave = rec.get(WAVEFORM) if isinstance(rec, dict) else None
            if isinstance(wave, np.ndarray) and not wave.dtype.hasobject:
                rest = {k: v for k, v in rec.items() if k != WAVEFORM}
                state = dump_value(rest, files)
                state[WAVEFORM] = dump_array(wave, files, f"{i}.waveform.npy")
                out.append(state)
            else:
                out.append(dump_value(rec, files))
        return out

    @classmethod
    def load_data(cls, state: Any, files: Any) -> Any:
        """The records :meth:`dump_data` stored, lazy waveforms rebuilt as references."""
        from curator.task_files import load_value

        return _lazy_from_state(load_value(state, files))


_LAZY = "lazy_waveform"


def _lazy_to_state(value: Any) -> Any:
    from curator_audio.decode import LazyAudio

    if isinstance(value, LazyAudio):
        return {_LAZY: value.to_state()}
    if isinstance(value, dict):
        return {k: _lazy_to_state(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lazy_to_state(v) for v in value]
    return value


def _lazy_from_state(value: Any) -> Any:
    from curator_audio.decode import LazyAudio

    if isinstance(value, dict):
        if set(value) == {_LAZY} and isinstance(value[_LAZY], dict):
            return LazyAudio.from_state(value[_LAZY])
        return {k: _lazy_from_state(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lazy_from_state(v) for v in value]
    return value
