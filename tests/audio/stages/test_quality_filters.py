"""Bandwidth estimation on low-passed audio; the band classifier, UTMOS and SigMOS loaded from
tiny models saved in their published layouts (a joblib scikit-learn classifier, a torch.hub
checkout, an ONNX graph with SigMOS's input and output)."""

import numpy as np
import pytest
import scipy.signal
from curator.errors import ConfigError
from curator_audio import AudioBatch
from curator_audio import testing as T
from curator_audio.stages.band import BandFilterStage, band_energy_features, feature_vector
from curator_audio.stages.bandwidth import BandwidthEstimationStage, estimate_bandwidth
from curator_audio.stages.mos import SIGMOSFilterStage, UTMOSFilterStage, sigmos_features

SR = 48000


def _lowpassed(cutoff, seconds=2.0, seed=0, sr=SR):
    """White noise through a steep elliptic low-pass (the brick wall of a resampler or codec)."""
    sos = scipy.signal.ellip(12, 0.1, 100, cutoff, btype="low", fs=sr, output="sos")
    y = scipy.signal.sosfilt(sos, T.noise(seconds, sr, amp=0.5, seed=seed))
    fade = np.hanning(int(0.1 * sr))   # 50 ms fades: no click at the edges (a broadband step)
    y[:len(fade) // 2] *= fade[:len(fade) // 2]
    y[-(len(fade) // 2):] *= fade[len(fade) // 2:]
    return y.astype(np.float32)


def _batch(records):
    return AudioBatch(task_id="t", dataset_name="d", data=records)


@pytest.mark.parametrize(("cutoff", "sr"), [(3000, 16000), (4000, 16000), (6000, 16000),
                                            (8000, 48000), (12000, 48000), (16000, 48000),
                                            (20000, 48000)])
def test_bandwidth_within_10_percent_of_cutoff(cutoff, sr):
    # NeMo's estimate reads 4-5 bins (n_fft=512: 94 Hz each at 48 kHz) past a brick-wall edge
    # (the Blackman-Harris main lobe), so narrow bands are checked at 16 kHz
    est = estimate_bandwidth(_lowpassed(cutoff, sr=sr), sr)
    assert abs(est - cutoff) <= 0.1 * cutoff, (cutoff, sr, est)


def test_bandwidth_stage_whole_and_segments(tmp_path):
    path = T.write_audio(str(tmp_path / "lp.wav"), np.concatenate(
        [_lowpassed(8000, 1.0), _lowpassed(16000, 1.0, seed=1)]), SR)
    stage = BandwidthEstimationStage()
    out = stage.process(_batch([
        {"audio_filepath": path, "segments": [{"start": 0.0, "end": 1.0},
                                              {"start": 1.0, "end": 2.0},
                                              {"start": 1.5, "end": 1.0}]},
        {"audio_filepath": path, "text": "whole"},
        {"audio_filepath": str(tmp_path / "missing.wav")}]))
    segs = out.data[0]["segments"]
    assert abs(segs[0]["metrics"]["bandwidth"] - 8000) <= 800
    assert abs(segs[1]["metrics"]["bandwidth"] - 16000) <= 1600
    assert "invalid segment" in segs[2]["metrics"]["metric_skip_reason"]
    assert abs(out.data[1]["metrics"]["bandwidth"] - 16000) <= 1600
    assert [r.reason for r in stage.drain_rejected()] == ["undecodable_audio"]


def test_band_filter_with_a_joblib_classifier(tmp_path):
    import joblib
    from sklearn.tree import DecisionTreeClassifier

    feats = [feature_vector(band_energy_features(_lowpassed(c, 1.0, seed=s), SR))
             for c in (4000, 20000) for s in range(3)]
    assert len(feats[0]) == 24
    clf = DecisionTreeClassifier(random_state=0).fit(np.stack(feats), [0, 0, 0, 1, 1, 1])
    model = str(tmp_path / "band_classifier_model_band_7000_samples.joblib")
    joblib.dump(clf, model)
    narrow = T.write_audio(str(tmp_path / "narrow.wav"), _lowpassed(3500, 1.0, seed=9), SR)
    full = T.write_audio(str(tmp_path / "full.wav"), _lowpassed(21000, 1.0, seed=9), SR)
    stage = BandFilterStage(cache_dir=str(tmp_path), split=True)
    out = stage.process(_batch([{"audio_filepath": narrow}, {"audio_filepath": full}]))
    assert [r["audio_filepath"] for r in out.data] == [full]
    assert out.data[0]["band_prediction"] == "full_band"
    (rej,) = stage.drain_rejected()
    assert rej.kind == "filtered" and rej.record["score"] == "narrow_band"
    keep_narrow = BandFilterStage(model_path=model, band_value="narrow_band")
    nested = keep_narrow.process(_batch([{"audio_filepath": narrow, "segments": [
        {"waveform": _lowpassed(3500, 1.0), "sample_rate": SR},
        {"waveform": _lowpassed(21000, 1.0), "sample_rate": SR}]}]))
    assert [s["band_prediction"] for s in nested.data[0]["segments"]] == ["narrow_band"]
    with pytest.raises(ConfigError, match="model_path"):
        BandFilterStage(model_path=str(tmp_path / "nope.joblib")).setup()


def test_utmos_from_a_local_hub_checkout(tmp_path):
    repo = T.make_tiny_utmos_checkout(str(tmp_path / "SpeechMOS"))
    loud, quiet = T.tone(300, 1.0, 48000, amp=0.5), T.tone(300, 1.0, 48000, amp=0.01)
    stage = UTMOSFilterStage(model_dir=str(repo), mos_threshold=3.5, split=True)
    out = stage.process(_batch([{"audio_filepath": "a.wav", "waveform": loud, "sample_rate": 48000},
                                {"audio_filepath": "b.wav", "waveform": quiet,
                                 "sample_rate": 48000}]))
    assert [r["audio_filepath"] for r in out.data] == ["a.wav"]
    assert out.data[0]["utmos_mos"] == pytest.approx(1 + 20 * np.mean(np.abs(loud)), rel=0.02)
    assert [r.kind for r in stage.drain_rejected()] == ["filtered"]
    with pytest.raises(ConfigError, match="hubconf"):
        UTMOSFilterStage(model_dir=str(tmp_path)).setup()


def test_sigmos_from_an_onnx_graph_in_the_published_layout(tmp_path):
    from curator_audio.stages.mos import SIGMOS_MODEL_FILENAME, SIGMOS_OUTPUTS

    w, b = T.make_tiny_sigmos_model(str(tmp_path / SIGMOS_MODEL_FILENAME))
    wave = T.tone(440, 1.0, 48000, amp=0.3)
    feats = sigmos_features(wave)
    assert feats.shape == (1, 3, 48000 // 480 + 1, 481) and feats.dtype == np.float32
    expect = dict(zip(SIGMOS_OUTPUTS, feats[0].mean(axis=1).reshape(-1) @ w + b, strict=True))
    keep_all = SIGMOSFilterStage(model_dir=str(tmp_path), noise_threshold=None,
                                 ovrl_threshold=None)
    (row,) = keep_all.process(_batch([{"audio_filepath": "x", "waveform": wave,
                                       "sample_rate": 48000}])).data
    for key in ("noise", "ovrl", "sig", "col", "disc", "loud", "reverb"):
        assert row[f"sigmos_{key}"] == pytest.approx(expect[f"MOS_{key.upper()}"], abs=1e-3)
    strict = SIGMOSFilterStage(model_path=str(tmp_path / SIGMOS_MODEL_FILENAME),
                               ovrl_threshold=row["sigmos_ovrl"] + 0.01, noise_threshold=None,
                               split=True)
    assert strict.process(_batch([{"audio_filepath": "x", "waveform": wave,
                                   "sample_rate": 48000}])).data == []
    (rej,) = strict.drain_rejected()
    assert "ovrl" in rej.record["score"]
    with pytest.raises(ConfigError, match="SIG-Challenge"):
        SIGMOSFilterStage(model_dir=str(tmp_path / "none")).setup()
