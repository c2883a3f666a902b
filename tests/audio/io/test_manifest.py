import json

import pytest
from curator import EMPTY_TASK, FileGroupTask, Pipeline
from curator_audio import AudioBatch, ManifestReader, ManifestWriterStage

from tests.audio.conftest import write_manifest


def test_reader_partitions_deterministically_and_rejects_bad_lines(tmp_path):
    recs = [{"audio_filepath": f"/a/{i}.wav", "text": f"t{i}", "lang": "en"} for i in range(5)]
    path = write_manifest(tmp_path / "m.jsonl", recs[:3],
                          extra_lines=["{not json", "", json.dumps({"text": "no path"}),
                                       *[json.dumps(r) for r in recs[3:]]])
    reader = ManifestReader(file_paths=path, records_per_task=2)
    tasks = reader.process(EMPTY_TASK)
    assert [len(t.data) for t in tasks] == [2, 2, 1]
    assert [r["audio_filepath"] for t in tasks for r in t.data] == [r["audio_filepath"] for r in recs]
    assert tasks[0].data[0]["lang"] == "en"                       # extra fields pass through
    again = ManifestReader(file_paths=path, records_per_task=2).process(EMPTY_TASK)
    assert [t.task_id for t in tasks] == [t.task_id for t in again]
    assert len({t.task_id for t in tasks}) == 3
    rejected = reader.drain_rejected()
    assert [(r.reason, r.source) for r in rejected] == [
        ("malformed_manifest_line", f"{path}:4"), ("missing_audio_filepath", f"{path}:6")]


def test_relative_paths_resolve_against_the_manifest(tmp_path):
    path = write_manifest(tmp_path / "m.jsonl", [{"audio_filepath": "sub/x.wav"}])
    [task] = ManifestReader(file_paths=path).process(EMPTY_TASK)
    assert task.data[0]["audio_filepath"] == f"{tmp_path}/sub/x.wav"
    [task] = ManifestReader(file_paths=path, resolve_relative_paths=False).process(EMPTY_TASK)
    assert task.data[0]["audio_filepath"] == "sub/x.wav"


def test_config_errors_name_stage_and_parameter():
    with pytest.raises(ValueError, match="ManifestReader: file_paths"):
        ManifestReader()
    with pytest.raises(ValueError, match="records_per_task"):
        ManifestReader(file_paths="x.jsonl", records_per_task=0)
    with pytest.raises(ValueError, match="ManifestWriterStage: path"):
        ManifestWriterStage()


def test_writer_is_atomic_deterministic_and_drops_waveforms(tmp_path):
    import numpy as np

    batch = AudioBatch(task_id="abc_1", dataset_name="d", data=[
        {"audio_filepath": "a.wav", "duration": np.float32(1.5), "text": "hi",
         "waveform": np.zeros(4), "sample_rate": 16000, "extra": [1, 2]}])
    writer = ManifestWriterStage(path=str(tmp_path / "out"), drop_fields=["sample_rate"])
    out = writer.process(batch)
    assert isinstance(out, FileGroupTask) and out.data == [str(tmp_path / "out" / "abc_1.jsonl")]
    writer.process(batch)                                           # re-run overwrites
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["abc_1.jsonl"]
    rec = json.loads((tmp_path / "out" / "abc_1.jsonl").read_text())
    assert rec == {"audio_filepath": "a.wav", "duration": 1.5, "text": "hi", "extra": [1, 2]}


def test_read_write_roundtrip_in_pipeline(tmp_path):
    recs = [{"audio_filepath": f"/a/{i}.wav", "text": "é ü", "duration": i} for i in range(3)]
    path = write_manifest(tmp_path / "m.jsonl", recs, extra_lines=["garbage"])
    result = Pipeline("roundtrip", stages=[ManifestReader(file_paths=path, records_per_task=2),
                                           ManifestWriterStage(path=str(tmp_path / "out"))]).run()
    back = [json.loads(line) for f in sorted((tmp_path / "out").glob("*.jsonl"))
            for line in f.read_text().splitlines()]
    assert sorted(back, key=lambda r: r["duration"]) == recs
    assert result.rejected.counts == {"ManifestReader": 1}


def test_fsspec_paths_read_decode_and_write(audio_dir):
    import fsspec
    from curator_audio import GetAudioDurationStage, load_audio

    fs = fsspec.filesystem("memory")
    fs.pipe("/audio_t/clip.wav", (audio_dir / "tone.wav").read_bytes())
    fs.pipe("/audio_t/m.jsonl", b'{"audio_filepath": "clip.wav", "text": "x"}\n')
    [task] = ManifestReader(file_paths="memory://audio_t/m.jsonl").process(EMPTY_TASK)
    path = task.data[0]["audio_filepath"]
    assert path.startswith("memory://") and len(load_audio(path)[0]) == 16000
    task = GetAudioDurationStage().process(task)
    out = ManifestWriterStage(path="memory://audio_t/out").process(task)
    assert json.loads(fs.cat(out.data[0]))["duration"] == 1.0


def test_long_manifest_streams_batch_by_batch(tmp_path):
    """A long manifest is handed on one batch at a time: the next lines are read only when the
    executor asks for the next batch (a malformed last line is found only then), with the same
    ids as a whole read."""
    path = tmp_path / "long.jsonl"
    lines = [json.dumps({"audio_filepath": f"/a/{i}.wav"}) for i in range(10)] + ["{bad"]
    path.write_text("\n".join(lines) + "\n")
    reader = ManifestReader(file_paths=str(path), records_per_task=3)
    stream = reader.process_stream(EMPTY_TASK)
    first = next(stream)
    assert [len(b.data) for b in first] == [3] and not reader.drain_rejected()
    rest = [b for chunk in stream for b in chunk]
    assert [len(b.data) for b in rest] == [3, 3, 1]
    assert [r.reason for r in reader.drain_rejected()] == ["malformed_manifest_line"]
    whole = ManifestReader(file_paths=str(path), records_per_task=3).process(EMPTY_TASK)
    assert [b.task_id for b in whole] == [b.task_id for b in [*first, *rest]]
