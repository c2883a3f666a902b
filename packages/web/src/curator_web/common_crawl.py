"""Common Crawl: snapshot range -> WARC path listing -> download -> WARC records -> HTML text."""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO
from urllib.parse import urlparse

from curator.errors import ConfigError
from curator.stages.lifecycle import ensure_setup

from curator_web.download.base import (
    DocumentDownloader,
    DocumentDownloadExtractStage,
    DocumentExtractor,
    DocumentIterator,
    LocalFilesUrlGenerator,
    URLGenerator,
)
from curator_web.download.http import read_url
from curator_web.html import (
    HTMLExtractorAlgorithm,
    decode_html,
    get_html_extractor,
    get_stop_list_dict,
    lang_detect,
)

__all__ = ["MainCommonCrawlUrlGenerator", "CommonCrawlWARCDownloader", "CommonCrawlWarcIterator",
           "CommonCrawlHTMLExtractor", "CommonCrawlDownloadExtractStage", "iter_gzip_members"]

log = logging.getLogger(__name__)

DATA_PREFIX = "https://data.commoncrawl.org"
INDEX_URL = "https://index.commoncrawl.org/collinfo.json"
_SNAPSHOT = re.compile(r"^(\d{4})-(\d{2})$")
_CHUNK = 1 << 20
_MAX_MEMBER = 256 << 20  # a WARC record larger than this is treated as corrupt
_GZIP_MAGIC = b"\x1f\x8b\x08"
_HTML_TYPES = ("text/html", "application/xhtml+xml")


def _parse_snapshot(value: str, what: str) -> tuple[int, int]:
    m = _SNAPSHOT.match(value.removeprefix("CC-MAIN-"))
    if not m:
        raise ConfigError(f"CommonCrawlDownloadExtractStage: {what}={value!r} is not a snapshot "
                          f"like '2023-06' (year-week)")
    return int(m.group(1)), int(m.group(2))


class MainCommonCrawlUrlGenerator(URLGenerator):
    """The WARC URLs of the main-crawl snapshots from ``start_snapshot_str`` to
    ``end_snapshot_str`` (``"YYYY-WW"``, both included), read from the snapshot list at
    ``index_url`` and each snapshot's ``warc.paths.gz`` under ``data_prefix``."""

    def __init__(self, start_snapshot_str: str, end_snapshot_str: str,
                 data_prefix: str = DATA_PREFIX, index_url: str = INDEX_URL,
                 limit: int | None = None) -> None:
        self.start = _parse_snapshot(start_snapshot_str, "start_snapshot")
        self.end = _parse_snapshot(end_snapshot_str, "end_snapshot")
        if self.start > self.end:
            raise ConfigError(f"CommonCrawlDownloadExtractStage: start_snapshot "
                              f"{start_snapshot_str!r} is after end_snapshot {end_snapshot_str!r}")
        self.data_prefix = data_prefix.rstrip("/")
        self.index_url = index_url
        self.limit = limit

    def snapshots(self) -> list[str]:
        """The snapshot ids (``CC-MAIN-YYYY-WW``) in the range, oldest first."""
        ids = [c["id"] for c in json.loads(read_url(self.index_url))]
        keep = [i for i in ids if i.startswith("CC-MAIN-") and _SNAPSHOT.match(i[8:])
                and self.start <= _parse_snapshot(i, "snapshot") <= self.end]
        return sorted(keep)

    def generate_urls(self) -> list[str]:
        urls: list[str] = []
        for snap in self.snapshots():
            listing = read_url(f"{self.data_prefix}/crawl-data/{snap}/warc.paths.gz")
            for line in gzip.decompress(listing).decode().splitlines():
                if line.strip():
                    urls.append(f"{self.data_prefix}/{line.strip()}")
                if self.limit is not None and len(urls) >= self.limit:
                    return urls
        return urls


class CommonCrawlWARCDownloader(DocumentDownloader):
    """Downloads WARC files; the local name is the URL path with ``/`` replaced by ``-``."""

    def _get_output_filename(self, url: str) -> str:
        return urlparse(url).path.lstrip("/").replace("/", "-")


def iter_gzip_members(fh: BinaryIO) -> Iterator[tuple[int, bytes | None, str | None]]:
    """``(offset, data, error)`` for each gzip member of a seekable file: ``data`` is the
    decompressed member, or ``None`` with ``error`` for a corrupt or truncated one, after which
    reading goes on at the next member header."""
    start = 0
    pending = fh.read(_CHUNK)
    while pending:
        d = zlib.decompressobj(31)
        out: list[bytes] = []
        fed, data, error = 0, pending, None
        try:
            while True:
                out.append(d.decompress(data))
                if d.eof:
                    tail = d.unused_data
                    yield start, b"".join(out), None
                    start += fed + len(data) - len(tail)
                    pending = tail or fh.read(_CHUNK)
                    break
                fed += len(data)
                if fed > _MAX_MEMBER:
                    raise EOFError(f"gzip member longer than {_MAX_MEMBER} bytes: corrupt")
                data = fh.read(_CHUNK)
                if not data:
                    raise EOFError("truncated gzip member: no valid end before the end of "
                                   "the file")
        except (zlib.error, EOFError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        if error is None:
            continue
        yield start, None, error
        start, pending = _resync(fh, start + 1)


def _resync(fh: BinaryIO, pos: int) -> tuple[int, bytes]:
    """The offset of the next gzip member header at or after ``pos`` that decompresses, and the
    bytes from there (``b""`` at the end of the file)."""
    while True:
        fh.seek(pos)
        window = fh.read(_CHUNK + 2)
        if len(window) < 3:
            return pos, b""
        i = window.find(_GZIP_MAGIC)
        if i < 0:
            pos += len(window) - 2
            continue
        fh.seek(pos + i)
        head = fh.read(_CHUNK)
        try:
            zlib.decompressobj(31).decompress(head[:65536])
        except zlib.error:
            pos += i + 1
            continue
        return pos + i, head


class CommonCrawlWarcIterator(DocumentIterator):
    """Reads WARC files (gzip per record, or plain) with FastWARC. Yields ``response`` records
    with an HTML content type as ``{url, warc_id, source_id, content, charset, offset}``;
    other record types and non-HTML payloads are counted as skipped; a corrupt gzip member or a
    malformed record is rejected with its file and offset and the rest of the file is read."""

    def output_columns(self) -> list[str]:
        return ["url", "warc_id", "source_id", "content"]

    def iterate(self, file_path: str) -> Iterator[dict[str, Any]]:
        source_id = os.path.basename(file_path)
        with open(file_path, "rb") as fh:
            gzipped = fh.read(2) == _GZIP_MAGIC[:2]
            fh.seek(0)
            if not gzipped:  # an uncompressed WARC file: streamed, offsets from FastWARC
                head = fh.read(80)
                fh.seek(0)
                yield from self._records(fh, head, source_id, None)
                return
            for offset, data, error in iter_gzip_members(fh):
                if data is None:
                    self.reject("corrupt or truncated gzip member", error=error, offset=offset)
                    continue
                yield from self._records(io.BytesIO(data), data[:80], source_id, offset)

    def _records(self, stream: BinaryIO, head: bytes, source_id: str,
                 member_offset: int | None) -> Iterator[dict[str, Any]]:
        from fastwarc.warc import ArchiveIterator, WarcRecordType  # noqa: PLC0415

        offset = member_offset or 0
        if not head.startswith(b"WARC/"):
            self.reject("malformed WARC record: no 'WARC/' version line", offset=offset,
                        error=repr(head))
            return
        n = 0
        for record in ArchiveIterator(stream, parse_http=False,
                                      record_types=WarcRecordType.any_type):
            if member_offset is None:
                offset = record.stream_pos
            n += 1
            rtype = record.record_type
            if rtype != WarcRecordType.response:
                self.skip(f"{record.headers.get('WARC-Type', 'unknown')} record")
                continue
            try:
                record.parse_http()
                ctype = (record.http_content_type or "").lower()
            except Exception as exc:  # noqa: BLE001
                self.reject("malformed HTTP response in WARC record", error=exc, offset=offset,
                            url=record.headers.get("WARC-Target-URI", ""))
                continue
            if not ctype.startswith(_HTML_TYPES):
                self.skip("non-HTML response")
                continue
            yield {"url": record.headers.get("WARC-Target-URI", ""),
                   "warc_id": record.record_id.removeprefix("<urn:uuid:").rstrip(">"),
                   "source_id": source_id, "content": record.reader.read(),
                   "charset": record.http_charset, "offset": offset}
        if n == 0:
            self.reject("malformed WARC record: headers could not be parsed", offset=offset,
                        error=repr(head))


class CommonCrawlHTMLExtractor(DocumentExtractor):
    """Decodes the HTML (UTF-8, declared charset, then detection), identifies its language and
    extracts the main text with ``algorithm`` using that language's stop list. Pages whose
    language has no stop list, or with no main text, are dropped (counted)."""

    def __init__(self, algorithm: HTMLExtractorAlgorithm | str | None = None,
                 algorithm_kwargs: dict[str, Any] | None = None,
                 stop_lists: dict[str, frozenset[str]] | None = None) -> None:
        self.algorithm = get_html_extractor(algorithm, algorithm_kwargs)
        self._stop_lists = stop_lists

    def setup(self) -> None:
        if self._stop_lists is None:
            self._stop_lists = get_stop_list_dict()

    def input_columns(self) -> list[str]:
        return ["url", "warc_id", "source_id", "content"]

    def output_columns(self) -> list[str]:
        return ["url", "warc_id", "source_id", "language", "text"]

    def extract(self, record: dict[str, Any]) -> dict[str, Any] | None:
        ensure_setup(self)
        content = record.get("content")
        if not content:
            self.skip("empty payload")
            return None
        html = decode_html(content, record.get("charset"))
        if html is None:
            self.reject("HTML payload could not be decoded", url=record.get("url", ""),
                        offset=record.get("offset"))
            return None
        language = lang_detect(_visible_text(html))
        stop_words = self._stop_lists.get(language)
        if stop_words is None:
            self.skip(f"no stop list for language {language}")
            return None
        paragraphs = self.algorithm.extract_text(html, stop_words, language)
        if not paragraphs:
            return None
        return {"url": record["url"], "warc_id": record["warc_id"],
                "source_id": record["source_id"], "language": language,
                "text": "\n\n".join(paragraphs)}


def _visible_text(html: str) -> str:
    from resiliparse.extract.html2text import extract_plain_text  # noqa: PLC0415

    return extract_plain_text(html, main_content=False)


@dataclass(init=False)
class CommonCrawlDownloadExtractStage(DocumentDownloadExtractStage):
    """Downloads Common Crawl WARC files and extracts their HTML pages into DocumentBatches with
    ``url``, ``warc_id``, ``source_id``, ``language`` and ``text`` (and ``file_name``).

    Parameters:
        start_snapshot / end_snapshot: the main-crawl snapshot range, ``"YYYY-WW"``.
        download_dir: where WARC files are downloaded (resumable; complete files are kept).
        crawl_type: ``"main"`` (the only one supported).
        html_extraction: ``"justext"`` (default), ``"resiliparse"``, ``"trafilatura"`` or an
            :class:`HTMLExtractorAlgorithm`; ``html_extraction_kwargs`` configure a named one.
        stop_lists: language name -> stop words (default: :func:`get_stop_list_dict`).
        url_limit / record_limit: at most this many WARC files / documents per file.
        add_filename_column: add the WARC file name (``True``: column ``file_name``).
        warc_paths: WARC files a user already has (directory, glob, ``file://`` or list);
            given, no snapshot listing is read.
        data_prefix / index_url: where snapshots are listed and served (point them at a mirror).
        use_aws_to_download: read from ``s3://commoncrawl`` through fsspec (needs ``s3fs``).
    """

    def __init__(self, start_snapshot: str | None = None, end_snapshot: str | None = None,
                 download_dir: str = "", crawl_type: str = "main",
                 html_extraction: HTMLExtractorAlgorithm | str | None = None,
                 html_extraction_kwargs: dict[str, Any] | None = None,
                 stop_lists: dict[str, frozenset[str]] | None = None,
                 use_aws_to_download: bool = False, verbose: bool = False, url_limit: int | None = None, record_limit: int | None = None,
                 add_filename_column: bool | str = True,
                 warc_paths: str | list[str] | None = None, data_prefix: str = DATA_PREFIX,
                 index_url: str = INDEX_URL, name: str = "CommonCrawlDownloadExtractStage"):
        if use_aws_to_download and data_prefix == DATA_PREFIX:
            data_prefix = "s3://commoncrawl"  # read through fsspec (needs s3fs)
        if crawl_type != "main":
            raise ConfigError(f"{name}: crawl_type={crawl_type!r} is not supported; use 'main'")
        if warc_paths is not None:
            urls: URLGenerator = LocalFilesUrlGenerator(
                warc_paths, [".warc", ".warc.gz", ".arc.gz"])
        elif start_snapshot and end_snapshot:
            urls = MainCommonCrawlUrlGenerator(start_snapshot, end_snapshot, data_prefix,
                                               index_url)
            if not download_dir:
                raise ConfigError(f"{name}: download_dir is required to download snapshots")
        else:
            raise ConfigError(f"{name}: give start_snapshot and end_snapshot (e.g. '2023-06'), "
                              f"or warc_paths for WARC files you already have")
        self.start_snapshot, self.end_snapshot = start_snapshot, end_snapshot
        self.download_dir, self.crawl_type, self.warc_paths = download_dir, crawl_type, warc_paths
        super().__init__(
            url_generator=urls,
            downloader=CommonCrawlWARCDownloader(download_dir or ".", verbose=verbose),
            iterator=CommonCrawlWarcIterator(),
            extractor=CommonCrawlHTMLExtractor(html_extraction, html_extraction_kwargs,
                                               stop_lists),
            url_limit=url_limit, record_limit=record_limit,
            add_filename_column=add_filename_column, name=name)
