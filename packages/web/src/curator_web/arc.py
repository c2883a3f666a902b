"""ARC files (the Internet Archive's format before WARC): ``.arc`` or ``.arc.gz`` (one gzip
member per record). Each record is a header line ``URL IP DATE MIME ... LENGTH`` and LENGTH
bytes of HTTP response."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["ArcRecord", "ArcRecordError", "iter_arc_records"]


class ArcRecordError(ValueError):
    """A malformed or truncated ARC record; ``url`` when its header line was read."""

    def __init__(self, message: str, url: str = "") -> None:
        super().__init__(message)
        self.url = url


@dataclass(frozen=True)
class ArcRecord:
    """One ARC record: its URL, capture date and the stored block (HTTP headers + body)."""

    url: str
    date: str
    block: bytes

    def to_warc(self, source_id: str, offset: int) -> bytes:
        """The record as a WARC ``response`` record (its id derived from file and offset)."""
        from curator_web.common_crawl import derived_record_id

        head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {self.url}\r\n"
                f"WARC-Date: {_iso(self.date)}\r\n"
                f"WARC-Record-ID: {derived_record_id(source_id, offset)}\r\n"
                f"Content-Type: application/http; msgtype=response\r\n"
                f"Content-Length: {len(self.block)}\r\n\r\n")
        return head.encode("utf-8", "replace") + self.block + b"\r\n\r\n"


def _iso(date: str) -> str:
    d = (date + "00000000000000")[:14]
    return f"{d[:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}Z"


def _parse(data: bytes, pos: int) -> tuple[ArcRecord, int]:
    """The record at ``pos`` of ``data`` and the position after it."""
    while data[pos:pos + 1] in (b"\n", b"\r"):  # the newline that ends the previous record
        pos += 1
    eol = data.find(b"\n", pos)
    if eol < 0:
        raise ValueError(f"no ARC header line: {data[pos:pos + 80]!r}")
    url, date, length = _header(data[pos:eol])
    block = data[eol + 1:eol + 1 + length]
    if len(block) < length:
        raise ArcRecordError(f"truncated ARC record: {len(block)} of {length} bytes", url)
    return ArcRecord(url, date, block), eol + 1 + length


def _header(line: bytes) -> tuple[str, str, int]:
    """``(url, date, length)`` of an ARC header line (v1: URL IP DATE MIME LENGTH; v2 adds
    fields before LENGTH). The URL may contain spaces: it ends before the IP address that is
    followed by a 14-digit date."""
    fields = line.decode("utf-8", "replace").split()
    if len(fields) < 5 or not fields[-1].isdigit():
        raise ValueError(f"malformed ARC header line: {line[:200]!r}")
    for i in range(len(fields) - 3, 0, -1):
        if fields[i + 1].isdigit() and len(fields[i + 1]) >= 8 and (
                "." in fields[i] or ":" in fields[i] or fields[i] == "-"):
            return " ".join(fields[:i]), fields[i + 1], int(fields[-1])
    return fields[0], fields[2], int(fields[-1])


def iter_arc_records(path: str,
                     ) -> Iterator[tuple[int, ArcRecord | None, BaseException | str | None]]:
    """``(offset, record, error)`` for each record: ``record`` is ``None`` with ``error`` for
    a corrupt gzip member or a malformed record; reading goes on with the next member (in an
    uncompressed ARC file, at the next line that starts like an ARC header line)."""
    from curator_web.common_crawl import iter_gzip_members

    with open(path, "rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
        fh.seek(0)
        if gzipped:
            for offset, data, error in iter_gzip_members(fh):
                if data is None:
                    yield offset, None, error
                    continue
                pos = 0
                while pos < len(data) and data[pos:pos + 4096].strip():
                    try:
                        rec, pos = _parse(data, pos)
                    except ValueError as exc:
                        yield offset, None, exc
                        break
                    yield offset, rec, None
            return
        yield from _iter_plain(fh)


def _iter_plain(fh) -> Iterator[tuple[int, ArcRecord | None, BaseException | None]]:
    """Records of an uncompressed ARC file, streamed (one record in memory at a time)."""
    while True:
        start = fh.tell()
        line = fh.readline()
        if not line:
            return
        if not line.strip():
            continue
        try:
            url, date, length = _header(line.rstrip(b"\r\n"))
        except ValueError as exc:
            yield start, None, exc
            if not _next_header_line(fh):
                return
            continue
        block = fh.read(length)
        if len(block) < length:
            yield start, None, ArcRecordError(
                f"truncated ARC record: {len(block)} of {length} bytes", url)
            return
        yield start, ArcRecord(url, date, block), None


_HEADER_START = re.compile(rb"^(?:[A-Za-z][A-Za-z0-9+.-]*://|dns:|filedesc:)\S*[ \t].*"
                           rb"[ \t]\d{8,}[ \t]")


def _next_header_line(fh) -> bool:
    """Move ``fh`` to the next line that starts like an ARC header line (URL … date …), after
    a malformed record whose length cannot be trusted; ``False`` at the end of the file."""
    while True:
        start = fh.tell()
        line = fh.readline()
        if not line:
            return False
        if _HEADER_START.match(line):
            fh.seek(start)
            return True
