"""Every HTML response of an archive is extracted, or skipped / rejected with its own reason and
offset, counted once — on records written the way wget, crawlers and the Internet Archive write
them (chunked and compressed bodies, LF-only headers, ``<uri>`` targets, ARC files)."""

from __future__ import annotations

import gzip
import os
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

from tests.web.archives import arc_file, chunked, http_response, warc_record
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


def test_a_record_without_record_id_costs_only_that_record(tmp_path) -> None:
    recs = [warc_record(http_response(BODY, HTML), "http://a.example/1"),
            warc_record(http_response(BODY, HTML), "http://a.example/2", record_id=False),
            warc_record(http_response(BODY, HTML), "http://a.example/3")]
    path = tmp_path / "noid.warc.gz"
    path.write_bytes(b"".join(recs))
    out, rejected = _run(str(path))
    assert _urls(out) == ["http://a.example/1", "http://a.example/3"]
    (bad,) = rejected
    assert "WARC-Record-ID" in bad.reason
    assert bad.record["offset"] == len(recs[0]) and bad.record["url"] == "http://a.example/2"


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
