"""CC-NEWS months, Wikipedia multistream dumps read stream by stream through their index, and
arXiv's bulk ``arXiv_src_*.tar`` layout — each served from a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import tarfile

import pytest
from curator import Pipeline
from curator.errors import ConfigError
from curator_web import (
    ArxivDownloadExtractStage,
    CommonCrawlDownloadExtractStage,
    WikipediaDownloadExtractStage,
)
from curator_web.wikipedia import WikipediaIterator

from tests.web.archives import http_response, tar_gz, warc_record
from tests.web.conftest import MAIN_EN, page

pytestmark = pytest.mark.filterwarnings("ignore")


def _rows(result) -> list[dict]:
    return [r for t in result for r in t.to_pyarrow().to_pylist()]


def test_cc_news_month_range_over_http(http_server, tmp_path) -> None:
    base, root, server = http_server
    for month, n in (("2024/01", 2), ("2024/02", 1), ("2024/03", 1)):
        rels = []
        for i in range(n):
            rel = f"crawl-data/CC-NEWS/{month}/CC-NEWS-{month.replace('/', '')}01-{i:05d}.warc.gz"
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(warc_record(http_response(
                page(MAIN_EN).encode(), [("Content-Type", "text/html")]),
                f"http://news.example/{month}/{i}"))
            rels.append(rel)
        (root / f"crawl-data/CC-NEWS/{month}/warc.paths.gz").write_bytes(
            gzip.compress("\n".join(rels).encode() + b"\n"))
    stage = CommonCrawlDownloadExtractStage("2024-01", "2024-02", str(tmp_path / "dl"),
                                            crawl_type="news", html_extraction="resiliparse",
                                            data_prefix=base)
    result = Pipeline("news", stages=[stage]).run()
    assert sorted(r["url"] for r in _rows(result)) == [
        "http://news.example/2024/01/0", "http://news.example/2024/01/1",
        "http://news.example/2024/02/0"]
    assert not any("2024/03" in p for p, _ in server.log)
    with pytest.raises(ConfigError, match="year-month"):
        CommonCrawlDownloadExtractStage("2024-01", "2024-13", "dl", crawl_type="news")


NS = "http://www.mediawiki.org/xml/export-0.10/"


def _page(title: str, pid: int, text: str) -> str:
    return (f"  <page>\n    <title>{title}</title>\n    <ns>0</ns>\n    <id>{pid}</id>\n"
            f"    <revision><id>{pid}0</id><text xml:space=\"preserve\">{text}</text>"
            f"</revision>\n  </page>\n")


def multistream(pages_per_stream: int = 2, streams: int = 4,
                corrupt: int | None = None) -> tuple[bytes, bytes, list[str]]:
    """A pages-articles-multistream dump as Wikimedia writes it (a bz2 stream with the
    siteinfo header, streams of pages, a last stream closing the root) and its index
    (``offset:page_id:title`` per page). Stream ``corrupt`` is damaged."""
    head = (f'<mediawiki xmlns="{NS}" version="0.10" xml:lang="en">\n  <siteinfo>\n'
            f"    <sitename>Wikipedia</sitename>\n  </siteinfo>\n")
    parts, index, titles, pid = [bz2.compress(head.encode())], [], [], 1
    offset = len(parts[0])
    for s in range(streams):
        xml = ""
        for _ in range(pages_per_stream):
            title = f"Town {pid}"
            xml += _page(title, pid, f"'''{title}''' is a town with a harbour, number {pid}.")
            index.append(f"{offset}:{pid}:{title}")
            titles.append(title)
            pid += 1
        data = bz2.compress(xml.encode())
        if s == corrupt:
            data = data[:20] + b"\x00" * 30 + data[50:]
        parts.append(data)
        offset += len(data)
    parts.append(bz2.compress(b"</mediawiki>\n"))
    return b"".join(parts), bz2.compress("\n".join(index).encode() + b"\n"), titles


def _serve_wiki(root, dump: bytes, index: bytes) -> None:
    d = root / "enwiki" / "20240101"
    d.mkdir(parents=True)
    data_name = "enwiki-20240101-pages-articles-multistream.xml.bz2"
    index_name = "enwiki-20240101-pages-articles-multistream-index.txt.bz2"
    (d / data_name).write_bytes(dump)
    (d / index_name).write_bytes(index)
    files = {n: {"url": f"/enwiki/20240101/{n}"} for n in (data_name, index_name)}
    (d / "dumpstatus.json").write_text(json.dumps(
        {"jobs": {"articlesmultistreamdump": {"status": "done", "files": files}}}))


def test_wikipedia_multistream_over_http_with_its_index(http_server, tmp_path) -> None:
    base, root, server = http_server
    dump, index, titles = multistream(corrupt=2)
    _serve_wiki(root, dump, index)
    stage = WikipediaDownloadExtractStage(download_dir=str(tmp_path / "dl"),
                                          dump_date="20240101", wikidumps_index_prefix=base)
    result = Pipeline("wiki", stages=[stage]).run()
    got = [r["title"] for r in _rows(result)]
    # the damaged third stream costs its two pages only; the index is not read as a dump
    assert got == titles[:4] + titles[6:]
    (rej,) = result.rejected.records
    assert "stream" in rej.reason and rej.record["offset"] == int(
        bz2.decompress(index).decode().splitlines()[4].split(":")[0])


def test_wikipedia_multistream_is_read_one_stream_at_a_time(tmp_path) -> None:
    dump, index, titles = multistream(pages_per_stream=3, streams=5)
    path = tmp_path / "enwiki-20240101-pages-articles-multistream.xml.bz2"
    path.write_bytes(dump)
    (tmp_path / "enwiki-20240101-pages-articles-multistream-index.txt.bz2").write_bytes(index)
    reads: list[int] = []
    real_open = open

    class Counting(io.FileIO):
        def read(self, n=-1):
            data = super().read(n)
            reads.append(len(data))
            return data

    it = WikipediaIterator()
    import builtins

    def counting_open(p, mode="r", *a, **k):
        if str(p) == str(path) and "b" in mode:
            return Counting(str(p), "r")
        return real_open(p, mode, *a, **k)

    builtins.open = counting_open
    try:
        first = next(iter(it.iterate(str(path))))
    finally:
        builtins.open = real_open
    assert first["title"] == titles[0]
    assert 0 < sum(reads) < len(dump) / 2  # the first page came without reading the whole file


TEX = ("\\documentclass{article}\\begin{document}\\section{Intro}We study harbours in paper "
       "{n}.\\end{document}")


def test_arxiv_bulk_tar_layout_over_http(http_server, tmp_path) -> None:
    """``arXiv_src_YYMM_NNN.tar``: a ``YYMM/`` folder of ``<id>.gz`` members, each a gzipped
    tar of the paper's files or one gzipped .tex; old-style ids; PDF-only papers."""
    base, root, server = http_server
    members = {
        "2401/2401.00001.gz": tar_gz({"main.tex": TEX.replace("{n}", "one"),
                                    "fig.png": "x"}),
        "2401/2401.00002.gz": gzip.compress(TEX.replace("{n}", "two").encode()),
        "2401/2401.00003.pdf": b"%PDF-1.5",
        "9901/hep-th9901001.gz": gzip.compress(TEX.replace("{n}", "three").encode()),
    }
    (root / "src").mkdir()
    with tarfile.open(root / "src" / "arXiv_src_2401_001.tar", "w") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    stage = ArxivDownloadExtractStage(download_dir=str(tmp_path / "dl"),
                                      tar_paths=[f"{base}/src/arXiv_src_2401_001.tar"])
    result = Pipeline("arxiv", stages=[stage]).run()
    rows = {r["id"]: r["text"] for r in _rows(result)}
    assert set(rows) == {"2401.00001", "2401.00002", "hep-th/9901001"}
    assert "harbours in paper three" in rows["hep-th/9901001"]
    assert (tmp_path / "dl" / "arXiv_src_2401_001.tar").exists()
