"""Silero VAD (real weights from the silero-vad wheel) on espeak-ng speech placed at known
offsets between silences and noise; mono conversion, concatenation, timestamp mapping and
segment extraction around it."""

import numpy as np
import pytest
import soundfile as sf
from curator_audio import AudioBatch
from curator_audio import testing as T
from curator_audio.stages.extract_segments import SegmentExtractionStage
from curator_audio.stages.preprocessing import (
    MonoConversionStage,
    ResampleAudioStage,
    SegmentConcatenationStage,
)
from curator_audio.stages.timestamp_mapper import TimestampMapperStage
from curator_audio.stages.vad_segmentation import VADSegmentationStage

pytestmark = pytest.mark.skipif(not T.espeak_available(),
                                reason="espeak-ng is not installed (apt-get install espeak-ng)")

LAYOUTS = {
    # (rate, layout): speech between digital silence, white noise and both
    "a16k": (16000, [("silence", 1.0), ("speech", 0), ("noise", 1.5), ("speech", 1),
                     ("silence", 1.0)]),
    "b48k": (48000, [("noise", 0.7), ("speech", 2), ("silence", 1.2), ("speech", 3),
                     ("noise", 0.8)]),
    "c22k": (22050, [("silence", 0.4), ("speech", 5), ("noise", 2.0), ("silence", 0.5)]),
}


@pytest.fixture(scope="module")
def scenes(tmp_path_factory):
    d = tmp_path_factory.mktemp("speech")
    out = {}
    for name, (sr, layout) in LAYOUTS.items():
        wave, truth = T.speech_scene(layout, sr=sr, seed=len(name) + sr)
        path = T.write_audio(str(d / f"{name}.wav"), wave, sr)
        out[name] = (path, wave, sr, truth)
    return out


@pytest.fixture(scope="module")
def vad():
    stage = VADSegmentationStage(speech_pad_ms=0, min_duration_sec=0.5, min_interval_ms=300)
    stage.setup()
    return stage


def _batch(records):
    return AudioBatch(task_id="t", dataset_name="d", data=records)


def test_boundaries_within_100ms_of_truth_and_same_as_silero_direct(scenes, vad):
    import torch
    from curator_audio.decode import resample
    from silero_vad import get_speech_timestamps, load_silero_vad

    model = load_silero_vad()
    for name, (path, wave, sr, truth) in scenes.items():
        out = vad.process(_batch([{"audio_filepath": path, "id": name}]))
        got = [(r["start_ms"] / 1000, r["end_ms"] / 1000) for r in out.data]
        assert len(got) == len(truth), (name, got, truth)
        for (s, e), (ts, te) in zip(got, truth, strict=True):
            assert abs(s - ts) <= 0.1 and abs(e - te) <= 0.1, (name, (s, e), (ts, te))
        # the library called directly on the same audio (a rate Silero does not take: 16 kHz)
        audio, vad_sr = (wave, sr) if sr in (16000, 48000) else (resample(wave, sr, 16000), 16000)
        direct = get_speech_timestamps(torch.from_numpy(audio), model, sampling_rate=vad_sr,
                                       threshold=0.5, min_speech_duration_ms=500,
                                       min_silence_duration_ms=300, speech_pad_ms=0,
                                       max_speech_duration_s=60.0, return_seconds=False)
        window = 512 / 16000
        assert len(direct) == len(got)
        for (s, e), d in zip(got, direct, strict=True):
            assert abs(s - d["start"] / vad_sr) <= window and abs(e - d["end"] / vad_sr) <= window
        rec = out.data[0]
        assert rec["sample_rate"] == sr and rec["id"] == name and rec["original_file"] == path
        assert len(rec["waveform"]) == pytest.approx(rec["duration"] * sr, abs=sr * 0.002)


def test_nested_concatenate_map_back_and_extract(scenes, vad, tmp_path):
    path, wave, sr, truth = scenes["a16k"]
    nested = VADSegmentationStage(speech_pad_ms=0, min_duration_sec=0.5, min_interval_ms=300,
                                  nested=True)
    nested._model = vad._model
    task = nested.process(_batch([{"audio_filepath": path}]))
    (rec,) = task.data
    assert "waveform" not in rec and len(rec["segments"]) == len(truth)
    joined = SegmentConcatenationStage(silence_duration_sec=0.5).process(task)
    (rec,) = joined.data
    assert rec["num_segments"] == 2 and "segments" not in rec
    maps = rec["segment_mappings"]
    assert maps[1]["concat_start_ms"] == maps[0]["concat_end_ms"] + 500
    # a second VAD pass on the concatenated audio, mapped back to the original file
    again = vad.process(joined)
    assert len(again.data) == 2
    rows = TimestampMapperStage().process(again)
    assert [r["original_file"] for r in rows.data] == [path, path]
    for row, (ts, te) in zip(rows.data, truth, strict=True):
        assert abs(row["original_start_ms"] / 1000 - ts) <= 0.1
        assert abs(row["original_end_ms"] / 1000 - te) <= 0.1
        assert set(row) == {"original_file", "original_start_ms", "original_end_ms",
                            "duration_ms", "duration", "sample_rate"}
    ext = SegmentExtractionStage(output_dir=str(tmp_path / "segs"))
    written = ext.process(rows)
    for row in written.data:
        got, got_sr = sf.read(row["extracted_path"], dtype="float32")
        start = row["original_start_ms"] * sr // 1000
        assert got_sr == sr and len(got) == (row["original_end_ms"] - row["original_start_ms"]) * sr // 1000
        assert np.allclose(got, wave[start:start + len(got)], atol=1e-4)
    # the same names again: nothing written twice
    assert sorted(p.name for p in (tmp_path / "segs").iterdir()) == sorted(
        r["extracted_path"].rsplit("/", 1)[1] for r in ext.process(rows).data)


def test_bad_inputs_rejected_with_reasons(scenes, vad, tmp_path):
    bad = T.write_corrupt_files(str(tmp_path / "bad"))
    short = T.write_audio(str(tmp_path / "short.wav"), T.noise(0.3), 16000)
    silent = T.write_audio(str(tmp_path / "silent.wav"), T.silence(3.0), 16000)
    noise = T.write_audio(str(tmp_path / "noise.wav"), T.noise(3.0, amp=0.05), 16000)
    records = [{"audio_filepath": p} for p in (*bad.values(), short, silent, noise)]
    records.append({"audio_filepath": "x.wav", "waveform": np.ones(10, np.float32)})
    out = vad.process(_batch(records))
    assert out.data == []
    reasons = [r.reason for r in vad.drain_rejected()]
    assert reasons == ["undecodable_audio"] * 4 + ["too_short", "silent_audio", "no_speech",
                                                   "missing_sample_rate"]


def test_mono_conversion_rates_and_channels(scenes, tmp_path):
    path48 = scenes["b48k"][0]
    stereo = str(tmp_path / "stereo.wav")
    left = T.tone(300, 1.0, 48000)
    sf.write(stereo, np.stack([left, np.zeros_like(left)], axis=1), 48000)
    stage = MonoConversionStage()
    out = stage.process(_batch([{"audio_filepath": path48}, {"audio_filepath": stereo},
                                {"audio_filepath": scenes["a16k"][0]},
                                {"audio_filepath": str(tmp_path / "missing.wav")}]))
    assert [r["audio_filepath"] for r in out.data] == [path48, stereo]
    assert np.allclose(out.data[1]["waveform"], left / 2, atol=1e-4)
    assert out.data[1]["num_samples"] == 48000 and out.data[1]["is_mono"]
    assert [r.reason for r in stage.drain_rejected()] == ["sample_rate_mismatch",
                                                          "undecodable_audio"]
    loose = MonoConversionStage(strict_sample_rate=False).process(
        _batch([{"audio_filepath": scenes["a16k"][0]}]))
    assert loose.data[0]["sample_rate"] == 16000


def test_resample_audio_writes_once(scenes, tmp_path):
    path, wave, sr, _ = scenes["c22k"]
    stage = ResampleAudioStage(resampled_audio_dir=str(tmp_path / "rs"), target_sample_rate=16000)
    (row,) = stage.process(_batch([{"audio_filepath": path}])).data
    info = sf.info(row["resampled_audio_filepath"])
    assert info.samplerate == 16000 and info.channels == 1
    assert row["duration"] == pytest.approx(len(wave) / sr, abs=1e-3)
    assert row["audio_item_id"].startswith("c22k_")
    mtime = (tmp_path / "rs" / f"{row['audio_item_id']}.wav").stat().st_mtime_ns
    assert stage.process(_batch([{"audio_filepath": path}])).data == [row]
    assert (tmp_path / "rs" / f"{row['audio_item_id']}.wav").stat().st_mtime_ns == mtime
