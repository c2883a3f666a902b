"""Fixtures for curator-web: real WARC.gz files written with warcio, and a real HTTP server on
127.0.0.1 (Range requests; a file can drop the connection midway once, to test resume)."""

from __future__ import annotations

import gzip
import io
import json
import os
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

MAIN_EN = [
    "The old harbour of the town has been the centre of its life for more than three hundred "
    "years, and the people who live there still talk about the ships that came and went, the "
    "storms that closed the port for weeks and the families who waited on the quay for news.",
    "In the early morning the fishermen bring in their boats, and by the time the sun is high "
    "the market is full of people who want to buy what was caught during the night, while the "
    "children run between the stalls and the old men sit on the benches and watch the sea.",
    "Most of the houses near the water were built after the great fire, when the council "
    "decided that every new building should be made of stone so that it would last.",
]
BOILER = ["Home", "About us", "Contact", "Shop", "We use cookies to improve your experience. "
          "Accept all cookies", "Copyright 2024 Example Corp. All rights reserved.",
          "Privacy policy", "Terms of use"]
MAIN_FR = ("Le vieux port de la ville est depuis longtemps le centre de la vie des habitants, et "
           "ceux qui y vivent parlent encore des bateaux qui arrivaient chaque été. "
           "Dans la matinée, les pêcheurs rentrent avec leurs filets et le marché se remplit "
           "de gens qui veulent acheter ce qui a été pêché pendant la nuit, à côté de l'église.")
MAIN_RU = ("Старый порт этого города уже много лет является центром его жизни, и люди, которые "
           "живут здесь, до сих пор рассказывают о кораблях, которые приходили и уходили. "
           "Рано утром рыбаки возвращаются с моря, и к полудню рынок уже полон людей, которые "
           "хотят купить то, что было поймано за ночь, и они говорят о погоде и о новостях.")
MAIN_JA = ("この町の古い港は三百年以上にわたって人々の生活の中心であり、そこに住む人々は今でも"
           "行き来した船について話しています。朝早く漁師たちが船を港に戻すと、市場は夜の間に"
           "とれた魚を買いたい人々でいっぱいになります。火事の後に建てられた家のほとんどは石で"
           "作られており、それは長く残るようにするためでした。夕方になると、子どもたちは海の近くで遊び、"
           "年寄りたちは港のベンチに座って、その日にあったことについて静かに話し合います。")


def page(paragraphs: list[str], title: str = "The harbour", meta_charset: str | None = None) -> str:
    """An HTML page: navigation, a cookie banner and a footer around the main article."""
    meta = f'<meta charset="{meta_charset}">' if meta_charset else ""
    nav = "".join(f'<li><a href="/{w.lower()}">{w}</a></li>' for w in BOILER[:4])
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<!doctype html><html><head>{meta}<title>{title}</title></head><body>"
            f'<nav><ul>{nav}</ul></nav><div class="cookie-banner"><p>{BOILER[4]}</p>'
            f'<button>Accept</button></div><main><article><h1>{title}</h1>{body}</article></main>'
            f'<footer><p>{BOILER[5]}</p><a href="/privacy">{BOILER[6]}</a> | '
            f'<a href="/terms">{BOILER[7]}</a></footer></body></html>')


def _record(kind: str, url: str, payload: bytes = b"", content_type: str = "text/html",
            ) -> bytes:
    """One WARC record as its own gzip member (as Common Crawl writes them)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    buf = io.BytesIO()
    writer = WARCWriter(buf, gzip=True)
    if kind == "response":
        http = StatusAndHeaders("200 OK", [("Content-Type", content_type)], protocol="HTTP/1.1")
        rec = writer.create_warc_record(url, "response", payload=io.BytesIO(payload),
                                        http_headers=http)
    elif kind == "request":
        http = StatusAndHeaders(f"GET {url} HTTP/1.1", [("Host", "example.com")],
                                is_http_request=True)
        rec = writer.create_warc_record(url, "request", payload=io.BytesIO(b""),
                                        http_headers=http)
    elif kind == "revisit":
        http = StatusAndHeaders("304 Not Modified", [], protocol="HTTP/1.1")
        rec = writer.create_warc_record(url, "revisit", payload=io.BytesIO(b""),
                                        http_headers=http)
    elif kind == "warcinfo":
        rec = writer.create_warcinfo_record("test.warc.gz", {"software": "curator-tests"})
    else:
        rec = writer.create_warc_record(url, kind, payload=io.BytesIO(payload),
                                        warc_content_type="application/warc-fields")
    writer.write_record(rec)
    return buf.getvalue()


def good_warc() -> bytes:
    """Pages in UTF-8, Latin-1, CP1251 and Shift-JIS, plus records that must be skipped."""
    return b"".join([
        _record("warcinfo", ""),
        _record("request", "http://en.example.com/harbour"),
        _record("response", "http://en.example.com/harbour", page(MAIN_EN).encode("utf-8"),
                "text/html; charset=utf-8"),
        _record("metadata", "http://en.example.com/harbour", b"fetchTimeMs: 12\r\n"),
        _record("response", "http://fr.example.com/port",
                page([MAIN_FR], "Le port").encode("latin-1"), "text/html; charset=ISO-8859-1"),
        _record("response", "http://ru.example.com/port",
                page([MAIN_RU], "Порт").encode("cp1251"), "text/html"),
        _record("response", "http://ja.example.com/port",
                page([MAIN_JA], "港", meta_charset="Shift_JIS").encode("shift_jis"),
                "text/html"),
        _record("response", "http://en.example.com/report.pdf", b"%PDF-1.4 binary", "application/pdf"),
        _record("revisit", "http://en.example.com/harbour"),
    ])


def bad_warc() -> tuple[bytes, int, int]:
    """A page, a truncated gzip member, a gzip member that is not a WARC record, then a page
    that must still be read. Returns the bytes and the offsets of the two bad members."""
    first = _record("response", "http://en.example.com/first", page(MAIN_EN[:2]).encode())
    cut = _record("response", "http://en.example.com/cut", page(MAIN_EN).encode())
    cut = cut[: len(cut) // 2]
    garbage = gzip.compress(b"this is not a WARC record\r\n\r\n")
    last = _record("response", "http://en.example.com/last", page(MAIN_EN[1:]).encode())
    return first + cut + garbage + last, len(first), len(first) + len(cut)


@pytest.fixture(scope="module")
def warc_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("warc")
    good = d / "CC-MAIN-good-00000.warc.gz"
    good.write_bytes(good_warc())
    data, off_cut, off_garbage = bad_warc()
    bad = d / "CC-MAIN-bad-00001.warc.gz"
    bad.write_bytes(data)
    return {"dir": str(d), "good": str(good), "bad": str(bad), "offsets": (off_cut, off_garbage)}


class _Handler(SimpleHTTPRequestHandler):
    server_version = "CuratorTest/1.0"

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        srv = self.server
        srv.log.append((self.path, self.headers.get("Range")))
        path = os.path.join(srv.root, self.path.lstrip("/").split("?")[0])
        if os.path.isdir(path):
            names = sorted(os.listdir(path))
            body = "".join(f'<a href="{n}/">{n}/</a>\n' for n in names).encode()
            return self._send(200, body, len(body))
        if not os.path.isfile(path):
            return self.send_error(404)
        with open(path, "rb") as fh:
            data = fh.read()
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            start = int(rng[6:].split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.end_headers()
                return None
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.send_header("Content-Length", str(len(data) - start))
            self.end_headers()
            self.wfile.write(data[start:])
            return None
        if self.path in srv.drop_once:
            srv.drop_once.discard(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(2)
            return None
        return self._send(200, data, len(data))

    def _send(self, code: int, body: bytes, length: int) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(length))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def http_server(tmp_path):
    """``(base_url, root_dir, server)``: serves ``root_dir``; ``server.log`` lists
    ``(path, Range header)``; paths added to ``server.drop_once`` send half their bytes once."""
    root = tmp_path / "www"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.root, server.log, server.drop_once = str(root), [], set()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", root, server
    server.shutdown()
    server.server_close()


def write_cc_site(root, warc_files) -> list[str]:
    """Lay out a Common Crawl mirror under ``root``: collinfo.json with three snapshots, the
    in-range ones listing the test WARC files. Returns the in-range WARC paths."""
    snaps = ["CC-MAIN-2024-10", "CC-MAIN-2024-18", "CC-MAIN-2023-50"]
    (root / "collinfo.json").write_text(json.dumps([{"id": s, "name": s} for s in snaps]))
    served = []
    for snap, src in zip(snaps, [warc_files["good"], warc_files["bad"], warc_files["good"]],
                         strict=True):
        rel = f"crawl-data/{snap}/segments/1/warc/{snap}-00000.warc.gz"
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(open(src, "rb").read())
        listing = root / "crawl-data" / snap / "warc.paths.gz"
        listing.write_bytes(gzip.compress((rel + "\n").encode()))
        if snap != "CC-MAIN-2023-50":
            served.append(rel)
    return served
