"""The composite AudioDataFilterStage in NeMo's order, run as a pipeline on espeak-ng speech
between silence and noise, with tiny models in the published layouts."""

import json
import logging

import numpy as np
import pytest
from curator import Pipeline
from curator.errors import ConfigError
from curator_audio import AudioDataFilterStage, ManifestReader, ManifestWriterStage
from curator_audio import testing as T

pytestmark = pytest.mark.skipif(not T.espeak_available(),
                                reason="espeak-ng is not installed (apt-get install espeak-ng)")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("adf")
    truths, records = {}, []
    for i, layout in enumerate([
            [("silence", 1.0), ("speech", 0), ("noise", 1.0), ("speech", 1), ("silence", 0.5)],
            [("noise", 0.8), ("speech", 5), ("silence", 1.0)]]):
        wave, truth = T.speech_scene(layout, sr=48000, seed=i)
        path = T.write_audio(str(d / f"rec{i}.wav"), wave, 48000)
        truths[path] = truth
        records.append({"audio_filepath": path})
    low = T.write_audio(str(d / "rate16k.wav"), T.speech_scene([("speech", 2)])[0], 16000)
    records += [{"audio_filepath": low},
                {"audio_filepath": T.write_audio(str(d / "silent.wav"), T.silence(3, 48000),
                                                 48000)},
                {"audio_filepath": str(d / "missing.wav")}]
    manifest = d / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in records))
    models = {"band_filter": {"model_path": T.make_band_classifier(str(d / "band.joblib"),
                                                                   constant=1)},
              "utmos": {"model_dir": T.make_tiny_utmos_checkout(str(d / "SpeechMOS")),
                        "mos_threshold": 1.5},
              "sigmos": {"model_path": str(d / "sigmos.onnx")},
              "vad": {"min_duration_sec": 1.0}}
    T.make_tiny_sigmos_model(str(d / "sigmos.onnx"), bias=5.0)
    return d, str(manifest), truths, models


def test_nemo_order_and_speaker_separation_skipped_with_a_warning(data, caplog):
    _, _, _, models = data
    with caplog.at_level(logging.WARNING):
        names = [s.name for s in AudioDataFilterStage(config=models).decompose()]
    assert names == ["MonoConversion", "VAD", "BandFilter", "UTMOS", "SIGMOS", "SegmentConcat",
                     "VAD_Speaker", "BandFilter_Speaker", "UTMOS_Speaker", "SIGMOS_Speaker",
                     "TimestampMapper"]
    assert "SpeakerSeparationStage" in caplog.text
    vad_only = AudioDataFilterStage(config={**models, "speaker_separation": {"enable": False},
                                            "band_filter": {"enable": False},
                                            "utmos": {"enable": False},
                                            "sigmos": {"enable": False}})
    assert [s.name for s in vad_only.decompose()] == ["MonoConversion", "VAD", "TimestampMapper"]
    with pytest.raises(ConfigError, match="band_filter.model_path"):
        AudioDataFilterStage().decompose()


def test_composite_pipeline_end_to_end(data, tmp_path):
    _, manifest, truths, models = data
    out, rej = tmp_path / "out", tmp_path / "rejected"
    result = Pipeline("adf", stages=[
        ManifestReader(file_paths=manifest, records_per_task=2),
        AudioDataFilterStage(config=models),
        ManifestWriterStage(path=str(out))]).run(rejected_dir=str(rej))
    rows = [json.loads(line) for f in sorted(out.glob("*.jsonl"))
            for line in f.read_text().splitlines()]
    by_file: dict[str, list] = {}
    for r in rows:
        by_file.setdefault(r["original_file"], []).append(r)
    assert sorted(by_file) == sorted(truths)
    for path, truth in truths.items():
        got = sorted((r["original_start_ms"] / 1000, r["original_end_ms"] / 1000)
                     for r in by_file[path])
        assert len(got) == len(truth)
        for (s, e), (ts, te) in zip(got, truth, strict=True):
            # NeMo's 300 ms padding on both VAD passes
            assert ts - 0.75 <= s <= ts + 0.1 and te - 0.1 <= e <= te + 0.75
    r = rows[0]
    assert {"utmos_mos", "sigmos_ovrl", "band_prediction", "sample_rate"} <= set(r)
    assert not {"waveform", "segments", "segment_mappings"} & set(r)
    reasons = sorted(x.reason for x in result.rejected.records) if hasattr(
        result.rejected, "records") else None
    rejected = [json.loads(line) for f in rej.rglob("*.jsonl")
                for line in f.read_text().splitlines()]
    assert sorted(x["reason"] for x in rejected) == ["sample_rate_mismatch", "silent_audio",
                                                     "undecodable_audio"], reasons
    assert np.isfinite([x["duration"] for x in rows]).all()
