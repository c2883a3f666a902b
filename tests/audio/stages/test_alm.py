"""ALM windows: building from diarized segments (truncation at window edges as NeMo) and
removing overlapping windows."""

import pytest
from curator.errors import ConfigError
from curator_audio import AudioBatch
from curator_audio.stages.alm import ALMDataBuilderStage, ALMDataOverlapStage


def _seg(start, end, speaker, bw=16000, words=True):
    seg = {"start": start, "end": end, "speaker": speaker, "metrics": {"bandwidth": bw},
           "text": f"{speaker} talks"}
    if words:
        step = (end - start) / 4
        seg["words"] = [{"word": f"w{i}", "start": start + i * step, "end": start + (i + 1) * step}
                        for i in range(4)]
    return seg


def _entry(segments, sr=16000):
    return {"audio_filepath": "a.wav", "audio_sample_rate": sr, "segments": segments}


def _run(stage, entries):
    return stage.process(AudioBatch(task_id="t", dataset_name="d", data=entries)).data


def test_windows_with_truncation_at_the_edge():
    segs = [_seg(0, 4, "A"), _seg(4, 8, "B"), _seg(8, 12, "A")]
    stage = ALMDataBuilderStage(target_window_duration=10, tolerance=0.1)
    (out,) = _run(stage, [_entry(segs)])
    # from 0: A, B, then A cut at its last word ending by 11 s (the longest window)
    first = out["windows"][0]
    assert [(s["start"], s["end"]) for s in first["segments"]] == [(0, 4), (4, 8), (8, 11.0)]
    assert first["segments"][-1]["text"] == "w0 w1 w2"
    assert "words" not in first["segments"][0] and "segments" not in out
    assert first["speaker_durations"] == [7.0, 4.0, 0.0, 0.0, 0.0]
    assert out["truncation_events"] >= 1 and out["stats"]["total_segments"] == 3
    no_cut = _run(ALMDataBuilderStage(target_window_duration=10, truncation=False),
                  [_entry(segs)])[0]
    assert no_cut["windows"] == [] and no_cut["stats"]["lost_win"] == 3


def test_losses_are_counted_by_reason():
    segs = [_seg(0, 5, "A", bw=4000), _seg(5, 10, "A"), _seg(10, 15, "A"), _seg(15, 20, "B")]
    (out,) = _run(ALMDataBuilderStage(target_window_duration=10, truncation=False),
                  [_entry(segs)])
    stats = out["stats"]
    assert stats["lost_bw"] == 1 and stats["dur_lost_bw"] == 5
    # 5-15 has one speaker only; 10-20 has two: kept; 15-20 is too short
    assert stats["lost_spk"] == 1 and stats["lost_win"] == 1
    assert [(w["segments"][0]["start"], w["segments"][-1]["end"]) for w in out["windows"]] == [
        (10, 20)]
    low = _run(ALMDataBuilderStage(target_window_duration=10), [_entry(segs, sr=8000)])[0]
    assert low["windows"] == [] and low["stats"]["lost_sr"] == 4
    with pytest.raises(ConfigError):
        ALMDataBuilderStage(min_speakers=3, max_speakers=2)


def test_overlap_keeps_the_window_closest_to_target():
    def window(start, end):
        return {"segments": [{"start": start, "end": (start + end) / 2},
                             {"start": (start + end) / 2, "end": end}]}

    entry = {"audio_filepath": "a.wav", "stats": {"manifest_path": "m.jsonl"},
             "windows": [window(0, 10), window(2, 11), window(20, 30)]}
    (out,) = _run(ALMDataOverlapStage(overlap_percentage=50, target_duration=9), [entry])
    assert out["filtered"] == [(11, 2), (30, 20)]
    assert out["filtered_dur"] == 19 and out["total_dur_window"] == 29
    assert len(out["filtered_windows"]) == 2 and out["manifest_filepath"] == "m.jsonl"
    (keep_all,) = _run(ALMDataOverlapStage(overlap_percentage=100, target_duration=9), [entry])
    assert len(keep_all["filtered_windows"]) == 3
    with pytest.raises(ConfigError):
        ALMDataOverlapStage(overlap_percentage=101)
