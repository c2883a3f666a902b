import pytest
from curator import EMPTY_TASK
from curator.testing import check_stage_contract
from curator_audio import AudioDecodeStage, GetAudioDurationStage, ManifestReader


def _batch(manifest):
    [task] = ManifestReader(file_paths=manifest).process(EMPTY_TASK)
    return task


def test_duration_stage_measures_and_rejects_each_bad_file(manifest):
    stage = GetAudioDurationStage()
    out = stage.process(_batch(manifest))
    durations = {r["audio_filepath"].rsplit("/", 1)[-1]: r["duration"] for r in out.data}
    assert durations["speech.ogg"] == pytest.approx(1.5)
    assert durations["tone.wav"] == pytest.approx(1.0)
    assert out.data[0]["speaker"] == 0                        # other fields pass through
    rejected = stage.drain_rejected()
    assert {r.source.rsplit("/", 1)[-1] for r in rejected} == {"empty.wav", "truncated.wav",
                                                              "garbage.wav"}
    assert all(r.error and r.reason == "unreadable_audio" for r in rejected)


def test_decode_stage_adds_waveform_resampled_and_rejects_corrupt(manifest):
    stage = AudioDecodeStage(target_sample_rate=8000)
    out = stage.process(_batch(manifest))
    assert len(out.data) == 5
    rec = next(r for r in out.data if r["audio_filepath"].endswith("tone.wav"))
    assert rec["sample_rate"] == 8000 and len(rec["waveform"]) == 8000
    rejected = stage.drain_rejected()
    assert len(rejected) == 4 and all(r.reason == "undecodable_audio" for r in rejected)
    assert all("waveform" not in r.record and r.record["audio_filepath"] for r in rejected)
    # the duration stage then uses the decoded waveform
    out = GetAudioDurationStage().process(out)
    assert next(r["duration"] for r in out.data if r["audio_filepath"].endswith("ogg")) == 1.5


def test_contracts(manifest):
    check_stage_contract(AudioDecodeStage(), _batch(manifest))
    check_stage_contract(GetAudioDurationStage(), _batch(manifest))
