"""Wikipedia: a pages-articles XML dump (bz2) -> articles -> plain text via mwparserfromhell."""

from __future__ import annotations

import bz2
import json
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlparse
from xml.etree import ElementTree as ET

from curator.errors import ConfigError

from curator_web.download.base import (
    DocumentDownloader,
    DocumentDownloadExtractStage,
    DocumentExtractor,
    DocumentIterator,
    LocalFilesUrlGenerator,
    URLGenerator,
)
from curator_web.download.http import DownloadError, read_url

__all__ = ["WikipediaUrlGenerator", "WikipediaDownloader", "WikipediaIterator",
           "WikipediaExtractor", "WikipediaDownloadExtractStage"]

log = logging.getLogger(__name__)
DUMPS_PREFIX = "https://dumps.wikimedia.org"


class WikipediaUrlGenerator(URLGenerator):
    """The pages-articles-multistream files of the ``language`` dump of ``dump_date``
    (``YYYYMMDD``; default: the newest listed), from ``dumpstatus.json``."""

    def __init__(self, language: str = "en", dump_date: str | None = None,
                 wikidumps_index_prefix: str = DUMPS_PREFIX) -> None:
        self.language, self.dump_date = language, dump_date
        self.prefix = wikidumps_index_prefix.rstrip("/")

    def generate_urls(self) -> list[str]:
        base = f"{self.prefix}/{self.language}wiki"
        date = self.dump_date
        if date is None:
            listing = read_url(f"{base}/").decode("utf-8", "replace")
            dates = sorted(set(re.findall(r'href="(\d{8})/?"', listing)))
            if not dates:
                raise ConfigError(f"WikipediaUrlGenerator: no dumps listed at {base}/; "
                                  f"give dump_date='YYYYMMDD'")
            date = dates[-1]
        status = json.loads(read_url(f"{base}/{date}/dumpstatus.json"))
        files = status["jobs"]["articlesmultistreamdump"]["files"]
        host = f"{urlparse(self.prefix).scheme}://{urlparse(self.prefix).netloc}"
        return sorted(host + info["url"] if info["url"].startswith("/") else info["url"]
                      for name, info in files.items()
                      if name.endswith(".bz2") and not _INDEX.search(name))


_INDEX = re.compile(r"-multistream-index\d*\.txt")
_MULTISTREAM = re.compile(r"-multistream(\d*)\.xml(-p\d+p\d+)?\.bz2$")


def index_name(dump_name: str) -> str | None:
    """The index file of a multistream dump file (``…-multistream.xml.bz2`` ->
    ``…-multistream-index.txt.bz2``; ``…-multistream1.xml-p1p41242.bz2`` ->
    ``…-multistream-index1.txt-p1p41242.bz2``), or ``None`` for other files."""
    m = _MULTISTREAM.search(dump_name)
    if m is None:
        return None
    return (dump_name[:m.start()] + f"-multistream-index{m.group(1)}.txt{m.group(2) or ''}.bz2")


class WikipediaDownloader(DocumentDownloader):
    """Downloads dump files under their own names, and beside a multistream dump its index
    (optional: without it the dump is read as one stream)."""

    def _get_output_filename(self, url: str) -> str:
        return urlparse(url).path.rsplit("/", 1)[-1]

    def download(self, url: str) -> str:
        path = super().download(url)
        index = index_name(os.path.basename(path))
        if index and not os.path.exists(os.path.join(os.path.dirname(path), index)):
            try:
                super().download(url.rsplit("/", 1)[0] + "/" + index)
            except DownloadError as exc:
                log.info("no index for %s (%s): read as one stream", url, exc)
        return path


class WikipediaIterator(DocumentIterator):
    """Streams the ``<page>`` elements of a (bz2) XML dump: main-namespace articles as
    ``{title, id, url, language, source_id, raw_content}``; redirects and other namespaces are
    counted as skipped. Malformed XML is rejected with its line; pages before it are kept.

    A multistream dump with its index file beside it (``…-multistream-index….txt.bz2``) is
    read one bz2 stream at a time at the index's offsets: memory holds one stream, and a
    damaged stream is rejected with its offset while the other streams are read."""

    def __init__(self, language: str = "en") -> None:
        self.language = language

    def output_columns(self) -> list[str]:
        return ["title", "id", "url", "language", "source_id", "raw_content"]

    def iterate(self, file_path: str) -> Iterator[dict[str, Any]]:
        source_id = os.path.basename(file_path)
        index = index_name(source_id)
        index_path = os.path.join(os.path.dirname(file_path), index) if index else None
        if index_path and os.path.exists(index_path):
            yield from self._multistream(file_path, index_path, source_id)
            return
        opener = bz2.open if file_path.endswith(".bz2") else open
        with opener(file_path, "rb") as fh:
            parser = ET.iterparse(fh, events=("end",))
            try:
                for _event, elem in parser:
                    if _local(elem.tag) != "page":
                        continue
                    page = self._page(elem, source_id)
                    elem.clear()
                    if page is not None:
                        yield page
            except ET.ParseError as exc:
                self.reject("malformed XML in Wikipedia dump", error=exc,
                            line=exc.position[0], column=exc.position[1])
            except (EOFError, OSError) as exc:
                self.reject("truncated or corrupt bz2 stream", error=exc)

    def _multistream(self, file_path: str, index_path: str,
                     source_id: str) -> Iterator[dict[str, Any]]:
        """One bz2 stream at a time, at the offsets the index gives: memory holds one stream
        (about 100 pages), and a damaged stream costs its own pages only."""
        offsets = _stream_offsets(index_path)
        with open(file_path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            ends = [*offsets[1:], fh.tell()]
            for start, end in zip(offsets, ends, strict=True):
                fh.seek(start)
                try:
                    xml = bz2.decompress(fh.read(end - start))
                    first, last = xml.find(b"<page>"), xml.rfind(b"</page>")
                    if first < 0 or last < 0:
                        raise ValueError("no <page> element in the stream")
                    root = ET.fromstring(b"<pages>" + xml[first:last + 7] + b"</pages>")
                except (OSError, EOFError, ValueError, ET.ParseError) as exc:
                    self.reject("damaged bz2 stream in multistream dump", error=exc,
                                offset=start)
                    continue
                for elem in root:
                    page = self._page(elem, source_id)
                    if page is not None:
                        yield page

    def _page(self, elem: ET.Element, source_id: str) -> dict[str, Any] | None:
        fields = {_local(c.tag): c for c in elem}
        if fields.get("ns") is not None and (fields["ns"].text or "0").strip() != "0":
            self.skip("not an article (namespace)")
            return None
        if "redirect" in fields:
            self.skip("redirect")
            return None
        revision = fields.get("revision")
        text_el = None if revision is None else next(
            (c for c in revision if _local(c.tag) == "text"), None)
        title = (fields["title"].text or "") if "title" in fields else ""
        if text_el is None or not (text_el.text or "").strip():
            self.skip("empty page")
            return None
        return {"title": title, "id": (fields["id"].text or "").strip() if "id" in fields else "",
                "url": f"https://{self.language}.wikipedia.org/wiki/"
                       f"{quote(title.replace(' ', '_'))}",
                "language": self.language, "source_id": source_id,
                "raw_content": text_el.text}


def _stream_offsets(index_path: str) -> list[int]:
    """The distinct stream offsets of a multistream index (``offset:page_id:title`` lines),
    ascending."""
    offsets = set()
    with bz2.open(index_path, "rt", encoding="utf-8") as fh:
        for line in fh:
            head = line.split(":", 1)[0]
            if head.isdigit():
                offsets.add(int(head))
    return sorted(offsets)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


_DROP_LINK_PREFIXES = ("file:", "image:", "category:", "media:")
_DROP_TAGS = frozenset({"ref", "table", "gallery", "math", "references", "timeline"})


class WikipediaExtractor(DocumentExtractor):
    """Wikitext -> plain text with mwparserfromhell: templates, references, tables, files and
    category links are removed; links keep their text; headings stay as lines."""

    def __init__(self, language: str = "en") -> None:
        self.language = language

    def output_columns(self) -> list[str]:
        return ["title", "id", "url", "language", "source_id", "text"]

    def extract(self, record: dict[str, Any]) -> dict[str, Any] | None:
        import mwparserfromhell as mwp

        code = mwp.parse(record["raw_content"])
        drop = [t for t in code.filter_tags(recursive=True)
                if str(t.tag).strip().lower() in _DROP_TAGS]
        drop += [w for w in code.filter_wikilinks(recursive=True)
                 if str(w.title).strip().lower().startswith(_DROP_LINK_PREFIXES)]
        drop += code.filter_templates(recursive=False) + code.filter_comments(recursive=False)
        for node in drop:
            _remove(code, node)
        text = code.strip_code(normalize=True, collapse=True)
        text = re.sub(r"\n{3,}", "\n\n", "\n".join(line.strip() for line in text.splitlines()))
        text = text.strip()
        if not text:
            return None
        return {k: record[k] for k in ("title", "id", "url", "language", "source_id")} | {
            "text": text}


def _remove(code: Any, node: Any) -> None:
    try:
        code.remove(node)
    except ValueError:
        pass


@dataclass(init=False)
class WikipediaDownloadExtractStage(DocumentDownloadExtractStage):
    """Downloads a Wikipedia pages-articles dump and extracts its articles into DocumentBatches
    with ``title``, ``id``, ``url``, ``language``, ``source_id`` and ``text``.

    Parameters:
        language: the wiki's language code (``"en"``).
        download_dir: where dump files are downloaded (resumable; default
            ``./wikipedia_downloads``).
        dump_date: ``"YYYYMMDD"`` (default: the newest dump).
        wikidumps_index_prefix: where dumps are served (point it at a mirror).
        dump_paths: dump files you already have (directory, glob or list); no listing is read.
        url_limit / record_limit / add_filename_column: as for every download stage.
    """

    def __init__(self, language: str = "en", download_dir: str = "./wikipedia_downloads",
                 dump_date: str | None = None, wikidumps_index_prefix: str = DUMPS_PREFIX,
                 verbose: bool = False, url_limit: int | None = None,
                 record_limit: int | None = None, add_filename_column: bool | str = True,
                 dump_paths: str | list[str] | None = None,
                 name: str = "WikipediaDownloadExtractStage"):
        if dump_paths is None and not download_dir:
            raise ConfigError(f"{name}: download_dir must not be empty (or give dump_paths)")
        urls: URLGenerator = (_DumpFiles(dump_paths, [".bz2", ".xml"])
                              if dump_paths is not None else
                              WikipediaUrlGenerator(language, dump_date, wikidumps_index_prefix))
        self.language, self.download_dir = language, download_dir
        super().__init__(url_generator=urls,
                         downloader=WikipediaDownloader(download_dir or ".", verbose=verbose),
                         iterator=WikipediaIterator(language),
                         extractor=WikipediaExtractor(language), url_limit=url_limit,
                         record_limit=record_limit, add_filename_column=add_filename_column,
                         name=name)


class _DumpFiles(LocalFilesUrlGenerator):
    """Local dump files, leaving out multistream index files (read beside their dump)."""

    def generate_urls(self) -> list[str]:
        return [u for u in super().generate_urls() if not _INDEX.search(os.path.basename(u))]
