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
