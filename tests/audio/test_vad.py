import numpy as np
import pytest
from curator_audio import testing as T
from curator_audio import vad

SR = 16000


def test_rms_of_full_scale_sine_is_minus_3_dbfs():
    assert vad.rms_dbfs(T.tone(440, 1.0, SR, amp=1.0)) == pytest.approx(-3.01, abs=0.05)
    assert vad.rms_dbfs(T.tone(440, 1.0, SR, amp=0.1)) == pytest.approx(-23.01, abs=0.05)
    assert vad.rms_dbfs(T.silence(0.5)) < -150


def test_clipping_fraction_counts_full_scale_samples():
    wave = np.clip(T.tone(440, 1.0, SR, amp=2.0), -1, 1)
    assert vad.clipping_fraction(wave) > 0.5
    assert vad.clipping_fraction(T.tone(440, 1.0, SR, amp=0.5)) == 0.0


def test_silence_fraction_and_speech_spans():
    wave = np.concatenate([T.silence(1.0), T.tone(300, 1.0), T.silence(1.0), T.tone(300, 0.5)])
    assert vad.silence_fraction(wave, SR) == pytest.approx(2 / 3.5, abs=0.03)
    spans = vad.speech_spans(wave, SR)
    assert len(spans) == 2
    assert spans[0][0] == pytest.approx(1.0, abs=0.03) and spans[0][1] == pytest.approx(2.0, abs=0.03)
    assert spans[1][0] == pytest.approx(3.0, abs=0.03) and spans[1][1] == pytest.approx(3.5, abs=0.03)


def test_snr_is_high_for_bursts_in_quiet_and_low_for_steady_noise():
    bursty = np.concatenate([T.noise(1.0, amp=0.001), T.tone(300, 1.0), T.noise(1.0, amp=0.001, seed=1)])
    assert vad.snr_estimate(bursty, SR) > 40
    assert vad.snr_estimate(T.noise(2.0, amp=0.3), SR) < 3
