"""Initial manifests of public speech datasets read from a local copy in their published layout:
FLEURS (``CreateInitialManifestFleursStage``) and the DNS Challenge 5 read speech
(``CreateInitialManifestReadSpeechStage``). Nothing is downloaded: a missing copy is a
``ConfigError`` naming what to place where."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from curator import ProcessingStage, Task, stable_id
from curator.errors import ConfigError
from curator.stages.base import StageIO

from curator_audio.decode import AudioDecodeError, audio_info
from curator_audio.tasks import AudioBatch

__all__ = ["CreateInitialManifestFleursStage", "CreateInitialManifestReadSpeechStage",
           "FLEURS_HF_REPO_ID", "DNS_READSPEECH_URL", "get_fleurs_filenames"]

FLEURS_HF_REPO_ID = "google/fleurs"
DNS_READSPEECH_URL = ("https://dnschallengepublic.blob.core.windows.net/dns5archive/"
                      "V5_training_dataset/Track1_Headset/read_speech.tgz.partaa")
_FLEURS_MIN_COLUMNS = 3  # id, file name, raw transcription, ...
_READSPEECH_SUBDIRS = ("read_speech", "mnt/dnsv5/clean/read_speech",
                       "data/mnt/dnsv5/clean/read_speech")


def get_fleurs_filenames(lang: str, split: str) -> tuple[str, str]:
    """The ``(transcript_tsv, audio_archive)`` paths of one language and split in the
    ``google/fleurs`` dataset repository (e.g. ``data/hy_am/dev.tsv``,
    ``data/hy_am/audio/dev.tar.gz``)."""
    return f"data/{lang}/{split}.tsv", f"data/{lang}/audio/{split}.tar.gz"


class _LocalDatasetSource(ProcessingStage[Task, AudioBatch]):
    modality: ClassVar[str] = "audio"
    kind: ClassVar[str] = "reader"
    records_per_task: int = 1000

    @property
    def is_source(self) -> bool:
        return True

    def outputs(self) -> StageIO:
        return ["data"], [self.filepath_key, self.text_key]

    def process(self, task: Task) -> list[AudioBatch]:
        return [batch for chunk in self.process_stream(task) for batch in chunk]

    def _batches(self, key: str, records: Iterator[dict[str, Any]], dataset_name: str,
                 source: str) -> Iterator[list[AudioBatch]]:
        chunk: list[dict[str, Any]] = []
        index = 0
        for record in records:
            chunk.append(record)
            if len(chunk) >= self.records_per_task:
                yield [self._batch(key, index, chunk, dataset_name, source)]
                chunk, index = [], index + 1
        if chunk:
            yield [self._batch(key, index, chunk, dataset_name, source)]

    def _batch(self, key: str, index: int, records: list[dict[str, Any]], dataset_name: str,
               source: str) -> AudioBatch:
        return AudioBatch(task_id=f"{key}_{stable_id(source)}_{index}", dataset_name=dataset_name,
                          data=records, metadata={"source_files": [source]},
                          filepath_key=self.filepath_key)


@dataclass
class CreateInitialManifestFleursStage(_LocalDatasetSource):
    """One record per FLEURS utterance (``{filepath_key: abs wav path, text_key: raw
    transcription}``), read from ``<raw_data_dir>/<lang>/<split>.tsv`` and the extracted audio in
    ``<raw_data_dir>/<lang>/<split>/`` (NeMo Curator's staged layout: the ``google/fleurs`` files
    ``data/<lang>/<split>.tsv`` and ``data/<lang>/audio/<split>.tar.gz`` extracted there).

    A source stage: tasks of ``records_per_task`` records with ids from the transcript path. A
    transcript line with fewer than three tab-separated columns, or naming a wav file that is not
    in the audio folder, goes to the rejected sink (``malformed_transcript_line``,
    ``missing_audio``). ``auto_download`` and ``cache_dir`` are accepted for NeMo's signature;
    nothing is downloaded.
    """

    name: str = "CreateInitialManifestFleurs"
    lang: str = ""
    split: str = ""
    raw_data_dir: str = ""
    filepath_key: str = "audio_filepath"
    text_key: str = "text"
    batch_size: int = 1
    cache_dir: str | None = None
    auto_download: bool = True
    records_per_task: int = 1000

    def __post_init__(self) -> None:
        for attr in ("lang", "split", "raw_data_dir"):
            if not getattr(self, attr):
                raise ConfigError(f"{attr} is required for CreateInitialManifestFleursStage")

    def language_data_dir(self) -> str:
        """``<raw_data_dir>/<lang>``: every language has the same ``<split>.tsv`` names."""
        return os.path.join(self.raw_data_dir, self.lang)

    def _prestaged_paths(self, dst_folder: str) -> tuple[str, str]:
        return os.path.join(dst_folder, f"{self.split}.tsv"), os.path.join(dst_folder, self.split)

    def is_prestaged(self, dst_folder: str) -> bool:
        """Whether the transcript and the audio folder are both in ``dst_folder``."""
        tsv_path, audio_root = self._prestaged_paths(dst_folder)
        return os.path.isfile(tsv_path) and os.path.isdir(audio_root)

    def locate_prestaged_files(self, dst_folder: str) -> tuple[str, str]:
        """``(transcript_tsv, audio_root)`` in ``dst_folder``; a ``ConfigError`` naming the
        ``google/fleurs`` files to place there when either is missing."""
        tsv_path, audio_root = self._prestaged_paths(dst_folder)
        tsv_name, archive_name = get_fleurs_filenames(self.lang, self.split)
        if not os.path.isfile(tsv_path):
            raise ConfigError(
                f"{self.name}: FLEURS transcript not found at {tsv_path}. Curator does not "
                f"download datasets: copy {tsv_name} from the {FLEURS_HF_REPO_ID} dataset "
                f"repository to {tsv_path}")
        if not os.path.isdir(audio_root):
            raise ConfigError(
                f"{self.name}: FLEURS audio folder not found at {audio_root}. Curator does not "
                f"download datasets: extract {archive_name} from the {FLEURS_HF_REPO_ID} "
                f"dataset repository into {dst_folder} (it unpacks to {self.split}/)")
        return tsv_path, audio_root

    def process_stream(self, task: Task) -> Iterator[list[AudioBatch]]:
        """Tasks as the transcript is read (a large split is never held whole)."""
        tsv_path, audio_root = self.locate_prestaged_files(self.language_data_dir())
        dataset_name = f"Fleurs_{self.lang}_{self.split}_{self.raw_data_dir}"
        yield from self._batches("fleurs", self._records(tsv_path, audio_root), dataset_name,
                                 tsv_path)

    def _records(self, tsv_path: str, audio_root: str) -> Iterator[dict[str, Any]]:
        with open(tsv_path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                where = f"{tsv_path}:{lineno}"
                parts = line.rstrip("\n").split("\t")
                if len(parts) < _FLEURS_MIN_COLUMNS:
                    self.reject(None, "malformed_transcript_line",
                                record={"line": line[:1000], "lineno": lineno},
                                error=f"{len(parts)} tab-separated columns, expected at least "
                                      f"{_FLEURS_MIN_COLUMNS} (id, file name, transcription)",
                                source=where)
                    continue
                wav = os.path.abspath(os.path.join(audio_root, parts[1]))
                record = {self.filepath_key: wav, self.text_key: parts[2]}
                if not os.path.isfile(wav):
                    self.reject(None, "missing_audio", record=record,
                                error=f"{parts[1]} is not in {audio_root}", source=where)
                    continue
                yield record


@dataclass
class CreateInitialManifestReadSpeechStage(_LocalDatasetSource):
    """One record per wav file of the DNS Challenge 5 read speech (Track 1 headset) in
    ``raw_data_dir`` (the extracted ``read_speech.tgz``: wav files directly there, in
    ``read_speech/``, ``mnt/dnsv5/clean/read_speech/``, or the first folder below holding wav
    files), sorted by path, the first ``max_samples`` (all when ``<= 0``).

    Each record holds the absolute path, an empty ``text_key``, ``sample_rate`` (read from the
    file's header; NeMo writes 48000) and ``book_id`` / ``reader_id`` parsed from names like
    ``book_00123_chp_0004_reader_05678_7.wav``. A file whose header cannot be read goes to the
    rejected sink (``undecodable_audio``) and does not count towards ``max_samples``.
    ``auto_download`` is accepted for NeMo's signature; nothing is downloaded.
    """

    raw_data_dir: str = ""
    max_samples: int = 5000
    auto_download: bool = True
    filepath_key: str = "audio_filepath"
    text_key: str = "text"
    name: str = "CreateInitialManifestReadSpeech"
    batch_size: int = 1
    records_per_task: int = 1000

    def __post_init__(self) -> None:
        if not self.raw_data_dir:
            raise ConfigError("raw_data_dir is required for CreateInitialManifestReadSpeechStage")

    def _find_extracted_wavs(self, search_dir: str) -> str | None:
        if not os.path.isdir(search_dir):
            return None
        for sub in ("", *_READSPEECH_SUBDIRS):
            folder = os.path.join(search_dir, sub) if sub else search_dir
            if os.path.isdir(folder) and any(f.endswith(".wav") for f in os.listdir(folder)):
                return folder
        for root, dirs, files in os.walk(search_dir):
            dirs.sort()
            if any(f.endswith(".wav") for f in files):
                return root
        return None

    @staticmethod
    def parse_filename(filename: str) -> dict[str, str]:
        """``book_id``, ``chapter`` and ``reader_id`` from a read-speech file name (empty when
        absent)."""
        parts = os.path.splitext(filename)[0].split("_")
        meta = {"book_id": "", "chapter": "", "reader_id": ""}
        for key, tag in (("book_id", "book"), ("chapter", "chp"), ("reader_id", "reader")):
            if tag in parts and parts.index(tag) + 1 < len(parts):
                meta[key] = parts[parts.index(tag) + 1]
        return meta

    def process_stream(self, task: Task) -> Iterator[list[AudioBatch]]:
        """Tasks as the files' headers are read."""
        folder = self._find_extracted_wavs(self.raw_data_dir)
        if folder is None:
            raise ConfigError(
                f"{self.name}: no .wav files under {self.raw_data_dir}. Curator does not download"
                f" datasets: download {DNS_READSPEECH_URL} and extract it (tar -xzf ... "
                f"--ignore-zeros) into {self.raw_data_dir}, so that read_speech/*.wav is there")
        yield from self._batches("readspeech", self._records(folder), "DNS-ReadSpeech", folder)

    def _records(self, folder: str) -> Iterator[dict[str, Any]]:
        paths = sorted(os.path.join(root, f) for root, _, files in os.walk(folder)
                       for f in files if f.endswith(".wav"))
        count = 0
        for path in paths:
            if 0 < self.max_samples <= count:
                return
            path = os.path.abspath(path)
            meta = self.parse_filename(os.path.basename(path))
            record = {self.filepath_key: path, self.text_key: "",
                      "book_id": meta["book_id"], "reader_id": meta["reader_id"]}
            try:
                record["sample_rate"] = audio_info(path)["sample_rate"]
            except (AudioDecodeError, OSError) as exc:
                self.reject(None, "undecodable_audio", record=record, error=exc, source=path)
                continue
            count += 1
            yield record
