"""Decoding HTTP bodies as crawlers store them: ``Transfer-Encoding: chunked`` and
``Content-Encoding: gzip / deflate / br`` (FastWARC leaves both to the caller; Common Crawl
stores bodies decoded, wget and most crawlers do not)."""

from __future__ import annotations

import io
import re
import zlib

__all__ = ["BodyDecodeError", "decode_http_body", "looks_like_html"]

_HTML_START = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<meta", b"<!--")


_EMPTY_CHUNKED = re.compile(rb"\s*0+[ \t]*(;[^\r\n]*)?\r?\n")  # the last chunk, and no data


class BodyDecodeError(ValueError):
    """An HTTP body that its declared encodings do not decode."""


def looks_like_html(body: bytes) -> bool:
    """Whether a body with no declared type starts like an HTML document."""
    head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith(_HTML_START)


def _dechunk(body: bytes) -> bytes:
    from resiliparse.parse.http import iterate_http_chunks

    out = b"".join(iterate_http_chunks(io.BytesIO(body)))
    if not out and body.strip() and not _EMPTY_CHUNKED.match(body):
        raise BodyDecodeError("Transfer-Encoding: chunked, but the body has no valid chunk")
    return out


def _inflate(body: bytes, wbits: int) -> bytes:
    d = zlib.decompressobj(wbits)
    out = d.decompress(body) + d.flush()
    if not d.eof:
        if wbits == 47 and body[:2] == b"\x1f\x8b":
            return _gzip_without_trailer(body)
        raise BodyDecodeError("compressed body is truncated")
    return out


def _gzip_without_trailer(body: bytes) -> bytes:
    """A gzip body whose compressed data is whole but whose 8-byte CRC / size trailer is cut
    off (a record length a few bytes short, as warcio's ``example-trunc.warc``): the data, as
    warcio reads it. A body cut inside the compressed data stays truncated."""
    flags, pos = body[3] if len(body) > 3 else 0, 10
    if flags & 4:  # FEXTRA
        pos += 2 + int.from_bytes(body[pos:pos + 2], "little")
    for bit in (8, 16):  # FNAME, FCOMMENT: zero-terminated
        if flags & bit:
            pos = body.find(b"\0", pos) + 1 or len(body)
    if flags & 2:  # FHCRC
        pos += 2
    d = zlib.decompressobj(-15)
    out = d.decompress(body[pos:]) + d.flush()
    if not d.eof:
        raise BodyDecodeError("compressed body is truncated")
    return out


def _decode_one(body: bytes, coding: str) -> bytes:
    try:
        if coding in ("gzip", "x-gzip"):
            return _inflate(body, 47)  # gzip or zlib header, detected
        if coding == "deflate":  # zlib-wrapped as the RFC says, or raw as some servers send
            try:
                return _inflate(body, 15)
            except zlib.error:
                return _inflate(body, -15)
        if coding == "br":
            import brotli

            return brotli.decompress(body)
    except (zlib.error, BodyDecodeError, Exception) as exc:
        raise BodyDecodeError(f"Content-Encoding {coding}: {exc}") from exc
    if coding in ("identity", ""):
        return body
    raise BodyDecodeError(f"unsupported Content-Encoding {coding!r}")


def decode_http_body(body: bytes, transfer_encoding: str | None,
                     content_encoding: str | None) -> bytes:
    """The entity body: chunks joined, then each content coding undone (last applied first).

    A body that declares an encoding but already starts like HTML is returned as it is
    (servers that mislabel plain bodies are common); otherwise a body that does not decode
    raises :class:`BodyDecodeError`."""
    if transfer_encoding and "chunked" in transfer_encoding.lower() and not looks_like_html(body):
        body = _dechunk(body)
    if content_encoding:
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        for coding in reversed(codings):
            if coding not in ("identity",) and looks_like_html(body):
                break
            body = _decode_one(body, coding)
    return body
