import numpy as np
import pytest
from curator_audio import AudioBatch, AudioSegmentationStage, GetAudioDurationStage
from curator_audio import testing as T
from curator_audio.stages.segment import split_spans


def _long_recording(path):
    parts = [T.silence(0.5), T.speech_like(1.0), T.silence(0.6), T.speech_like(3.0, seed=1),
             T.silence(0.6), T.tone(300, 0.2), T.silence(0.5)]
    T.write_audio(str(path), np.concatenate(parts))
    return str(path)


def test_split_spans_bounds():
    assert split_spans([(0.0, 1.0), (2.0, 2.2), (3.0, 9.0)], 0.5, 4.0) == [
        (0.0, 1.0), (3.0, 6.0), (6.0, 9.0)]


def test_segments_at_silences_with_min_max(tmp_path):
    path = _long_recording(tmp_path / "long.wav")
    task = AudioBatch(task_id="long", dataset_name="d", data=[
        {"audio_filepath": path, "text": "whole", "id": "rec1", "speaker": "s"},
        {"audio_filepath": str(tmp_path / "missing.wav")}])
    stage = AudioSegmentationStage(min_duration=0.5, max_duration=2.0, padding_s=0.05)
    out = stage.process(task)
    segs = out.data
    # 1 s utterance; 3 s utterance cut into 2 x 1.5 s; the 0.2 s tone is under min_duration
    assert len(segs) == 3
    assert [s["segment_id"] for s in segs] == ["rec1_0", "rec1_1", "rec1_2"]
    assert segs[0]["offset"] == pytest.approx(0.45, abs=0.05)
    assert segs[0]["duration"] == pytest.approx(1.0, abs=0.06)   # last 1/8 s of speech_like is silent
    assert all(0.5 <= s["duration"] <= 2.0 for s in segs)
    assert all(s["speaker"] == "s" and s["text"] == "" and s["audio_filepath"] == path for s in segs)
    assert [r.reason for r in stage.drain_rejected()] == ["undecodable_audio"]
    again = AudioSegmentationStage(min_duration=0.5, max_duration=2.0, padding_s=0.05).process(task)
    assert again.data == segs                                       # deterministic
    # a segment decodes to exactly its span
    seg_dur = GetAudioDurationStage().process(AudioBatch(task_id="s", dataset_name="d", data=segs))
    assert [s["duration"] for s in seg_dur.data] == [s["duration"] for s in segs]
    from curator_audio.decode import record_waveform

    wave, sr = record_waveform(segs[1])
    assert len(wave) == pytest.approx(segs[1]["duration"] * sr, abs=2)


def test_min_max_validation():
    with pytest.raises(ValueError, match="min_duration"):
        AudioSegmentationStage(min_duration=3, max_duration=2)
