"""A bad record at the very end of a source's input reaches the rejected sink: the audio
sources (``process_stream``) book it after their last batch, and the executor drains it."""

from __future__ import annotations

import json

import pytest
from curator import Pipeline
from curator_audio import AudioDirectoryReader, ManifestReader, ManifestWriterStage
from curator_audio import testing as T

from tests.audio.conftest import write_manifest


@pytest.fixture
def executor(request):
    if request.param == "local":
        from curator import LocalExecutor

        return LocalExecutor(num_workers=1)
    request.getfixturevalue("ray_cluster")
    from curator.executors.ray_data import RayDataExecutor

    return RayDataExecutor()


@pytest.mark.parametrize("executor", ["local", pytest.param("ray_data", marks=pytest.mark.ray)],
                         indirect=True)
def test_malformed_last_manifest_line_is_rejected(executor, tmp_path):
    recs = [{"audio_filepath": f"/a/{i}.wav", "text": f"t{i}"} for i in range(12)]
    path = write_manifest(tmp_path / "m.jsonl", recs, extra_lines=['{"audio_filepath": '])
    result = Pipeline("last_line", stages=[
        ManifestReader(file_paths=path, records_per_task=4),
        ManifestWriterStage(path=str(tmp_path / "out"))]).run(executor, summary=False)
    back = [json.loads(line) for f in sorted((tmp_path / "out").glob("*.jsonl"))
            for line in f.read_text().splitlines()]
    assert len(back) == 12
    assert result.rejected.counts == {"ManifestReader": 1}
    [rec] = result.rejected.records
    assert (rec.reason, rec.source) == ("malformed_manifest_line", f"{path}:13")
    assert result.stats.stages[0].rejected_by_reason == {"malformed_manifest_line": 1}
    assert result.ok  # a record rejected by design leaves the run ok


def test_unreadable_last_audio_file_is_rejected(tmp_path):
    for i in range(4):
        T.write_audio(str(tmp_path / f"a{i}.wav"), T.tone(440, 0.1, 16000), 16000)
    (tmp_path / "z_garbage.wav").write_bytes(b"not audio at all")  # sorted last, alone in a task
    result = Pipeline("last_file", stages=[
        AudioDirectoryReader(path=str(tmp_path), files_per_task=2),
        ManifestWriterStage(path=str(tmp_path / "out"))]).run(summary=False)
    assert sum(len(f.read_text().splitlines())
               for f in (tmp_path / "out").glob("*.jsonl")) == 4
    assert result.rejected.counts == {"AudioDirectoryReader": 1}
    [rec] = result.rejected.records
    assert rec.reason == "unreadable_audio" and rec.source.endswith("z_garbage.wav")
    assert result.ok
