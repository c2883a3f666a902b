import numpy as np
import pytest
from curator.testing import check_stage_contract
from curator_audio import (
    AudioBatch,
    AudioClippingStage,
    AudioRMSStage,
    AudioSilenceFractionStage,
    AudioSNRStage,
)
from curator_audio import testing as T


def _by_name(task):
    return {r["audio_filepath"].rsplit("/", 1)[-1]: r for r in task.data}


def _batch(audio_dir, names):
    return AudioBatch(task_id="q", dataset_name="d",
                      data=[{"audio_filepath": str(audio_dir / n)} for n in names])


def test_quality_stages_on_files(audio_dir):
    task = _batch(audio_dir, ["tone.wav", "silence.wav", "noise.flac", "bad/empty.wav"])
    for i, stage in enumerate((AudioRMSStage(), AudioClippingStage(),
                               AudioSilenceFractionStage(), AudioSNRStage())):
        task = stage.process(task)
        # the first stage rejects the empty file; the later ones never see it
        assert [r.reason for r in stage.drain_rejected()] == ["undecodable_audio"] * (i == 0)
    recs = _by_name(task)
    assert set(recs) == {"tone.wav", "silence.wav", "noise.flac"}
    assert recs["tone.wav"]["rms_db"] == pytest.approx(-9.03, abs=0.1)     # amp 0.5 sine
    assert recs["silence.wav"]["rms_db"] < -150
    assert recs["silence.wav"]["silence_fraction"] == 1.0
    assert recs["tone.wav"]["silence_fraction"] == 0.0
    assert recs["tone.wav"]["clipping_fraction"] == 0.0


def test_clipping_and_snr_on_waveforms():
    clipped = np.clip(T.tone(440, 1.0, amp=3.0), -1, 1)
    quiet_then_loud = np.concatenate([T.noise(1.0, amp=0.001), T.speech_like(1.0)])
    task = AudioBatch(task_id="w", dataset_name="d", data=[
        {"audio_filepath": "clipped", "waveform": clipped, "sample_rate": 16000},
        {"audio_filepath": "clean", "waveform": quiet_then_loud, "sample_rate": 16000},
        {"audio_filepath": "noise", "waveform": T.noise(2.0, amp=0.3), "sample_rate": 16000}])
    task = AudioSNRStage().process(AudioClippingStage(threshold=0.99).process(task))
    recs = _by_name(task)
    assert recs["clipped"]["clipping_fraction"] > 0.7
    assert recs["clean"]["clipping_fraction"] == 0.0
    assert recs["clean"]["snr_db"] > recs["noise"]["snr_db"] + 20


def test_output_keys_configurable_and_contract(audio_dir):
    out = check_stage_contract(AudioRMSStage(output_key="level"), _batch(audio_dir, ["tone.wav"]))
    assert "level" in out[0].data[0]
