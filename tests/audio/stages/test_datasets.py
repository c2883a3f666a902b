"""FLEURS and DNS read-speech initial manifests from tiny local copies in the published layout."""

from __future__ import annotations

import os

import pytest
from curator import EmptyTask
from curator.errors import ConfigError
from curator_audio import CreateInitialManifestFleursStage, CreateInitialManifestReadSpeechStage
from curator_audio.testing import tone, write_audio


def _fleurs(root, lang: str = "hy_am", split: str = "dev") -> str:
    base = root / lang
    (base / split).mkdir(parents=True)
    for name in ("a.wav", "b.wav"):
        write_audio(str(base / split / name), tone(seconds=0.1))
    (base / f"{split}.tsv").write_text(
        "1\ta.wav\tBarev dzez\tbarev dzez\n"
        "2\tb.wav\tLav em\tlav em\n"
        "3\tmissing.wav\tno file\tno file\n"
        "broken line\n", encoding="utf-8")
    return str(root)


def test_fleurs_records_from_the_staged_layout_and_bad_lines_rejected(tmp_path) -> None:
    raw = _fleurs(tmp_path)
    stage = CreateInitialManifestFleursStage(lang="hy_am", split="dev", raw_data_dir=raw,
                                             records_per_task=1)
    batches = stage.process(EmptyTask())
    records = [r for b in batches for r in b.data]
    assert records == [
        {"audio_filepath": os.path.join(raw, "hy_am", "dev", "a.wav"), "text": "Barev dzez"},
        {"audio_filepath": os.path.join(raw, "hy_am", "dev", "b.wav"), "text": "Lav em"}]
    assert len({b.task_id for b in batches}) == 2
    assert [b.task_id for b in stage.process(EmptyTask())] == [b.task_id for b in batches]
    assert batches[0].dataset_name == f"Fleurs_hy_am_dev_{raw}"
    reasons = sorted(r.reason for r in stage.drain_rejected())
    assert reasons == ["malformed_transcript_line", "malformed_transcript_line",
                       "missing_audio", "missing_audio"]  # two runs


def test_fleurs_missing_copy_names_the_files_to_place(tmp_path) -> None:
    with pytest.raises(ValueError, match="lang is required"):
        CreateInitialManifestFleursStage(split="dev", raw_data_dir=str(tmp_path))
    stage = CreateInitialManifestFleursStage(lang="fr_fr", split="test", raw_data_dir=str(tmp_path))
    with pytest.raises(ConfigError, match="data/fr_fr/test.tsv"):
        stage.process(EmptyTask())
    (tmp_path / "fr_fr").mkdir()
    (tmp_path / "fr_fr" / "test.tsv").write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"data/fr_fr/audio/test\.tar\.gz"):
        stage.process(EmptyTask())


def test_readspeech_records_metadata_rates_and_max_samples(tmp_path) -> None:
    folder = tmp_path / "mnt" / "dnsv5" / "clean" / "read_speech"
    folder.mkdir(parents=True)
    names = [f"book_0001{i}_chp_0002_reader_0300{i}_{i}.wav" for i in range(3)]
    for name in names:
        write_audio(str(folder / name), tone(seconds=0.05, sr=48000), sr=48000)
    (folder / "book_00000_chp_0_reader_1_0.wav").write_bytes(b"not a wav")  # sorts first
    stage = CreateInitialManifestReadSpeechStage(raw_data_dir=str(tmp_path), max_samples=2)
    records = [r for b in stage.process(EmptyTask()) for r in b.data]
    assert [os.path.basename(r["audio_filepath"]) for r in records] == names[:2]
    assert records[0] == {"audio_filepath": str(folder / names[0]), "text": "",
                          "book_id": "00010", "reader_id": "03000", "sample_rate": 48000}
    assert [r.reason for r in stage.drain_rejected()] == ["undecodable_audio"]
    everything = CreateInitialManifestReadSpeechStage(raw_data_dir=str(tmp_path), max_samples=-1)
    assert sum(len(b.data) for b in everything.process(EmptyTask())) == 3


def test_readspeech_without_wavs_says_what_to_extract(tmp_path) -> None:
    with pytest.raises(ConfigError, match="read_speech.tgz.partaa"):
        CreateInitialManifestReadSpeechStage(raw_data_dir=str(tmp_path)).process(EmptyTask())
