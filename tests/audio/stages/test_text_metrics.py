"""ComputeWERStage (numbers spelt out before scoring) and WhisperHallucinationStage."""

import pytest
from curator.errors import ConfigError
from curator_audio import AudioBatch
from curator_audio.stages.compute_wer import ComputeWERStage, error_rate_detail
from curator_audio.stages.text_filtering import WhisperHallucinationStage
from curator_audio.text_normalization import numbers_to_words


def _batch(records):
    return AudioBatch(task_id="t", dataset_name="d", data=records)


def test_numbers_to_words():
    assert numbers_to_words("3 cats, 1,234 dogs, 2.5 kg, the 21st, 50% and $5") == (
        "three cats, one thousand two hundred and thirty four dogs, two point five kg, the "
        "twenty first, fifty percent and five dollars")
    assert numbers_to_words("Ich habe 3 Katzen", "de") == "Ich habe drei Katzen"


def test_error_rate_detail_counts():
    d = error_rate_detail("a x c d e", "a b c d")
    assert d == {"wer": 0.5, "tokens": 4, "ins_rate": 0.25, "del_rate": 0.0, "sub_rate": 0.25}
    assert error_rate_detail("", "a b")["del_rate"] == 1.0


def test_compute_wer_normalises_numbers_and_segments():
    stage = ComputeWERStage(compute_pnc_wer=True)
    out = stage.process(_batch([
        {"audio_filepath": "a", "text": "I saw 3 <unk> cats.", "text_ref": "i saw three cats",
         "duration": 2.0},
        {"audio_filepath": "b", "segments": [
            {"text": "hello world", "text_ref": "hello there world", "start": 1.0, "end": 2.0},
            {"text": "x", "text_ref": "  "}]}]))
    m = out.data[0]["metrics"]
    assert m["wer"]["wer"] == 0.0 and m["cer"]["cer"] == 0.0 and m["start_cer"]["cer"] == 0.0
    assert m["char_rate"] == pytest.approx(len("Isaw3<unk>cats.") / 2, abs=0.01)
    assert m["wer_pnc"]["tokens"] == 4
    seg_ok, seg_empty = out.data[1]["segments"]
    assert seg_ok["metrics"]["wer"]["del_rate"] == pytest.approx(1 / 3, abs=1e-4)
    assert seg_ok["metrics"]["word_rate"] == 2.0
    assert seg_empty["metrics"] == {"wer": None, "cer": None,
                                    "metric_skip_reason": "empty_reference"}
    with pytest.raises(ConfigError, match="num_words_look_back"):
        ComputeWERStage(num_words_threshold=5, num_words_look_back=5)


def test_whisper_hallucination_checks(tmp_path):
    phrases = tmp_path / "phrases.txt"
    phrases.write_text("Thank you\nThank you for watching\nyou\n")
    stage = WhisperHallucinationStage(common_hall_file=str(phrases))
    rows = [
        {"audio_filepath": "clean", "pred_text": "the cat sat on the mat today", "duration": 3.0},
        {"audio_filepath": "loop", "pred_text": "go go go go go go", "duration": 3.0},
        {"audio_filepath": "long", "pred_text": "a " + "x" * 30, "duration": 3.0},
        {"audio_filepath": "phrase", "pred_text": "Thank you for watching!", "duration": 3.0},
        {"audio_filepath": "prefix", "pred_text": "Thank you for watching and subscribe",
         "duration": 30.0},
        {"audio_filepath": "fast", "pred_text": "many words spoken impossibly quickly here",
         "duration": 0.5},
        {"audio_filepath": "german", "pred_text": "die Donaudampfschifffahrtsgesellschaft",
         "language": "de", "duration": 3.0},
        {"audio_filepath": "flagged", "pred_text": "go go go go", "_skipme": "Other:filter"},
        {"audio_filepath": "empty", "pred_text": "  "},
    ]
    out = {r["audio_filepath"]: r for r in stage.process(_batch(rows)).data}
    assert len(out) == len(rows)  # never drops
    assert "_skipme" not in out["clean"] and out["clean"]["additional_notes"] == {
        "WhisperHallucination": "passed"}
    for name, check in (("loop", "repeated_ngrams"), ("long", "long_word"),
                        ("phrase", "phrase_match"), ("prefix", "phrase_match"),
                        ("fast", "high_char_rate")):
        assert out[name]["_skipme"] == "Hallucination:WhisperHallucination", name
        assert check in out[name]["additional_notes"]["WhisperHallucination"], name
    assert "_skipme" not in out["german"]        # compounds are normal in German
    assert out["flagged"]["_skipme"] == "Other:filter"
    assert out["empty"]["additional_notes"]["WhisperHallucination"] == "skipped (empty text)"
    recheck = WhisperHallucinationStage(common_hall_file=str(phrases), overwrite=True,
                                        recovery_value="Recovered:ASR")
    fixed = recheck.process(_batch([{**out["loop"], "pred_text": "a clean second pass"}])).data[0]
    assert fixed["_skipme"] == "" and fixed["additional_notes"]["WhisperHallucination"] == (
        "recovered:asr")
