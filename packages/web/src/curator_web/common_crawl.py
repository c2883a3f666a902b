"""Common Crawl: snapshot range -> WARC path listing -> download -> WARC records -> HTML text."""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import re
import uuid
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
    visible_text_prefix,
)
from curator_web.http_body import BodyDecodeError, decode_http_body, looks_like_html

__all__ = ["MainCommonCrawlUrlGenerator", "NewsCommonCrawlUrlGenerator",
           "CommonCrawlWARCDownloader", "CommonCrawlWarcIterator", "CommonCrawlHTMLExtractor",
           "CommonCrawlDownloadExtractStage", "iter_gzip_members", "is_arc", "WARC_EXTENSIONS",
           "derived_record_id"]

log = logging.getLogger(__name__)

DATA_PREFIX = "https://data.commoncrawl.org"
INDEX_URL = "https://index.commoncrawl.org/collinfo.json"
_SNAPSHOT = re.compile(r"^(\d{4})-(\d{2})$")
_CHUNK = 1 << 20
_MAX_MEMBER = 256 << 20  # a WARC record larger than this is treated as corrupt
_GZIP_MAGIC = b"\x1f\x8b\x08"
_HTML_TYPES = ("text/html", "application/xhtml+xml")
_DAMAGED = "malformed WARC record: unreadable (broken header or block)"
_WARC_TYPES = ("warcinfo", "response", "resource", "request", "metadata", "revisit",
               "conversion", "continuation")
WARC_EXTENSIONS = [".warc", ".warc.gz", ".arc", ".arc.gz"]
"""The archive files read from a directory or glob (WARC and ARC, plain or gzip)."""


def _parse_snapshot(value: str, what: str) -> tuple[int, int]:
    m = _SNAPSHOT.match(value.removeprefix("CC-MAIN-"))
    if not m:
        raise ConfigError(f"CommonCrawlDownloadExtractStage: {what}={value!r} is not a snapshot "
                          f"like '2023-06' (year-week)")
    return int(m.group(1)), int(m.group(2))



def _listed_urls(data_prefix: str, folders: list[str], limit: int | None) -> list[str]:
    """The WARC URLs that each folder's ``warc.paths.gz`` lists, in order, at most ``limit``."""
    urls: list[str] = []
    for folder in folders:
        listing = read_url(f"{data_prefix}/{folder}/warc.paths.gz")
        for line in gzip.decompress(listing).decode().splitlines():
            if line.strip():
                urls.append(f"{data_prefix}/{line.strip()}")
            if limit is not None and len(urls) >= limit:
                return urls
    return urls

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
        return _listed_urls(self.data_prefix, [f"crawl-data/{s}" for s in self.snapshots()],
                            self.limit)


_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def _parse_month(value: str, what: str) -> tuple[int, int]:
    m = _MONTH.match(value)
    if not m or not 1 <= int(m.group(2)) <= 12:
        raise ConfigError(f"CommonCrawlDownloadExtractStage: {what}={value!r} is not a month "
                          f"like '2020-08' (year-month), as CC-NEWS is laid out")
    return int(m.group(1)), int(m.group(2))


class NewsCommonCrawlUrlGenerator(URLGenerator):
    """The WARC URLs of CC-NEWS from month ``start_snapshot_str`` to ``end_snapshot_str``
    (``"YYYY-MM"``, both included), read from each month's
    ``crawl-data/CC-NEWS/YYYY/MM/warc.paths.gz`` under ``data_prefix``."""

    def __init__(self, start_snapshot_str: str, end_snapshot_str: str,
                 data_prefix: str = DATA_PREFIX, limit: int | None = None) -> None:
        self.start = _parse_month(start_snapshot_str, "start_snapshot")
        self.end = _parse_month(end_snapshot_str, "end_snapshot")
        if self.start > self.end:
            raise ConfigError(f"CommonCrawlDownloadExtractStage: start_snapshot "
                              f"{start_snapshot_str!r} is after end_snapshot {end_snapshot_str!r}")
        self.data_prefix = data_prefix.rstrip("/")
        self.limit = limit

    def months(self) -> list[str]:
        """``YYYY/MM`` for each month in the range, oldest first."""
        (y, m), out = self.start, []
        while (y, m) <= self.end:
            out.append(f"{y:04d}/{m:02d}")
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
        return out

    def generate_urls(self) -> list[str]:
        return _listed_urls(self.data_prefix, [f"crawl-data/CC-NEWS/{m}" for m in self.months()],
                            self.limit)


class CommonCrawlWARCDownloader(DocumentDownloader):
    """Downloads WARC files; the local name is the URL path with ``/`` replaced by ``-``."""

    def _get_output_filename(self, url: str) -> str:
        return urlparse(url).path.lstrip("/").replace("/", "-")


def iter_gzip_members(fh: BinaryIO, start: int = 0,
                      ) -> Iterator[tuple[int, bytes | None, str | None]]:
    """``(offset, data, error)`` for each gzip member of a seekable file from offset ``start``
    (where ``fh`` is positioned): ``data`` is the decompressed member, or ``None`` with
    ``error`` for a corrupt or truncated one, after which reading goes on at the next member
    header."""
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
    """Reads WARC files (gzip per record, or plain) with FastWARC, and ARC files (``.arc``,
    ``.arc.gz``). Yields ``response`` records with an HTML content type (or, with none, an HTML
    body) as ``{url, warc_id, source_id, content, charset, offset}``, the body decoded from
    chunked transfer and gzip / deflate / brotli content encoding.

    Every record is accounted for once, at its own offset: other record types (``revisit``
    …) and non-HTML payloads are counted as skipped by reason; a corrupt gzip member, a broken
    header or a body that does not decode is rejected with its file and offset, and the rest
    of the file is read; bytes between records (a ``Content-Length`` shorter than its block)
    are one rejection at the offset where they start. An intact record written without
    ``WARC-Record-ID`` gets an id derived from the file name and its offset
    (:func:`derived_record_id`). A gzip file that is one gzip stream rather than one member
    per record is read whole; its offsets are positions in the decompressed stream."""

    locate_skips = False
    """Also list each record skipped by design with its offset in ``metadata["skipped_at"]``
    (off by default: a Common Crawl file skips ~100k request and metadata records)."""

    def output_columns(self) -> list[str]:
        return ["url", "warc_id", "source_id", "content"]

    def _skip(self, reason: str, offset: int | None, url: str = "") -> None:
        if self.locate_skips:
            self.skip(reason, offset=offset, **({"url": url} if url else {}))
        else:
            self.skip(reason)

    def iterate(self, file_path: str) -> Iterator[dict[str, Any]]:
        source_id = os.path.basename(file_path)
        if is_arc(file_path):
            yield from self._arc(file_path, source_id)
            return
        with open(file_path, "rb") as fh:
            head = fh.read(80)
            gzipped = head[:2] == _GZIP_MAGIC[:2]
            if not gzipped and not head.startswith(b"WARC/"):
                self.reject("malformed WARC record: no 'WARC/' version line", offset=0,
                            error=repr(head))
                return
            if gzipped and _one_gzip_stream(fh):
                yield from self._one_stream(fh, source_id)
                return
            base = 0
            while True:  # FastWARC over the whole file; where it stops on damage, resume
                fh.seek(base)
                stopped = yield from self._fast(fh, source_id, base, gzipped)
                if stopped is None:
                    return
                last, error, reported, held = stopped
                if gzipped:  # member by member from the last record read
                    yield from self._by_member(fh, source_id, last, held)
                    return
                base = self._resync_plain(fh, base, last, error, reported)
                if base is None:
                    return

    def _fast(self, fh: BinaryIO, source_id: str, base: int, gzipped: bool,
              ) -> Iterator[dict[str, Any]]:
        """Records through FastWARC. Returns ``None`` at the end of the file, or ``(offset of
        the last record handled, error, whether that damage is already rejected, its document
        when not given out)`` where FastWARC could not go on. In a gzip file the last record's
        document is held back: FastWARC may have parsed it from a truncated member, which
        :meth:`_by_member` then rejects instead."""
        from fastwarc.warc import ArchiveIterator, WarcRecordType

        records = ArchiveIterator(fh, parse_http=False, record_types=WarcRecordType.any_type)
        last, pending = None, None  # a document is given out once the next header parses
        shift = None  # FastWARC counts from where the file object is, or from 0: find out
        while True:
            try:
                record = next(records)
            except StopIteration:
                if pending is not None:
                    yield pending
                return None
            except Exception as exc:
                if pending is not None and b"\nWARC/1." in pending["content"]:
                    self.reject("malformed WARC record: its length runs into the next record",
                                error=exc, offset=pending["offset"], url=pending["url"])
                    return last, exc, True, None
                if pending is not None and not gzipped:
                    yield pending
                    pending = None
                return last, exc, False, pending
            if pending is not None:
                yield pending
            if shift is None:
                shift = 0 if record.stream_pos >= base else base
            offset = shift + record.stream_pos
            last = offset
            pending = self._record(record, source_id, offset)

    def _by_member(self, fh: BinaryIO, source_id: str, last: int | None,
                   held: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
        """The rest of a damaged gzip WARC file, one gzip member at a time. ``held``: the
        document of the member FastWARC read last (at ``last``), given out only if that member
        is whole."""
        fh.seek(last or 0)
        for offset, data, err in iter_gzip_members(fh, start=last or 0):
            if last is not None and offset == last:
                last = None  # the member FastWARC read last: already accounted for, unless
                if data is None and held is not None:  # it is cut short (then rejected)
                    self.reject("corrupt or truncated gzip member", error=err, offset=offset)
                elif held is not None:
                    yield held
                continue
            if data is None:
                self.reject("corrupt or truncated gzip member", error=err, offset=offset)
                continue
            yield from self._records(io.BytesIO(data), data[:80], source_id, offset)
        if last is not None and held is not None:  # its member was never reached: not lost
            yield held

    def _one_stream(self, fh: BinaryIO, source_id: str) -> Iterator[dict[str, Any]]:
        """A gzip WARC written as one gzip stream (not one member per record): read through
        the decompressed stream, each record's offset its position there; damage ends the
        file (one rejection: a gzip stream has no resume point)."""
        fh.seek(0)
        with gzip.GzipFile(fileobj=fh) as stream:
            stopped = yield from self._fast(stream, source_id, 0, False)
        if stopped is not None:
            last, error, reported, _ = stopped
            if not reported:
                self.reject("corrupt gzip stream (one stream, not one member per record): "
                            f"the rest of the file after the record at decompressed offset "
                            f"{last} cannot be read", error=error,
                            offset=0 if last is None else last + 1)

    def _resync_plain(self, fh: BinaryIO, base: int, last: int | None, error: BaseException,
                      reported: bool) -> int | None:
        """Reject the damaged bytes after the last record read since ``base`` (unless
        ``reported``), at the offset where they start (the last record is accounted for on
        its own), and return the offset of the next ``WARC/`` record header (``None``: the
        end of the file)."""
        nxt = _next_warc_header(fh, (last if last is not None else base) + 1)
        if reported:
            return nxt
        if last is None:  # the record at base itself is broken
            self.reject(_DAMAGED, error=error, offset=base)
            return nxt
        damage = _record_end(fh, last)
        if damage is None or (nxt is not None and damage > nxt):
            damage = last + 1  # the declared length runs past the next header
        fh.seek(damage)
        size = (nxt if nxt is not None else fh.seek(0, os.SEEK_END)) - damage
        fh.seek(damage)
        if size > 0 and fh.read(min(size, _CHUNK)).strip():
            self.reject(f"malformed WARC record: {size} bytes after the record at offset "
                        f"{last} belong to no record (a Content-Length shorter than the "
                        f"block?)", error=error, offset=damage)
        return nxt

    def _arc(self, file_path: str, source_id: str) -> Iterator[dict[str, Any]]:
        from curator_web.arc import iter_arc_records

        for offset, rec, error in iter_arc_records(file_path):
            if rec is None:
                url = getattr(error, "url", "")
                self.reject("malformed ARC record", error=error, offset=offset,
                            **({"url": url} if url else {}))
                continue
            if rec.url.startswith("filedesc:"):
                self._skip("ARC file header", offset, rec.url)
                continue
            if not rec.block.startswith(b"HTTP/"):
                self._skip("non-HTTP ARC record", offset, rec.url)
                continue
            warc = rec.to_warc(source_id, offset)
            yield from self._records(io.BytesIO(warc), warc[:80], source_id, offset)

    def _records(self, stream: BinaryIO, head: bytes, source_id: str,
                 member_offset: int | None) -> Iterator[dict[str, Any]]:
        from fastwarc.warc import ArchiveIterator, WarcRecordType

        offset = member_offset or 0
        if not head.startswith(b"WARC/"):
            self.reject("malformed WARC record: no 'WARC/' version line", offset=offset,
                        error=repr(head))
            return
        n = 0
        records = ArchiveIterator(stream, parse_http=False, record_types=WarcRecordType.any_type)
        while True:
            try:
                record = next(records)
            except StopIteration:
                break
            except Exception as exc:
                self.reject("malformed WARC record: unreadable", error=exc, offset=offset)
                return
            if member_offset is None:
                offset = record.stream_pos
            n += 1
            doc = self._record(record, source_id, offset)
            if doc is not None:
                yield doc
        if n == 0:
            self.reject("malformed WARC record: headers could not be parsed", offset=offset,
                        error=repr(head))

    def _record(self, record: Any, source_id: str, offset: int) -> dict[str, Any] | None:
        from fastwarc.warc import WarcRecordType

        headers = record.headers
        url = _target_uri(headers.get("WARC-Target-URI") or "")
        record_id = record.record_id
        if not record_id:
            kind = headers.get("WARC-Type") or ""
            if kind not in _WARC_TYPES or headers.get("Content-Length") is None:
                self.reject("malformed WARC record: broken or truncated header (no "
                            "WARC-Record-ID, and no known WARC-Type or no Content-Length)",
                            offset=offset, url=url, error=f"WARC-Type: {kind!r}")
                return None
            record_id = derived_record_id(source_id, offset)  # intact, written without one
        if record.record_type != WarcRecordType.response:
            self._skip(f"{headers.get('WARC-Type', 'unknown')} record", offset, url)
            return None
        if not record.content_length:
            self.reject("malformed WARC record: response with an empty block (truncated "
                        "header?)", offset=offset, url=url)
            return None
        try:
            record.parse_http(quirks_mode=True)
            http = record.http_headers
            body = record.reader.read()
        except Exception as exc:
            self.reject("malformed HTTP response in WARC record", error=exc, offset=offset,
                        url=url)
            return None
        if not record.is_http or http is None:
            self._skip("non-HTTP response", offset, url)
            return None
        ctype = (record.http_content_type or "").lower()
        if ctype and not ctype.startswith(_HTML_TYPES):
            self._skip("non-HTML response", offset, url)
            return None
        try:
            body = decode_http_body(body, http.get("Transfer-Encoding"),
                                    http.get("Content-Encoding"))
        except BodyDecodeError as exc:
            self.reject("HTTP body could not be decoded", error=exc, offset=offset, url=url)
            return None
        if not ctype and not looks_like_html(body):
            self._skip("non-HTML response", offset, url)
            return None
        return {"url": url, "warc_id": _uuid(record_id), "source_id": source_id,
                "content": body, "charset": record.http_charset, "offset": offset}


def _one_gzip_stream(fh: BinaryIO) -> bool:
    """Whether a gzip WARC file's first gzip member holds more than its first record (the file
    is one gzip stream, not one member per record as the WARC standard recommends)."""
    fh.seek(0)
    d, head, size, end = zlib.decompressobj(31), b"", 0, None
    pending = fh.read(65536)
    try:
        while pending:
            data = d.decompress(pending, _CHUNK)
            pending = d.unconsumed_tail or (b"" if d.eof else fh.read(65536))
            size += len(data)
            if end is None:
                head += data
                end = _declared_end(head)
                if end is None and len(head) > 65536:
                    return False
            if end is not None and size > end + 8:
                return True
            if d.eof:
                return False
    except zlib.error:
        return False
    return False


def _declared_end(head: bytes) -> int | None:
    """The end of the WARC record that starts ``head``, by its ``Content-Length``."""
    sep, n = head.find(b"\r\n\r\n"), 4
    if sep < 0:
        sep, n = head.find(b"\n\n"), 2
    m = re.search(rb"(?im)^content-length:[ \t]*(\d+)", head[:max(sep, 0)])
    return None if sep < 0 or m is None else sep + n + int(m.group(1))


def _next_warc_header(fh: BinaryIO, pos: int) -> int | None:
    """The offset of the next ``WARC/1.x`` line at or after ``pos`` (``None``: none)."""
    fh.seek(max(pos - 1, 0))
    at = max(pos - 1, 0)
    window = fh.read(_CHUNK)
    while len(window) > 8:
        i = window.find(b"\nWARC/1.")
        if i >= 0:
            return at + i + 1
        at += len(window) - 8
        fh.seek(at)
        window = fh.read(_CHUNK)
    return None


def _record_end(fh: BinaryIO, start: int) -> int | None:
    """Where the plain WARC record at ``start`` ends by its header's ``Content-Length`` (the
    blank lines after it not included); ``None`` when its header does not say."""
    fh.seek(start)
    declared = _declared_end(fh.read(65536))
    if declared is None:
        return None
    end = start + declared
    fh.seek(end)
    tail = fh.read(4)
    return end + len(tail) - len(tail.lstrip(b"\r\n"))


def _target_uri(value: str) -> str:
    """WARC/1.0 wrote the target URI in angle brackets (wget still does): strip them."""
    value = value.strip()
    if value.startswith("<") and value.endswith(">"):
        return value[1:-1].strip()
    return value


def derived_record_id(source_id: str, offset: int) -> str:
    """The id of a record written without ``WARC-Record-ID`` (test and tool archives; ARC
    records have none): a UUID derived from the file name and the record's offset, the same on
    every read."""
    return f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'{source_id}:{offset}')}>"


def _uuid(record_id: str) -> str:
    return record_id.strip().removeprefix("<").removesuffix(">").removeprefix("urn:uuid:")


def is_arc(path: str) -> bool:
    """Whether ``path`` names an ARC file (``.arc`` or ``.arc.gz``)."""
    return path.lower().endswith((".arc", ".arc.gz"))


class CommonCrawlHTMLExtractor(DocumentExtractor):
    """Decodes the HTML (UTF-8, declared charset, then detection), extracts the main text with
    ``algorithm`` and identifies the language of the extracted text. An algorithm that needs
    a stop list before extraction (jusText, ``nemo_compat``) gets the language of a bounded
    prefix of the page's visible text (no second pass over the page); such pages whose
    language has no stop list are skipped, as are pages with no main text (each counted once,
    with its offset)."""

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
        where = {"url": record.get("url", ""), "offset": record.get("offset")}
        content = record.get("content")
        if not content:
            self.skip("empty payload", **where)
            return None
        html = decode_html(content, record.get("charset"))
        if html is None:
            self.reject("HTML payload could not be decoded", **where)
            return None
        stop_words, language = None, None
        if self.algorithm.needs_stop_words():
            language = lang_detect(visible_text_prefix(html))
            stop_words = self._stop_lists.get(language)
            if stop_words is None:
                self.skip(f"no stop list for language {language}", **where)
                return None
        paragraphs = self.algorithm.extract_text(html, stop_words, language)
        if not paragraphs:
            self.skip("no text extracted", **where)
            return None
        text = "\n\n".join(paragraphs)
        return {"url": record["url"], "warc_id": record["warc_id"],
                "source_id": record["source_id"], "language": lang_detect(text),
                "text": text}


@dataclass(init=False)
class CommonCrawlDownloadExtractStage(DocumentDownloadExtractStage):
    """Downloads Common Crawl WARC files and extracts their HTML pages into DocumentBatches with
    ``url``, ``warc_id``, ``source_id``, ``language`` and ``text`` (and ``file_name``).

    Parameters:
        start_snapshot / end_snapshot: the snapshot range, ``"YYYY-WW"`` (``"YYYY-MM"`` for news).
        download_dir: where WARC files are downloaded (resumable; complete files are kept).
        crawl_type: ``"main"`` (snapshots ``"YYYY-WW"``) or ``"news"`` (CC-NEWS, months
            ``"YYYY-MM"``).
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
        if crawl_type not in ("main", "news"):
            raise ConfigError(f"{name}: crawl_type={crawl_type!r} is not supported; use 'main' "
                              f"or 'news' (CC-NEWS)")
        if warc_paths is not None:
            urls: URLGenerator = LocalFilesUrlGenerator(warc_paths, WARC_EXTENSIONS)
        elif start_snapshot and end_snapshot:
            urls = (MainCommonCrawlUrlGenerator(start_snapshot, end_snapshot, data_prefix,
                                                index_url) if crawl_type == "main" else
                    NewsCommonCrawlUrlGenerator(start_snapshot, end_snapshot, data_prefix))
            if not download_dir:
                raise ConfigError(f"{name}: download_dir is required to download snapshots")
        else:
            raise ConfigError(f"{name}: give start_snapshot and end_snapshot (e.g. '2023-06', "
                              f"or '2020-08' for crawl_type='news'), or warc_paths for WARC "
                              f"files you already have")
        self.start_snapshot, self.end_snapshot = start_snapshot, end_snapshot
        self.download_dir, self.crawl_type, self.warc_paths = download_dir, crawl_type, warc_paths
        super().__init__(
            url_generator=urls,
            # warc_paths alone: local files are read where they are, no download directory
            # (so none is declared as an input the output must stay out of)
            downloader=CommonCrawlWARCDownloader(download_dir, verbose=verbose),
            iterator=CommonCrawlWarcIterator(),
            extractor=CommonCrawlHTMLExtractor(html_extraction, html_extraction_kwargs,
                                               stop_lists),
            url_limit=url_limit, record_limit=record_limit,
            add_filename_column=add_filename_column, name=name)
