"""Every HTML response of an archive is extracted, or skipped / rejected with its own reason and
offset, counted once — on records written the way wget, crawlers and the Internet Archive write
them (chunked and compressed bodies, LF-only headers, ``<uri>`` targets, ARC files)."""

from __future__ import annotations

import gzip
import os
import uuid
import zlib

import brotli
import pytest
from curator import FileGroupTask
from curator_web import (
    CommonCrawlDownloadExtractStage,
    CommonCrawlHTMLExtractor,
    CommonCrawlWarcIterator,
    DocumentIterateExtractStage,
)

from tests.web.archives import arc_file, arc_record, chunked, http_response, warc_record
from tests.web.conftest import MAIN_EN, page

pytestmark = pytest.mark.filterwarnings("ignore")

HTML = [("Content-Type", "text/html; charset=utf-8")]
BODY = page(MAIN_EN).encode()


def _run(path: str, algorithm: str = "resiliparse"):
    stage = DocumentIterateExtractStage(iterator=CommonCrawlWarcIterator(),
                                        extractor=CommonCrawlHTMLExtractor(algorithm))
    out = stage.process(FileGroupTask(task_id="t", dataset_name="w", data=[path]))
    return out, stage.drain_rejected()


def _urls(out) -> list[str]:
    return out.to_pyarrow().column("url").to_pylist()


def _texts(out) -> dict[str, str]:
    t = out.to_pyarrow()
    return dict(zip(t.column("url").to_pylist(), t.column("text").to_pylist(), strict=True))


@pytest.mark.parametrize("gz", [True, False])
def test_records_without_record_id_are_read_with_an_id_from_file_and_offset(tmp_path,
                                                                             gz) -> None:
    """As ia-web-commons' test archives are written: intact records, no WARC-Record-ID."""
    recs = [warc_record(http_response(BODY, HTML), f"http://a.example/{i}", record_id=i == 0,
                        gz=gz) for i in range(3)]
    path = tmp_path / ("noid.warc.gz" if gz else "noid.warc")
    path.write_bytes(b"".join(recs))
    out, rejected = _run(str(path))
    assert not rejected
    assert _urls(out) == [f"http://a.example/{i}" for i in range(3)]
    ids = out.to_pyarrow().column("warc_id").to_pylist()
    offsets = [sum(map(len, recs[:i])) for i in (1, 2)]
    assert ids[1:] == [str(uuid.uuid5(uuid.NAMESPACE_URL, f"{path.name}:{o}")) for o in offsets]
    again, _ = _run(str(path))
    assert again.to_pyarrow().column("warc_id").to_pylist() == ids


def test_an_uncompressed_warc_ending_in_a_broken_header_keeps_its_last_page(tmp_path) -> None:
    recs = [warc_record(http_response(BODY, HTML), f"http://a.example/{i}", gz=False)
            for i in range(3)]
    path = tmp_path / "broken-tail.warc"
    path.write_bytes(b"".join(recs) + b"WARC/1.0\r\nWARC-Type: resp")
    out, rejected = _run(str(path))
    assert _urls(out) == [f"http://a.example/{i}" for i in range(3)]
    (bad,) = rejected
    assert bad.record["offset"] == sum(map(len, recs)), bad


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip", "deflate", "raw-deflate", "br"])
def test_compressed_http_bodies_are_decoded(tmp_path, encoding) -> None:
    packed = {"gzip": gzip.compress(BODY), "x-gzip": gzip.compress(BODY),
              "deflate": zlib.compress(BODY), "raw-deflate": zlib.compress(BODY)[2:-4],
              "br": brotli.compress(BODY)}[encoding]
    header = encoding.replace("raw-", "")
    path = tmp_path / "ce.warc.gz"
    path.write_bytes(warc_record(http_response(packed, [*HTML, ("Content-Encoding", header)])))
    out, rejected = _run(str(path))
    assert not rejected
    (text,) = _texts(out).values()
    assert MAIN_EN[0] in text


def test_chunked_bodies_are_joined_without_chunk_sizes(tmp_path) -> None:
    path = tmp_path / "chunked.warc.gz"
    block = http_response(chunked(BODY, 7), [*HTML, ("Transfer-Encoding", "chunked")])
    both = http_response(chunked(gzip.compress(BODY), 50),
                         [*HTML, ("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")])
    path.write_bytes(warc_record(block, "http://a.example/c") +
                     warc_record(both, "http://a.example/cg"))
    out, rejected = _run(str(path))
    assert not rejected
    texts = _texts(out)
    assert MAIN_EN[0] in texts["http://a.example/c"] and MAIN_EN[0] in texts["http://a.example/cg"]


def test_a_body_that_does_not_decode_is_rejected_with_its_offset(tmp_path) -> None:
    bad = http_response(b"\x1f\x8b\x08\x00 not gzip at all" * 20,
                        [*HTML, ("Content-Encoding", "gzip")])
    recs = [warc_record(bad, "http://a.example/bad"),
            warc_record(http_response(BODY, HTML), "http://a.example/good")]
    path = tmp_path / "badbody.warc.gz"
    path.write_bytes(b"".join(recs))
    out, rejected = _run(str(path))
    assert _urls(out) == ["http://a.example/good"]
    (rej,) = rejected
    assert "decoded" in rej.reason and rej.record["offset"] == 0


def test_lf_only_http_headers_and_wget_angle_bracket_targets(tmp_path) -> None:
    path = tmp_path / "wget.warc.gz"
    path.write_bytes(
        warc_record(http_response(BODY, [("Content-Type", "text/html")], nl=b"\n"),
                    "http://old.example/lf") +
        warc_record(http_response(BODY, HTML), target="<http://wget.example/page>"))
    out, rejected = _run(str(path))
    assert not rejected
    assert _urls(out) == ["http://old.example/lf", "http://wget.example/page"]


@pytest.mark.parametrize("gz", [True, False])
def test_arc_files_are_read(tmp_path, gz) -> None:
    recs = [("http://arc.example/a", http_response(BODY, [("Content-Type", "text/html")],
                                                  status=b"HTTP/1.0 200 OK")),
            ("http://arc.example/img.png", http_response(b"\x89PNG", [("Content-Type",
                                                                        "image/png")])),
            ("http://arc.example/b", http_response(BODY, [("Content-Type", "text/html")]))]
    path = tmp_path / ("crawl.arc.gz" if gz else "crawl.arc")
    path.write_bytes(arc_file(recs, gz=gz))
    out, rejected = _run(str(path))
    assert not rejected
    assert _urls(out) == ["http://arc.example/a", "http://arc.example/b"]
    ids = out.to_pyarrow().column("warc_id").to_pylist()
    assert len(set(ids)) == 2 and all(len(i) == 36 for i in ids)
    assert out.metadata["skipped_records"] == {"ARC file header": 1, "non-HTML response": 1}


def test_symlinked_inputs_in_a_directory_are_found(tmp_path) -> None:
    real = tmp_path / "store"
    real.mkdir()
    (real / "x.warc.gz").write_bytes(warc_record(http_response(BODY, HTML), "http://s.example/"))
    links = tmp_path / "links"
    links.mkdir()
    os.symlink(real / "x.warc.gz", links / "x.warc.gz")
    stage = CommonCrawlDownloadExtractStage(warc_paths=str(links), html_extraction="resiliparse")
    urls = stage.decompose()[0].url_generator.generate_urls()
    assert urls == [str(links / "x.warc.gz")]


def test_each_html_response_is_counted_once_with_its_own_reason(tmp_path) -> None:
    """A page in a language without a stop list (jusText needs one), an empty page, a revisit
    and a page with text: 4 records, 4 outcomes, nothing counted twice."""
    mongolian = page(["Хотын хуучин боомт нь гурван зуун жилийн турш түүний амьдралын төв "
                      "байсаар ирсэн бөгөөд тэнд амьдардаг хүмүүс хөлөг онгоцны тухай ярьсаар."] * 3)
    recs = [warc_record(http_response(mongolian.encode(), HTML), "http://gr.example/"),
            warc_record(http_response(b"<html><body></body></html>", HTML),
                        "http://empty.example/"),
            warc_record(http_response(b"", [], status=b"HTTP/1.1 304 Not Modified"),
                        "http://rev.example/", kind="revisit"),
            warc_record(http_response(BODY, HTML), "http://en.example/")]
    path = tmp_path / "count.warc.gz"
    path.write_bytes(b"".join(recs))
    out, rejected = _run(str(path), "justext")
    assert _urls(out) == ["http://en.example/"] and not rejected
    skipped = out.metadata["skipped_records"]
    assert sum(skipped.values()) == 3, skipped
    assert skipped["revisit record"] == 1
    at = {w["url"]: (w["reason"], w["offset"]) for w in out.metadata["skipped_at"]}
    offsets = [sum(map(len, recs[:i])) for i in range(len(recs))]
    assert at["http://gr.example/"][1] == offsets[0]
    assert at["http://gr.example/"][0].startswith("no stop list for language")
    assert at["http://empty.example/"] == ("no text extracted", offsets[1])


@pytest.mark.parametrize("cut", [200, 700])
def test_damage_in_the_middle_of_an_uncompressed_warc_costs_only_the_damaged_record(
        tmp_path, cut) -> None:
    """A record cut short in its header (200) or its body (700: its length runs on)."""
    recs = [warc_record(http_response(BODY, HTML), f"http://a.example/{i}", gz=False)
            for i in range(3)]
    damaged = recs[1][:cut] + b"\r\n\r\n"
    path = tmp_path / "middle.warc"
    path.write_bytes(recs[0] + damaged + recs[2])
    out, rejected = _run(str(path))
    assert _urls(out) == ["http://a.example/0", "http://a.example/2"]
    assert len(rejected) == 1


def test_a_whole_file_gzip_stream_is_read(tmp_path) -> None:
    raw = b"".join(warc_record(http_response(BODY, HTML), f"http://a.example/{i}", gz=False)
                   for i in range(3))
    path = tmp_path / "whole.warc.gz"
    path.write_bytes(gzip.compress(raw))
    out, rejected = _run(str(path))
    assert _urls(out) == [f"http://a.example/{i}" for i in range(3)] and not rejected


def _accounting(path: str, algorithm: str = "resiliparse") -> tuple[list, dict[int, list[str]]]:
    """The URLs extracted and every outcome by offset, the iterator's skips located too."""
    iterator = CommonCrawlWarcIterator()
    iterator.locate_skips = True
    extractor = CommonCrawlHTMLExtractor(algorithm)
    stage = DocumentIterateExtractStage(iterator=iterator, extractor=extractor)
    raw = {r["offset"]: r["url"] for r in CommonCrawlWarcIterator().iterate(path)}
    out = stage.process(FileGroupTask(task_id="t", dataset_name="w", data=[path]))
    by_offset: dict[int, list[str]] = {}
    for url in _urls(out):
        by_offset.setdefault(next(o for o, u in raw.items() if u == url), []).append("extracted")
    for at in out.metadata["skipped_at"]:
        by_offset.setdefault(at["offset"], []).append(at["reason"])
    for rej in stage.drain_rejected():
        by_offset.setdefault(rej.record["offset"], []).append("rejected: " + rej.reason)
    return _urls(out), by_offset


def test_every_record_of_a_mixed_archive_is_accounted_once_at_its_offset(tmp_path) -> None:
    """warcinfo, request, HTML and image responses, a revisit, a record without id and an
    empty chunked redirect: one outcome each, at the record's own offset."""
    redirect = http_response(b"0\r\n\r\n", [*HTML, ("Transfer-Encoding", "chunked"),
                                              ("Location", "https://a.example/")],
                             status=b"HTTP/1.1 301 Moved Permanently")
    recs = [warc_record(b"software: test\r\n", kind="warcinfo"),
            warc_record(b"GET / HTTP/1.1\r\nHost: a.example\r\n\r\n", kind="request"),
            warc_record(http_response(BODY, HTML), "http://a.example/page"),
            warc_record(http_response(b"\x89PNG", [("Content-Type", "image/png")]),
                        "http://a.example/i.png"),
            warc_record(http_response(b"", [], status=b"HTTP/1.1 304 Not Modified"),
                        "http://a.example/page", kind="revisit"),
            warc_record(http_response(BODY, HTML), "http://a.example/noid", record_id=False),
            warc_record(redirect, "http://a.example/moved")]
    path = tmp_path / "mixed.warc.gz"
    path.write_bytes(b"".join(recs))
    urls, by_offset = _accounting(str(path))
    offsets = [sum(map(len, recs[:i])) for i in range(len(recs))]
    assert sorted(by_offset) == offsets, by_offset
    assert all(len(v) == 1 for v in by_offset.values()), by_offset
    assert urls == ["http://a.example/page", "http://a.example/noid"]
    assert by_offset[offsets[6]] == ["empty payload"]


def test_a_gzip_body_whose_trailer_is_cut_off_is_decoded_and_a_cut_stream_is_not(
        tmp_path) -> None:
    """warcio's example-trunc.warc: the gzip CRC / size trailer lies past the record's
    length; the compressed page itself is whole."""
    packed = gzip.compress(BODY)
    headers = [*HTML, ("Content-Encoding", "gzip")]
    recs = [warc_record(http_response(packed[:-8], headers), "http://a.example/no-trailer"),
            warc_record(http_response(packed[:len(packed) // 2], headers),
                        "http://a.example/cut")]
    path = tmp_path / "trailer.warc.gz"
    path.write_bytes(b"".join(recs))
    out, rejected = _run(str(path))
    assert _urls(out) == ["http://a.example/no-trailer"]
    assert MAIN_EN[0] in _texts(out)["http://a.example/no-trailer"]
    (cut,) = rejected
    assert "truncated" in str(cut.error) and cut.record["offset"] == len(recs[0])


@pytest.mark.parametrize("shape", ["short length", "trailer outside the length"])
def test_bytes_past_a_records_length_are_rejected_once_at_their_own_offset(tmp_path,
                                                                           shape) -> None:
    """A plain WARC record whose Content-Length is a few bytes short of its block (pywb's
    example.warc, warcio's example-trunc.warc): the record is read, the stray bytes are one
    rejection at the offset where they start, the next record is read at its own offset."""
    if shape == "short length":
        block = http_response(BODY + b"<!-- end -->", HTML)
    else:
        block = http_response(gzip.compress(BODY), [*HTML, ("Content-Encoding", "gzip")])
    short = warc_record(block, "http://a.example/short", gz=False,
                        declared_length=len(block) - 6)
    empty = http_response(b"<html><body></body></html>", HTML)
    recs = [warc_record(http_response(BODY, HTML), "http://a.example/0", gz=False), short,
            warc_record(empty, "http://a.example/empty", gz=False),
            warc_record(http_response(BODY, HTML), "http://a.example/3", gz=False)]
    path = tmp_path / "short.warc"
    path.write_bytes(b"".join(recs))
    urls, by_offset = _accounting(str(path))
    offsets = [sum(map(len, recs[:i])) for i in range(len(recs))]
    stray = offsets[1] + short.index(b"\r\n\r\n") + 4 + len(block) - 6
    assert urls == ["http://a.example/0", "http://a.example/short", "http://a.example/3"]
    assert sorted(by_offset) == sorted([*offsets, stray]), by_offset
    assert all(len(v) == 1 for v in by_offset.values()), by_offset
    assert by_offset[offsets[2]] == ["no text extracted"]
    assert by_offset[stray][0].startswith("rejected: malformed WARC record: 10 bytes after the "
                                          f"record at offset {offsets[1]} ")


def test_a_one_stream_gzip_warc_gives_each_record_its_decompressed_offset(tmp_path) -> None:
    """warcio's example-bad-non-chunked.warc.gz: the whole file one gzip stream."""
    recs = [warc_record(http_response(BODY, HTML), f"http://a.example/{i}", gz=False)
            for i in range(3)]
    path = tmp_path / "one-stream.warc.gz"
    path.write_bytes(gzip.compress(b"".join(recs)))
    offsets = [r["offset"] for r in CommonCrawlWarcIterator().iterate(str(path))]
    assert offsets == [sum(map(len, recs[:i])) for i in range(3)]


def test_a_plain_arc_file_goes_on_after_malformed_records(tmp_path) -> None:
    """pywb's and warcio's bad.arc: lengths ``-1`` and ``abc``; each bad record is one
    rejection at its offset and the records after it are read."""
    good = http_response(BODY, [("Content-Type", "text/html")])
    parts = [arc_file([("http://arc.example/a", good)], gz=False),
             b"http://arc.example/bad1 127.0.0.1 201404010000000000 text/html -1\n\n",
             arc_record("http://arc.example/b", good),
             b"http://arc.example/bad2 127.0.0.1 201404010000000000 text/html abc\n\n",
             arc_record("http://arc.example/c", good)]
    path = tmp_path / "bad.arc"
    path.write_bytes(b"".join(parts))
    out, rejected = _run(str(path))
    assert _urls(out) == ["http://arc.example/a", "http://arc.example/b", "http://arc.example/c"]
    offsets = [sum(map(len, parts[:i])) for i in (1, 3)]
    assert sorted(r.record["offset"] for r in rejected) == offsets



def test_the_warcio_comparison_script_accounts_a_written_archive(tmp_path, capsys) -> None:
    """``compat/warc_accounting.py`` (run by hand on public archives) stays runnable."""
    import importlib.util
    import json
    import sys

    script = os.path.join(os.path.dirname(__file__), "..", "..", "compat", "warc_accounting.py")
    spec = importlib.util.spec_from_file_location("warc_accounting", script)
    module = importlib.util.module_from_spec(spec)
    sys.modules["warc_accounting"] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["warc_accounting"]
    recs = [warc_record(b"GET / HTTP/1.1\r\n\r\n", kind="request"),
            warc_record(http_response(BODY, HTML), "http://a.example/", record_id=False)]
    path = tmp_path / "a.warc.gz"
    path.write_bytes(b"".join(recs))
    assert module.main([str(path), "--algorithm", "resiliparse", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (row["warcio"], row["extracted"], row["skipped"], row["twice"]) == (2, 1, 1, 0)
