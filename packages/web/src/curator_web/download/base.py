"""The download -> iterate -> extract chain (NeMo Curator's names and roles).

Leaf classes stay short: a :class:`URLGenerator` lists URLs, a :class:`DocumentDownloader` names
the local file for a URL (fetching, resume, size check and atomic placement are done here), a
:class:`DocumentIterator` turns a file into raw records and a :class:`DocumentExtractor` turns a
raw record into a document. The stages below do the bookkeeping: ids, limits, filename column,
rejected records (with file and offset) and counts of records skipped by design.
"""

from __future__ import annotations

import copy
import logging
import os
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from curator import CompositeStage, FileGroupTask, ProcessingStage, Resources
from curator.errors import ConfigError
from curator.params import init_signature, typed_new
from curator.stages.lifecycle import ensure_setup
from curator.tasks import EmptyTask, stable_id
from curator_text.tasks import DocumentBatch

from curator_web.download.http import DownloadError, _local_path, fetch, is_local

__all__ = ["URLGenerator", "DocumentDownloader", "DocumentIterator", "DocumentExtractor",
           "URLGenerationStage", "DocumentDownloadStage", "DocumentIterateExtractStage",
           "DocumentDownloadExtractStage", "LocalFilesUrlGenerator", "DownloadError"]

log = logging.getLogger(__name__)


class URLGenerator(ABC):
    """Lists the URLs (or local paths) of the files to download."""

    __new__, __signature__ = typed_new, init_signature  # types checked as in specs

    @abstractmethod
    def generate_urls(self) -> list[str]:
        """The URLs, in a deterministic order."""


class LocalFilesUrlGenerator(URLGenerator):
    """Files a user already has: a directory, glob, ``file://`` URL or list of them."""

    def __init__(self, file_paths: str | list[str], file_extensions: list[str] | None = None):
        self.file_paths = file_paths
        self.file_extensions = file_extensions

    def generate_urls(self) -> list[str]:
        from curator.io import expand_paths

        paths = [self.file_paths] if isinstance(self.file_paths, str) else list(self.file_paths)
        paths = [_local_path(p) for p in paths]
        local_dirs = [p for p in paths if "://" not in p and os.path.isdir(p)]
        found = [f for d in local_dirs for f in _walk(d, self.file_extensions)]
        rest = [p for p in paths if p not in local_dirs]
        if rest or not found:
            found += expand_paths(rest or paths, self.file_extensions)
        return sorted(set(found))


def _walk(directory: str, extensions: list[str] | None) -> list[str]:
    """The files under a local directory, following symbolic links (to files and to
    directories), hidden files left out."""
    out = []
    for root, dirs, files in os.walk(directory, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out += [os.path.join(root, f) for f in files if not f.startswith(".")
                and (not extensions or f.endswith(tuple(extensions)))
                and os.path.isfile(os.path.join(root, f))]
    return out


class DocumentDownloader(ABC):
    """Downloads one URL into ``download_dir``; subclasses only name the output file.

    ``download(url)`` keeps a complete file already there, resumes a partial one (HTTP Range),
    checks the size and places the file atomically; local paths and ``file://`` URLs are used
    where they are, without a copy. Override :meth:`_download_to_path` for another transport.
    """

    __new__, __signature__ = typed_new, init_signature  # types checked as in specs

    def __init__(self, download_dir: str, verbose: bool = False, retries: int = 3,
                 timeout: float = 60.0) -> None:
        self._download_dir = download_dir
        self._verbose = verbose
        self.retries = retries
        self.timeout = timeout

    @abstractmethod
    def _get_output_filename(self, url: str) -> str:
        """The file name (no directory) for ``url``."""

    def _download_to_path(self, url: str, path: str) -> tuple[bool, str | None]:
        """Fetch ``url`` to ``path``; ``(success, error message)``."""
        try:
            fetch(url, path, retries=self.retries, timeout=self.timeout)
        except DownloadError as exc:
            return False, str(exc)
        return True, None

    def download(self, url: str) -> str:
        """The local path of ``url``'s content; raises :class:`DownloadError` on failure."""
        if is_local(url):
            path = _local_path(url)
            if not os.path.exists(path):
                raise DownloadError(f"{type(self).__name__}: local file {path} does not exist")
            return path
        path = os.path.join(self._download_dir, self._get_output_filename(url))
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return path
        ok, error = self._download_to_path(url, path)
        if not ok:
            raise DownloadError(f"{type(self).__name__}: {error}")
        if self._verbose:
            log.info("downloaded %s to %s (%d bytes)", url, path, os.path.getsize(path))
        return path

    def num_workers_per_node(self) -> int | None:
        """A cap on concurrent downloads per machine (``None``: no cap)."""
        return None


class _Reporting:
    """Rejected-record and skip bookkeeping shared by iterators and extractors."""

    __new__, __signature__ = typed_new, init_signature  # types checked as in specs

    def reject(self, reason: str, *, error: BaseException | str | None = None,
               **record: Any) -> None:
        """Report a malformed record (with where it was: file, offset, url …)."""
        self.__dict__.setdefault("_rejected", []).append((reason, error, record))

    def skip(self, reason: str, n: int = 1, **where: Any) -> None:
        """Count a record skipped by design (wrong type, not HTML, no text …); ``where``
        (offset, url …) is kept so the record can be found again."""
        self.__dict__.setdefault("_skipped", Counter())[reason] += n
        if where:
            self.__dict__.setdefault("_skipped_at", []).append({"reason": reason, **where})

    def _mark(self) -> int:
        """How many records this part has reported so far (to tell whether a call did)."""
        return len(self.__dict__.get("_rejected", ())) + sum(
            self.__dict__.get("_skipped", Counter()).values())

    def _drain(self) -> tuple[list[tuple[str, Any, dict]], Counter, list[dict]]:
        return (self.__dict__.pop("_rejected", []), self.__dict__.pop("_skipped", Counter()),
                self.__dict__.pop("_skipped_at", []))


class DocumentIterator(_Reporting, ABC):
    """Turns one local file into raw records (dicts). Malformed records are reported with
    :meth:`reject` and the rest of the file is read; records skipped on purpose are counted with
    :meth:`skip`."""

    @abstractmethod
    def iterate(self, file_path: str) -> Iterator[dict[str, Any]]:
        """Yield the raw records of ``file_path``."""

    @abstractmethod
    def output_columns(self) -> list[str]:
        """The keys of the records :meth:`iterate` yields."""


class DocumentExtractor(_Reporting, ABC):
    """Turns one raw record into a document dict, or ``None`` to drop it (counted)."""

    @abstractmethod
    def extract(self, record: dict[str, Any]) -> dict[str, Any] | None:
        """The document for ``record``, or ``None`` when it has no usable text."""

    def input_columns(self) -> list[str]:
        return []

    @abstractmethod
    def output_columns(self) -> list[str]:
        """The keys of the documents :meth:`extract` returns."""

    def setup(self) -> None:
        """Load heavy resources (once per worker)."""


@dataclass
class URLGenerationStage(ProcessingStage[EmptyTask, FileGroupTask]):
    """Source stage: one :class:`FileGroupTask` per URL (deterministic ids)."""

    url_generator: URLGenerator | None = None
    limit: int | None = None
    name: str = "URLGenerationStage"

    @property
    def is_source(self) -> bool:
        return True

    def outputs(self):
        return ["data"], []

    def process(self, task: EmptyTask) -> list[FileGroupTask]:
        urls = self.url_generator.generate_urls()
        if self.limit is not None:
            urls = urls[: self.limit]
        return [FileGroupTask(task_id=stable_id(u), dataset_name=_dataset_name(u), data=[u],
                              metadata={"source_files": [u], "urls": [u]}) for u in urls]


def _dataset_name(url: str) -> str:
    return os.path.basename(url.rstrip("/")).split(".")[0] or "download"


@dataclass
class DocumentDownloadStage(ProcessingStage[FileGroupTask, FileGroupTask]):
    """Downloads each URL of a task and returns the local paths. A URL that still fails after
    the downloader's retries fails the task (kept whole, the run is not ok)."""

    downloader: DocumentDownloader | None = None
    name: str = "DocumentDownloadStage"
    resources: Resources = field(default_factory=lambda: Resources(cpus=0.5))

    def inputs(self):
        return ["data"], []

    def outputs(self):
        return ["data"], []

    def process(self, task: FileGroupTask) -> FileGroupTask:
        local = [self.downloader.download(u) for u in task.data]
        out = task.derive(local)
        out.metadata["source_files"] = local
        return out


@dataclass
class DocumentIterateExtractStage(ProcessingStage[FileGroupTask, DocumentBatch]):
    """Iterates each file's raw records and extracts documents into one DocumentBatch.

    Malformed records go to the rejected sink with their file and offset; records skipped by
    design are counted in ``metadata["skipped_records"]`` (reason -> count), each record once
    under its own reason; those the extractor skipped are listed with their file and offset in
    ``metadata["skipped_at"]``.

    Parameters:
        iterator / extractor: the leaf classes (``extractor=None``: the records are documents).
        record_limit: at most this many documents per file.
        add_filename_column: add the source file name (``True``: column ``file_name``).
    """

    iterator: DocumentIterator | None = None
    extractor: DocumentExtractor | None = None
    record_limit: int | None = None
    add_filename_column: bool | str = True
    name: str = "DocumentIterateExtractStage"
    worker_mode = "process"  # extraction is CPU-bound pure Python (threads without extractor)

    def __post_init__(self) -> None:
        if self.extractor is None:  # nothing CPU-heavy to do: threads are enough
            self.worker_mode = "thread"

    @property
    def filename_col(self) -> str | None:
        if not self.add_filename_column:
            return None
        return "file_name" if self.add_filename_column is True else str(self.add_filename_column)

    def inputs(self):
        return ["data"], []

    def outputs(self):
        cols = (self.extractor or self.iterator).output_columns()
        return ["data"], cols + ([self.filename_col] if self.filename_col else [])

    def setup(self, worker_metadata: dict[str, Any] | None = None) -> None:
        if self.extractor is not None:
            ensure_setup(self.extractor)

    def process(self, task: FileGroupTask) -> DocumentBatch:
        # per-task shallow copies: their reject/skip buffers are not shared between threads
        iterator = copy.copy(self.iterator)
        extractor = copy.copy(self.extractor)
        rows: list[dict[str, Any]] = []
        skipped: Counter = Counter()
        skipped_at: list[dict[str, Any]] = []
        for path in task.data:
            n = 0
            try:
                for record in iterator.iterate(path):
                    if self.record_limit is not None and n >= self.record_limit:
                        break
                    doc = self._extract(task, path, record, extractor)
                    if doc is None:
                        continue
                    if self.filename_col:
                        doc[self.filename_col] = os.path.basename(path)
                    rows.append(doc)
                    n += 1
            except Exception as exc:
                self.reject(task, "file could not be read", error=exc, source=path, kind="file",
                            record={"file": path})
            skipped += self._collect(task, path, iterator, skipped_at)
            if extractor is not None:
                skipped += self._collect(task, path, extractor, skipped_at)
        cols = self.outputs()[1]
        table = (pa.Table.from_pylist(rows) if rows
                 else pa.table({c: pa.array([], pa.string()) for c in cols}))
        out = task.derive(table, cls=DocumentBatch)
        out.metadata["skipped_records"] = dict(skipped)
        out.metadata["skipped_at"] = skipped_at
        if skipped:
            log.info("%s: %s skipped %s", self.name, task.task_id, dict(skipped))
        return out

    def _extract(self, task: FileGroupTask, path: str, record: dict[str, Any],
                 extractor: DocumentExtractor | None) -> dict[str, Any] | None:
        if extractor is None:
            return record
        where = {k: record[k] for k in ("url", "warc_id", "offset", "id", "title")
                 if k in record}
        mark = extractor._mark()
        try:
            doc = extractor.extract(record)
        except Exception as exc:
            self.reject(task, "extraction failed", error=exc, source=path,
                        record={"file": path, **where})
            return None
        if doc is None and extractor._mark() == mark:  # counted once: its own reason first
            extractor.skip("no text extracted", **where)
        return doc

    def _collect(self, task: FileGroupTask, path: str, part: _Reporting,
                 skipped_at: list[dict[str, Any]]) -> Counter:
        rejected, skipped, at = part._drain()
        for reason, error, record in rejected:
            self.reject(task, reason, error=error, source=path, record={"file": path, **record})
        skipped_at.extend({"file": path, **w} for w in at)
        return skipped


@dataclass
class DocumentDownloadExtractStage(CompositeStage[EmptyTask, DocumentBatch]):
    """URL generation -> download -> iterate + extract, as one stage.

    Parameters:
        url_generator, downloader, iterator, extractor: the leaf classes.
        url_limit: only the first ``url_limit`` URLs.
        record_limit: at most this many documents per file.
        add_filename_column: add the source file name (``True``: column ``file_name``).
    """

    url_generator: URLGenerator | None = None
    downloader: DocumentDownloader | None = None
    iterator: DocumentIterator | None = None
    extractor: DocumentExtractor | None = None
    url_limit: int | None = None
    record_limit: int | None = None
    add_filename_column: bool | str = True
    name: str = "DocumentDownloadExtractStage"
    modality = "text"

    def __post_init__(self) -> None:
        for attr, base in (("url_generator", URLGenerator), ("downloader", DocumentDownloader),
                           ("iterator", DocumentIterator)):
            if not isinstance(getattr(self, attr), base):
                raise ConfigError(f"{self.name}: {attr} must be a {base.__name__}, got "
                                  f"{type(getattr(self, attr)).__name__}")
        if self.extractor is not None and not isinstance(self.extractor, DocumentExtractor):
            raise ConfigError(f"{self.name}: extractor must be a DocumentExtractor or None")

    def decompose(self) -> list[ProcessingStage]:
        return [URLGenerationStage(url_generator=self.url_generator, limit=self.url_limit,
                                   name=f"{self.name}.urls"),
                DocumentDownloadStage(downloader=self.downloader, name=f"{self.name}.download"),
                DocumentIterateExtractStage(iterator=self.iterator, extractor=self.extractor,
                                            record_limit=self.record_limit,
                                            add_filename_column=self.add_filename_column,
                                            name=f"{self.name}.extract")]
