"""WARC and ARC records as wget, Heritrix and the Internet Archive write them, byte for byte
(warcio normalises what it writes, so the quirks of real crawlers are built here by hand)."""

from __future__ import annotations

import gzip
import io
import tarfile
import uuid
import zlib

__all__ = ["warc_record", "http_response", "chunked", "arc_file", "arc_record", "tar_gz"]


def http_response(body: bytes, headers: list[tuple[str, str]] | None = None,
                  nl: bytes = b"\r\n", status: bytes = b"HTTP/1.1 200 OK") -> bytes:
    """An HTTP response as stored in a WARC block: status line, headers, blank line, body."""
    lines = [status] + [f"{k}: {v}".encode() for k, v in (headers or [])]
    return nl.join(lines) + nl + nl + body


def chunked(body: bytes, size: int) -> bytes:
    """``body`` in ``Transfer-Encoding: chunked`` form, ``size`` bytes per chunk."""
    parts = [b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
             for i in range(0, len(body), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def warc_record(block: bytes, url: str = "http://example.com/", kind: str = "response",
                record_id: bool = True, target: str | None = None, gz: bool = True,
                version: bytes = b"WARC/1.0", declared_length: int | None = None) -> bytes:
    """One WARC record (its own gzip member when ``gz``); ``target`` overrides how the
    WARC-Target-URI is written (wget writes ``<url>``); ``declared_length`` writes a
    Content-Length other than the block's (a record whose block runs past its length)."""
    head = [version, f"WARC-Type: {kind}".encode(),
            f"WARC-Target-URI: {target if target is not None else url}".encode(),
            b"WARC-Date: 2016-01-05T10:20:30Z"]
    if record_id:
        head.append(f"WARC-Record-ID: <urn:uuid:{uuid.uuid4()}>".encode())
    ctype = b"application/http;msgtype=response" if kind in ("response", "revisit") \
        else b"application/http;msgtype=request"
    length = len(block) if declared_length is None else declared_length
    head += [b"Content-Type: " + ctype, b"Content-Length: %d" % length]
    raw = b"\r\n".join(head) + b"\r\n\r\n" + block + b"\r\n\r\n"
    return gzip.compress(raw) if gz else raw


def arc_record(url: str, block: bytes, date: str = "19961104142103",
               mime: str = "text/html") -> bytes:
    """One ARC v1 record: header line, the block, a newline."""
    return f"{url} 127.0.0.1 {date} {mime} {len(block)}\n".encode() + block + b"\n"


def arc_file(records: list[tuple[str, bytes]], gz: bool) -> bytes:
    """An ARC v1 file: the ``filedesc://`` header record, then ``records``; gzip per record
    when ``gz`` (as ``.arc.gz`` files are written)."""
    meta = b"1 0 Curator tests\nURL IP-address Archive-date Content-type Archive-length\n"
    parts = [arc_record("filedesc://test.arc", meta, mime="text/plain")]
    parts += [arc_record(url, block) for url, block in records]
    if gz:
        return b"".join(_gzip_member(p) for p in parts)
    return b"".join(parts)


def _gzip_member(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def tar_gz(files: dict[str, str]) -> bytes:
    """A gzipped tar holding ``files`` (name -> text), as arXiv source bundles come."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()
