"""Long recordings stream through the VAD path (issue 46): a file longer than
``stream_above_sec`` is read block by block (resampled and fed to Silero with its state carried),
its segments are LazyWaveform spans, and extraction reads only each span. The results equal the
whole-file path and ``silero_vad.get_speech_timestamps`` on the whole audio; the window here is
small (12 s, blocks of 4 s) so a ~40 s file spans many blocks."""

import json
import tracemalloc

import numpy as np
import pytest
import soundfile as sf
from curator import LocalExecutor, Pipeline
from curator.task_files import load_task, save_task
from curator_audio import AudioDataFilterStage, ManifestReader
from curator_audio import testing as T
from curator_audio.decode import (
    LazyConcatenation,
    LazyWaveform,
    lazy_waveform,
    resample,
    resample_blocks,
)
from curator_audio.stages.extract_segments import SegmentExtractionStage
from curator_audio.stages.preprocessing import MonoConversionStage, SegmentConcatenationStage
from curator_audio.stages.timestamp_mapper import TimestampMapperStage
from curator_audio.stages.vad_segmentation import VADSegmentationStage

from .long_scene import BLOCK, LAYOUT, VAD_ARGS, WINDOW, batch

pytestmark = pytest.mark.skipif(not T.espeak_available(),
                                reason="espeak-ng is not installed (apt-get install espeak-ng)")



@pytest.fixture(scope="module")
def long_files(tmp_path_factory):
    """A ~40 s recording at 48 kHz (Silero decimates it) and the same at 22.05 kHz (resampled
    to 16 kHz for Silero), with the true speech spans."""
    d = tmp_path_factory.mktemp("long")
    wave, truth = T.speech_scene(LAYOUT, sr=48000, seed=7)
    assert len(wave) / 48000 > 3 * WINDOW
    out = {48000: (T.write_audio(str(d / "long48k.wav"), wave, 48000), wave)}
    low = resample(wave, 48000, 22050)
    out[22050] = (T.write_audio(str(d / "long22k.wav"), low, 22050), low)
    return d, out, truth


@pytest.fixture(scope="module")
def vad():
    stage = VADSegmentationStage(**VAD_ARGS, stream_above_sec=WINDOW, stream_block_sec=BLOCK)
    stage.setup()
    return stage


def _spans(task):
    return [(r["start_ms"], r["end_ms"]) for r in task.data]


def test_resample_blocks_equals_whole_file_resample():
    rng = np.random.default_rng(0)
    for orig, new in ((44100, 16000), (8000, 16000)):
        x = rng.standard_normal(orig * 2 + 17).astype(np.float32)
        whole = resample(x, orig, new)
        for size in (4999, len(x)):
            got = np.concatenate(list(resample_blocks(
                (x[i:i + size] for i in range(0, len(x), size)), orig, new)))
            assert len(got) == len(whole) and np.abs(got - whole).max() < 1e-5


def test_streamed_spans_equal_whole_file_and_silero_direct(long_files, vad):
    import torch
    from silero_vad import get_speech_timestamps

    _, files, truth = long_files
    whole = VADSegmentationStage(**VAD_ARGS, stream_above_sec=None)
    whole._model = vad._model
    for sr, (path, wave) in files.items():
        streamed = vad.process(batch([{"audio_filepath": path}]))
        assert all(isinstance(r["waveform"], LazyWaveform) for r in streamed.data)
        assert len(streamed.data) == len(truth)
        for (s, e), (ts, te) in zip(_spans(streamed), truth, strict=True):
            assert abs(s / 1000 - ts) <= 0.1 and abs(e / 1000 - te) <= 0.1, (sr, s, e, ts, te)
        audio, vad_sr = (wave, sr) if sr == 48000 else (resample(wave, sr, 16000), 16000)
        direct = get_speech_timestamps(torch.from_numpy(audio), vad._model, sampling_rate=vad_sr,
                                       threshold=0.5, min_speech_duration_ms=500,
                                       min_silence_duration_ms=300, speech_pad_ms=0,
                                       max_speech_duration_s=60.0)
        assert len(direct) == len(streamed.data)
        for (s, e), d in zip(_spans(streamed), direct, strict=True):
            assert abs(s / 1000 - d["start"] / vad_sr) <= 512 / 16000
            assert abs(e / 1000 - d["end"] / vad_sr) <= 512 / 16000
        if sr != 48000:
            continue
        # the whole-file path: the same spans; a lazy segment decodes to the samples it cut
        decoded = whole.process(batch([{"audio_filepath": path}]))
        assert all(isinstance(r["waveform"], np.ndarray) for r in decoded.data)
        assert _spans(streamed) == _spans(decoded)
        for lazy, arr in zip(streamed.data, decoded.data, strict=True):
            assert lazy["waveform"].sample_rate == sr and lazy["sample_rate"] == sr
            assert np.array_equal(np.asarray(lazy["waveform"]), arr["waveform"])


def test_streaming_holds_a_block_not_the_file(long_files, vad):
    """Python-side peak allocation (NumPy arrays are traced) while segmenting the 48 kHz file:
    a few 2 s blocks, far below the decoded file (which decoding whole holds)."""
    _, files, _ = long_files
    path, wave = files[48000]
    whole_bytes = len(wave) * 4
    stage = VADSegmentationStage(**VAD_ARGS, stream_above_sec=WINDOW, stream_block_sec=2.0)
    stage._model = vad._model
    peaks = {}
    for label, run in (("whole", lambda: lazy_waveform(path).load()),
                       ("streamed", lambda: stage.process(batch([{"audio_filepath": path}])))):
        tracemalloc.start()
        try:
            run()
            peaks[label] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peaks["whole"] >= whole_bytes
    assert peaks["streamed"] < whole_bytes / 4, (peaks, whole_bytes)


def test_mono_conversion_leaves_long_audio_lazy_and_extraction_reads_spans(long_files, vad,
                                                                         tmp_path):
    _, files, truth = long_files
    path, wave = files[48000]
    mono = MonoConversionStage(stream_above_sec=WINDOW).process(batch([{"audio_filepath": path}]))
    (rec,) = mono.data
    assert isinstance(rec["waveform"], LazyWaveform)
    assert rec["num_samples"] == len(wave) and rec["duration"] == pytest.approx(len(wave) / 48000)
    # stored (failed-task files, process workers) as a reference, rebuilt as one
    written = save_task(mono, str(tmp_path / "mono"))
    assert not any(name.endswith(".npy") for name in written)
    again = load_task(str(tmp_path / "mono.task.json"))
    assert again.data[0]["waveform"] == rec["waveform"]
    rows = TimestampMapperStage().process(vad.process(again))
    out = SegmentExtractionStage(output_dir=str(tmp_path / "segs")).process(rows)
    assert len(out.data) == len(rows.data) == len(truth)
    for row in out.data:
        got, got_sr = sf.read(row["extracted_path"], dtype="float32")
        first = row["original_start_ms"] * 48000 // 1000
        assert got_sr == 48000 and np.allclose(got, wave[first:first + len(got)], atol=1e-4)


def test_concatenation_of_streamed_segments_stays_lazy_and_maps_back(long_files, vad, tmp_path):
    _, files, truth = long_files
    path, wave = files[48000]
    nested = VADSegmentationStage(**VAD_ARGS, stream_above_sec=WINDOW, stream_block_sec=BLOCK,
                                  nested=True)
    nested._model = vad._model
    segmented = nested.process(batch([{"audio_filepath": path}]))
    segs = segmented.data[0]["segments"]
    joined = SegmentConcatenationStage(silence_duration_sec=0.5).process(segmented)
    (rec,) = joined.data
    lazy = rec["waveform"]
    assert isinstance(lazy, LazyConcatenation) and rec["num_segments"] == len(truth)
    gap = np.zeros(24000, dtype=np.float32)
    expected = np.concatenate([x for s in segs for x in (gap, np.asarray(s["waveform"]))][1:])
    assert np.array_equal(np.asarray(lazy), expected)
    save_task(joined, str(tmp_path / "joined"))
    assert load_task(str(tmp_path / "joined.task.json")).data[0]["waveform"] == lazy
    # the second VAD pass streams the concatenation; mapped back to the source file
    rows = TimestampMapperStage().process(vad.process(joined))
    assert len(rows.data) == len(truth)
    for row, (ts, te) in zip(rows.data, truth, strict=True):
        assert row["original_file"] == path
        assert abs(row["original_start_ms"] / 1000 - ts) <= 0.1
        assert abs(row["original_end_ms"] / 1000 - te) <= 0.1


def test_long_silent_and_truncated_files_rejected_with_reasons(tmp_path, vad):
    silent = T.write_audio(str(tmp_path / "silent.wav"), T.silence(WINDOW + 5, 16000), 16000)
    good = T.write_audio(str(tmp_path / "cut.wav"), T.noise(WINDOW + 5, 16000), 16000)
    raw = open(good, "rb").read()
    with open(good, "wb") as fh:
        fh.write(raw[:len(raw) // 2])
    assert lazy_waveform(silent).duration > WINDOW
    out = vad.process(batch([{"audio_filepath": silent}, {"audio_filepath": good}]))
    assert out.data == []
    assert [r.reason for r in vad.drain_rejected()] == ["silent_audio", "undecodable_audio"]


def test_composite_streams_long_audio_vad_only_and_full(long_files, tmp_path):
    d, files, truth = long_files
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"audio_filepath": files[48000][0]}) + "\n")
    off = {"enable": False}
    stream = {"mono_conversion": {"stream_above_sec": WINDOW},
              "vad": {**VAD_ARGS, "min_duration_sec": 1.0, "stream_block_sec": BLOCK}}
    T.make_tiny_sigmos_model(str(tmp_path / "sigmos.onnx"), bias=5.0)
    models = {"band_filter": {"model_path": T.make_band_classifier(str(tmp_path / "b.joblib"),
                                                                   constant=1)},
              "utmos": {"model_dir": T.make_tiny_utmos_checkout(str(tmp_path / "SpeechMOS")),
                        "mos_threshold": 0.0},
              "sigmos": {"model_path": str(tmp_path / "sigmos.onnx")}}
    configs = {"vad_only": {**stream, "speaker_separation": off, "band_filter": off,
                            "utmos": off, "sigmos": off},
               "full": {**stream, **models}}
    for label, config in configs.items():
        out = tmp_path / label
        result = Pipeline(label, stages=[
            ManifestReader(file_paths=str(manifest), records_per_task=1),
            AudioDataFilterStage(config=config),
            SegmentExtractionStage(output_dir=str(out))]).run(
                executor=LocalExecutor(cpus=1), summary=False)
        assert result.ok
        rows = [r for task in result for r in task.data]
        assert len(rows) == len(truth), label
        for row, (ts, te) in zip(sorted(rows, key=lambda r: r["original_start_ms"]), truth,
                                 strict=True):
            assert abs(row["original_start_ms"] / 1000 - ts) <= 0.1, label
            assert abs(row["original_end_ms"] / 1000 - te) <= 0.1, label
        assert len(list(out.iterdir())) == len(truth)
