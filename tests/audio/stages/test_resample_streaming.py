"""ResampleAudioStage streams long recordings (issue 46): a file longer than ``stream_above_sec``
is read block by block as a LazyResampled (each block resampled with the filter's context
carried) and written block by block. The samples equal resampling the whole file, VAD on them
finds the same spans, and the stage holds a block, not the file. The window here is small (12 s,
blocks of 4 s) so a ~40 s file spans many blocks."""

import tracemalloc

import numpy as np
import pytest
import soundfile as sf
from curator.task_files import load_task, save_task
from curator_audio import testing as T
from curator_audio.decode import (
    LazyConcatenation,
    LazyResampled,
    lazy_waveform,
    record_waveform,
    resample,
)
from curator_audio.stages.common import item_waveform
from curator_audio.stages.preprocessing import ResampleAudioStage
from curator_audio.stages.vad_segmentation import VADSegmentationStage

from .long_scene import BLOCK, LAYOUT, VAD_ARGS, WINDOW, batch

pytestmark = pytest.mark.skipif(not T.espeak_available(),
                                reason="espeak-ng is not installed (apt-get install espeak-ng)")

LSB = 1 / 32768     # one step of the PCM_16 files written


def _stage(out_dir, **kw):
    return ResampleAudioStage(**{"resampled_audio_dir": str(out_dir), "target_sample_rate": 16000,
                                 "stream_above_sec": WINDOW, "stream_block_sec": BLOCK, **kw})


@pytest.fixture(scope="module")
def long_file(tmp_path_factory):
    """A ~40 s recording at 48 kHz (PCM_16) and a stereo one at 22.05 kHz whose channels differ,
    with their decoded samples."""
    d = tmp_path_factory.mktemp("long")
    wave, _ = T.speech_scene(LAYOUT, sr=48000, seed=7)
    assert len(wave) / 48000 > 3 * WINDOW
    mono = T.write_audio(str(d / "long48k.wav"), wave, 48000)
    low = resample(wave, 48000, 22050)
    stereo = np.stack([low, 0.5 * np.roll(low, 3000)], axis=1)
    stereo_path = T.write_audio(str(d / "long22k_stereo.wav"), stereo, 22050)
    return (mono, lazy_waveform(mono).load()), (stereo_path, sf.read(stereo_path,
                                                                     dtype="float32")[0])


@pytest.fixture(scope="module")
def vad():
    stage = VADSegmentationStage(**VAD_ARGS, stream_above_sec=WINDOW, stream_block_sec=BLOCK)
    stage.setup()
    return stage


def test_lazy_resampled_equals_whole_file_resample_and_vad_streams_it(long_file, vad, tmp_path):
    (path, wave), _ = long_file
    whole = resample(wave, 48000, 16000)
    lazy = LazyResampled(lazy_waveform(path), 16000)
    assert len(lazy) == len(whole) and lazy.sample_rate == 16000
    blocks = list(lazy.blocks(BLOCK))
    assert len(blocks) > 5 and max(len(b) for b in blocks) < 1.1 * BLOCK * 16000
    assert np.abs(np.concatenate(blocks) - whole).max() < 1e-5
    for first, last in ((0, 7), (123_457, 301_000), (len(whole) - 999, len(whole) + 10)):
        piece = lazy.span(first, last)
        assert len(piece) == len(whole[first:last])
        assert np.abs(np.asarray(piece) - whole[first:last]).max() < 1e-5
    # the record's waveform as downstream stages get it, and stored as a reference
    record = {"waveform": lazy, "sample_rate": 16000}
    assert np.abs(item_waveform(record)[0] - whole).max() < 1e-5
    got, sr = record_waveform({"waveform": lazy_waveform(path), "sample_rate": 48000},
                              target_sr=16000)
    assert sr == 16000 and np.abs(got - whole).max() < 1e-5
    joined = LazyConcatenation((lazy.span(100, 900), 50, lazy.span(5000, 6000)), 16000)
    assert np.abs(np.asarray(joined) - np.concatenate(
        [whole[100:900], np.zeros(50, np.float32), whole[5000:6000]])).max() < 1e-5
    save_task(batch([record, {"waveform": joined, "sample_rate": 16000}]), str(tmp_path / "t"))
    assert [r["waveform"] for r in load_task(str(tmp_path / "t.task.json")).data] == \
        [lazy, joined]
    # VAD reads it block by block (its segments are spans of it) and finds the whole array's
    whole_vad = VADSegmentationStage(**VAD_ARGS, stream_above_sec=None)
    whole_vad._model = vad._model
    streamed = vad.process(batch([{"waveform": lazy, "sample_rate": 16000}]))
    decoded = whole_vad.process(batch([{"waveform": whole, "sample_rate": 16000}]))
    assert streamed.data and all(isinstance(r["waveform"], LazyResampled)
                                 for r in streamed.data)
    assert [(r["start_ms"], r["end_ms"]) for r in streamed.data] == \
        [(r["start_ms"], r["end_ms"]) for r in decoded.data]
    for seg, arr in zip(streamed.data, decoded.data, strict=True):
        assert np.abs(np.asarray(seg["waveform"]) - arr["waveform"]).max() < 1e-5


def test_stage_streams_long_files_to_the_whole_file_result(long_file, vad, tmp_path):
    (path, wave), (stereo_path, stereo) = long_file
    rows = {}
    for label, above in (("streamed", WINDOW), ("whole", None)):
        stage = _stage(tmp_path / label, stream_above_sec=above)
        rows[label] = stage.process(batch([{"audio_filepath": path}])).data[0]
    streamed, whole = (sf.read(rows[k]["resampled_audio_filepath"], dtype="float32")[0]
                       for k in ("streamed", "whole"))
    expected = resample(wave, 48000, 16000)
    assert len(streamed) == len(whole) == len(expected)
    # both quantised to PCM_16 from samples ~1e-7 apart: at most one step apart, rarely
    assert np.abs(streamed - whole).max() <= LSB * 1.001
    assert np.count_nonzero(streamed != whole) < 1e-3 * len(whole)
    assert np.abs(streamed - expected).max() <= LSB
    assert rows["streamed"]["duration"] == rows["whole"]["duration"] == len(expected) / 16000
    # VAD (streaming the resampled file) finds the same spans in both
    vad_rs = VADSegmentationStage(**VAD_ARGS, stream_above_sec=WINDOW, stream_block_sec=BLOCK,
                                  filepath_key="resampled_audio_filepath")
    vad_rs._model = vad._model
    spans = {k: [(r["start_ms"], r["end_ms"]) for r in vad_rs.process(batch([row])).data]
             for k, row in rows.items()}
    assert spans["streamed"] and spans["streamed"] == spans["whole"]
    # a stereo file kept stereo: each channel streamed
    stage = _stage(tmp_path / "stereo", target_nchannels=2)
    (row,) = stage.process(batch([{"audio_filepath": stereo_path}])).data
    got, sr = sf.read(row["resampled_audio_filepath"], dtype="float32")
    assert sr == 16000 and got.shape[1] == 2
    for c in range(2):
        exp = resample(np.ascontiguousarray(stereo[:, c]), 22050, 16000)
        assert len(got) == len(exp) and np.abs(got[:, c] - exp).max() <= LSB


def test_streaming_resample_holds_a_block_not_the_file(long_file, tmp_path):
    """Python-side peak allocation (NumPy arrays are traced) while resampling the 48 kHz file:
    a few 2 s blocks, far below the decoded file (which the whole-file path holds)."""
    (path, wave), _ = long_file
    whole_bytes = len(wave) * 4
    peaks = {}
    for label, above in (("whole", None), ("streamed", WINDOW)):
        stage = ResampleAudioStage(resampled_audio_dir=str(tmp_path / label),
                                   target_sample_rate=16000, stream_above_sec=above,
                                   stream_block_sec=2.0)
        tracemalloc.start()
        try:
            out = stage.process(batch([{"audio_filepath": path}]))
            peaks[label] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert len(out.data) == 1
    assert peaks["whole"] >= whole_bytes
    assert peaks["streamed"] < whole_bytes / 4, (peaks, whole_bytes)


def test_long_file_failing_midway_is_rejected_and_leaves_no_file(tmp_path):
    """Non-finite samples 20 s into a 30 s file: found while streaming, after blocks were
    written; the record is rejected with its reason and no (partial) file is left."""
    wave = T.noise(WINDOW + 18, 16000)
    wave[20 * 16000] = np.nan
    path = str(tmp_path / "nan.wav")
    sf.write(path, wave, 16000, subtype="FLOAT")
    stage = _stage(tmp_path / "out", target_sample_rate=8000)
    assert stage.process(batch([{"audio_filepath": path}])).data == []
    (rejected,) = stage.drain_rejected()
    assert rejected.reason == "undecodable_audio" and "non-finite" in str(rejected.error)
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
