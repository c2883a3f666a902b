"""Fixtures: generated audio files (tones, noise, silence, speech-like, corrupt) and a tiny
random-weight wav2vec2 model, all written to temporary folders."""

from __future__ import annotations

import json
import os

import pytest
from curator_audio import testing as T

SR = 16000


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    monkeypatch.setenv("CURATOR_SUMMARY", "0")


@pytest.fixture(scope="session")
def audio_dir(tmp_path_factory):
    """Good audio in several formats, plus corrupt files; returns the folder."""
    d = tmp_path_factory.mktemp("audio")
    T.write_audio(str(d / "tone.wav"), T.tone(440, 1.0, SR), SR)
    T.write_audio(str(d / "noise.flac"), T.noise(1.0, SR), SR)
    T.write_audio(str(d / "silence.wav"), T.silence(1.0, SR), SR)
    T.write_audio(str(d / "speech.ogg"), T.speech_like(1.5, SR), SR)
    T.write_audio(str(d / "speech.mp3"), T.speech_like(1.0, SR), SR)
    T.write_audio(str(d / "tone8k.wav"), T.tone(300, 0.5, 8000), 8000)
    (d / "tone.txt").write_text("a pure tone\n")
    T.write_corrupt_files(str(d / "bad"))
    return d


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory):
    return T.make_tiny_wav2vec2_model(str(tmp_path_factory.mktemp("model") / "w2v"))


def write_manifest(path, records, extra_lines=()):
    with open(path, "w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
        for line in extra_lines:
            fh.write(line + "\n")
    return str(path)


@pytest.fixture
def manifest(audio_dir, tmp_path):
    """A manifest over the good files and the corrupt ones (relative paths)."""
    recs = [{"audio_filepath": name, "duration": 1.0, "text": text, "speaker": i}
            for i, (name, text) in enumerate([
                ("tone.wav", "a tone"), ("noise.flac", "some noise"), ("silence.wav", ""),
                ("speech.ogg", "hello world"), ("speech.mp3", "hello there")])]
    recs += [{"audio_filepath": os.path.join("bad", n), "text": "x"}
             for n in ("empty.wav", "truncated.wav", "truncated.flac", "garbage.wav")]
    return write_manifest(audio_dir / "manifest.jsonl", recs)


@pytest.fixture(scope="session")
def tiny_whisper(tmp_path_factory):
    """A tiny random-weight WhisperForConditionalGeneration directory (hub file layout)."""
    return T.make_tiny_whisper_model(str(tmp_path_factory.mktemp("whisper") / "whisper-tiny"))


@pytest.fixture(scope="session")
def tiny_hf_wav2vec2(tmp_path_factory):
    """A tiny random-weight Wav2Vec2ForCTC directory (hub file layout, lv60 style)."""
    return T.make_tiny_hf_wav2vec2_model(str(tmp_path_factory.mktemp("hfw2v") / "w2v-hf"))


@pytest.fixture(scope="session")
def tiny_squim(tmp_path_factory):
    """A narrow SQUIM objective state_dict file and its architecture config."""
    path = str(tmp_path_factory.mktemp("squim") / "squim_tiny.pth")
    return T.make_squim_objective_weights(path, model_config=T.TINY_SQUIM_CONFIG)
