"""Wikipedia (bz2 XML dump), ArXiv (LaTeX source tarball) and TinyStories (text file over HTTP
with a broken first download) through the download -> iterate -> extract stages."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import tarfile

import pytest
from curator import FileGroupTask, Pipeline
from curator_web import (
    ArxivDownloadExtractStage,
    TinyStoriesDownloadExtractStage,
    WikipediaDownloadExtractStage,
)
from curator_web.download.base import DocumentIterateExtractStage
from curator_web.wikipedia import WikipediaExtractor, WikipediaIterator

from tests.web.archives import tar_gz

NS = "http://www.mediawiki.org/xml/export-0.10/"
ARTICLE = """{{Infobox settlement|name=Harbourtown|population=1234}}
'''Harbourtown''' is a small [[port]] town on the [[North Sea|northern coast]].<ref>{{cite web|url=http://x}}</ref>
[[File:Harbour.jpg|thumb|The harbour at dawn]]

== History ==
The town was founded by [[fishing|fishermen]] in the 17th century.<!-- hidden note -->
{| class="wikitable"
| a || b
|}
[[Category:Port towns]]
"""


def _page(title: str, pid: int, text: str, ns: int = 0, redirect: bool = False) -> str:
    red = f'<redirect title="{title}x" />' if redirect else ""
    return (f"<page><title>{title}</title><ns>{ns}</ns><id>{pid}</id>{red}<revision><id>1</id>"
            f'<text xml:space="preserve">{text.replace("&", "&amp;").replace("<", "&lt;")}'
            f"</text></revision></page>")


def _dump() -> bytes:
    xml = (f'<mediawiki xmlns="{NS}"><siteinfo><sitename>Wikipedia</sitename></siteinfo>'
           + _page("Harbourtown", 10, ARTICLE)
           + _page("Harbour town", 11, "#REDIRECT [[Harbourtown]]", redirect=True)
           + _page("Talk:Harbourtown", 12, "Discussion", ns=1)
           + "</mediawiki>")
    return bz2.compress(xml.encode())


def test_wikipedia_dump_over_http(http_server, tmp_path) -> None:
    base, root, server = http_server
    rel = "enwiki/20240101/enwiki-20240101-pages-articles-multistream1.xml-p1p41242.bz2"
    (root / rel).parent.mkdir(parents=True)
    (root / rel).write_bytes(_dump())
    (root / "enwiki/20231201").mkdir()
    status = {"jobs": {"articlesmultistreamdump": {"status": "done", "files": {
        rel.rsplit("/", 1)[1]: {"url": "/" + rel}}}}}
    (root / "enwiki/20240101/dumpstatus.json").write_text(json.dumps(status))
    stage = WikipediaDownloadExtractStage("en", str(tmp_path / "dl"),
                                          wikidumps_index_prefix=base)
    result = Pipeline("wiki", stages=[stage]).run()
    (batch,) = result
    rows = batch.to_pyarrow().to_pylist()
    assert [r["title"] for r in rows] == ["Harbourtown"]
    text = rows[0]["text"]
    assert "Harbourtown is a small port town on the northern coast." in text
    assert "The town was founded by fishermen in the 17th century." in text
    for gone in ("Infobox", "cite web", "thumb", "Category", "wikitable", "hidden note", "{{"):
        assert gone not in text
    assert rows[0]["url"] == "https://en.wikipedia.org/wiki/Harbourtown"
    assert batch.metadata["skipped_records"] == {"redirect": 1, "not an article (namespace)": 1}
    assert any(p.endswith("20240101/dumpstatus.json") for p, _ in server.log)  # newest dump


def test_wikipedia_malformed_xml_is_rejected_and_earlier_pages_kept(tmp_path) -> None:
    xml = (f'<mediawiki xmlns="{NS}">' + _page("Harbourtown", 10, ARTICLE)
           + "<page><title>Broken</title><ns>0</ns></pag></mediawiki>")
    path = tmp_path / "dump.xml.bz2"
    path.write_bytes(bz2.compress(xml.encode()))
    stage = DocumentIterateExtractStage(iterator=WikipediaIterator(),
                                        extractor=WikipediaExtractor())
    out = stage.process(FileGroupTask(task_id="w", dataset_name="w", data=[str(path)]))
    assert out.to_pyarrow().column("title").to_pylist() == ["Harbourtown"]
    (rej,) = stage.drain_rejected()
    assert "malformed XML" in rej.reason
    assert rej.record["line"] == xml[: xml.index("</pag>")].count("\n") + 1


MAIN_TEX = r"""\documentclass{article}
\newcommand{\model}{HarbourNet}
\def\data{the Harbour corpus}
\begin{document}
\title{A study}\maketitle
\begin{abstract}Preamble text that is dropped.\end{abstract}
\section{Introduction}
We present \model, trained on \data. % a comment that must go
It works well.
\begin{thebibliography}{1}\bibitem{x} A reference.\end{thebibliography}
\end{document}
"""


def _tarball(path) -> None:
    members = {
        "2401/2401.00001.gz": tar_gz({"main.tex": MAIN_TEX, "fig.png": "png"}),
        "2401/2401.00002.gz": gzip.compress(b"\\section{Only}\nA single gzipped file paper."),
        "2401/2401.00003.pdf": b"%PDF-1.4",
        "2401/2401.00004.gz": b"\x1f\x8b\x08\x00broken gzip",
    }
    with tarfile.open(path, "w") as t:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))


def test_arxiv_tarball_to_text(tmp_path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    _tarball(src / "arXiv_src_2401_001.tar")
    stage = ArxivDownloadExtractStage(tar_paths=str(src))
    result = Pipeline("arxiv", stages=[stage]).run()
    (batch,) = result
    rows = {r["id"]: r["text"] for r in batch.to_pyarrow().to_pylist()}
    assert set(rows) == {"2401.00001", "2401.00002"}
    assert "We present HarbourNet, trained on the Harbour corpus." in rows["2401.00001"]
    for gone in ("Preamble", "comment", "A reference", "documentclass", "\\model"):
        assert gone not in rows["2401.00001"]
    assert "A single gzipped file paper." in rows["2401.00002"]
    assert batch.metadata["skipped_records"] == {"PDF only, no LaTeX source": 1}
    assert result.rejected.total == 1
    (rec,) = result.rejected.records
    assert rec.record.get("member") == "2401/2401.00004.gz", rec


def test_tinystories_download_with_resume_and_split(http_server, tmp_path) -> None:
    base, root, server = http_server
    stories = [f"Once upon a time there was a cat number {i}. It was happy." for i in range(500)]
    (root / "TinyStories-valid.txt").write_text(
        "\n<|endoftext|>\n".join(stories) + "\n<|endoftext|>\n\n<|endoftext|>\n")
    server.drop_once.add("/TinyStories-valid.txt")
    raw = tmp_path / "raw"
    result = Pipeline("tinystories", stages=[TinyStoriesDownloadExtractStage(
        str(raw), split="valid", url=f"{base}/TinyStories-valid.txt")]).run()
    rows = [r for t in result for r in t.to_pyarrow().to_pylist()]
    assert [r["text"] for r in rows] == stories
    assert len({r["id"] for r in rows}) == 500 and rows[0]["id"] == "TinyStories-valid-0"
    assert any(r and r.startswith("bytes=") for _, r in server.log)  # resumed
    assert (raw / "TinyStories-valid.txt").read_bytes() == (
        root / "TinyStories-valid.txt").read_bytes()
    assert not list(raw.glob("*.part"))
    # a second run uses the complete file and does not download again
    n = len(server.log)
    Pipeline("again", stages=[TinyStoriesDownloadExtractStage(
        str(raw), split="valid", url=f"{base}/TinyStories-valid.txt")]).run()
    assert len(server.log) == n


def test_tinystories_rejects_unknown_split(tmp_path) -> None:
    from curator.errors import ConfigError

    with pytest.raises(ConfigError, match="split"):
        TinyStoriesDownloadExtractStage(str(tmp_path), split="test")


def test_plugin_registers_the_web_components() -> None:
    from curator.plugins import get_registry

    reg = get_registry()
    assert reg.get("CommonCrawlDownloadExtractStage").kind == "reader"
    assert reg.get("TinyStoriesDownloadExtractStage").kind == "reader"
    assert reg.get("CommonCrawlWARCDownloader").kind == "downloader"
    assert reg.get("TrafilaturaExtractor").kind == "extractor"
    assert reg.get("CommonCrawlWarcIterator").kind == "extractor"
