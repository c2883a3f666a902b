"""The whole speech pipeline: manifest → decode → measure → ASR → WER → filter → write."""

import json

from curator import Pipeline
from curator_audio import (
    ASRStage,
    AudioDecodeStage,
    AudioRMSStage,
    AudioSilenceFractionStage,
    GetAudioDurationStage,
    GetPairwiseWerStage,
    ManifestReader,
    ManifestWriterStage,
    PreserveByValueStage,
)


def test_full_pipeline_runs_through_bad_records(manifest, tiny_model, tmp_path):
    out_dir, rej_dir = tmp_path / "out", tmp_path / "rejected"
    stages = [ManifestReader(file_paths=manifest, records_per_task=4),
              AudioDecodeStage(target_sample_rate=16000), GetAudioDurationStage(),
              AudioRMSStage(), AudioSilenceFractionStage(),
              ASRStage(model_dir=tiny_model), GetPairwiseWerStage(),
              PreserveByValueStage(input_value_key="silence_fraction", target_value=0.5,
                                   operator="lt"),
              ManifestWriterStage(path=str(out_dir))]
    result = Pipeline("speech", stages=stages).run(rejected_dir=str(rej_dir))
    written = [json.loads(line) for f in sorted(out_dir.glob("*.jsonl"))
               for line in f.read_text().splitlines()]
    names = sorted(r["audio_filepath"].rsplit("/", 1)[-1] for r in written)
    assert names == ["noise.flac", "speech.mp3", "speech.ogg", "tone.wav"]   # silence filtered
    for r in written:
        assert {"duration", "rms_db", "silence_fraction", "pred_text", "wer", "speaker"} <= set(r)
        assert "waveform" not in r
    assert result.rejected.counts == {"AudioDecodeStage": 4}
    assert result.rejected.total == 4
    rejected = [json.loads(line) for f in rej_dir.rglob("*.jsonl")
                for line in f.read_text().splitlines()]
    assert sorted(r["source"].rsplit("/", 1)[-1] for r in rejected) == [
        "empty.wav", "garbage.wav", "truncated.flac", "truncated.wav"]
    assert all(r["error"] and r["reason"] == "undecodable_audio" for r in rejected)
    # re-running overwrites the same files
    before = sorted(p.name for p in out_dir.iterdir())
    stages[-1].mode = "overwrite"  # a re-run into a used directory must say so
    Pipeline("speech", stages=stages).run()
    assert sorted(p.name for p in out_dir.iterdir()) == before
