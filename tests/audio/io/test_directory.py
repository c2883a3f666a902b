import pytest
from curator import EMPTY_TASK
from curator_audio import AudioDirectoryReader


def test_directory_reader_builds_manifest_and_rejects_unreadable(audio_dir):
    reader = AudioDirectoryReader(path=str(audio_dir), files_per_task=3)
    tasks = reader.process(EMPTY_TASK)
    records = {r["audio_filepath"].rsplit("/", 1)[-1]: r for t in tasks for r in t.data}
    assert set(records) == {"tone.wav", "noise.flac", "silence.wav", "speech.ogg", "speech.mp3",
                            "tone8k.wav", "truncated.flac"}   # its header is intact: decode rejects it
    assert records["speech.ogg"]["duration"] == pytest.approx(1.5)
    assert records["tone.wav"]["text"] == "a pure tone"
    assert records["noise.flac"]["text"] == ""
    rejected = {r.source.rsplit("/", 1)[-1] for r in reader.drain_rejected()}
    assert rejected == {"empty.wav", "truncated.wav", "garbage.wav"}   # header-level failures
    ids = [t.task_id for t in tasks]
    assert ids == [t.task_id for t in AudioDirectoryReader(path=str(audio_dir),
                                                           files_per_task=3).process(EMPTY_TASK)]


def test_directory_reader_needs_a_path():
    with pytest.raises(ValueError, match="AudioDirectoryReader: path"):
        AudioDirectoryReader()


def test_directory_reader_streams_batch_by_batch(tmp_path):
    """A big directory is handed on one batch at a time: a file's header is read only when
    the executor asks for its batch (the unreadable last file is found only then), with the
    same ids as a whole read."""
    from curator_audio import testing as T

    for i in range(7):
        T.write_audio(str(tmp_path / f"a{i}.wav"), T.tone(440, 0.2, 16000), 16000)
    (tmp_path / "z_garbage.wav").write_bytes(b"not audio at all")
    reader = AudioDirectoryReader(path=str(tmp_path), files_per_task=3)
    stream = reader.process_stream(EMPTY_TASK)
    first = next(stream)
    assert [len(b.data) for b in first] == [3] and not reader.drain_rejected()
    rest = [b for chunk in stream for b in chunk]
    assert [len(b.data) for b in rest] == [3, 1]
    assert [r.source.rsplit("/", 1)[-1] for r in reader.drain_rejected()] == ["z_garbage.wav"]
    whole = AudioDirectoryReader(path=str(tmp_path), files_per_task=3).process(EMPTY_TASK)
    assert [b.task_id for b in whole] == [b.task_id for b in [*first, *rest]]
