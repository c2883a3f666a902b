"""Wikipedia: a pages-articles XML dump (bz2) -> articles -> plain text via mwparserfromhell."""

from __future__ import annotations

import bz2
import json
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
from curator_web.download.http import read_url

__all__ = ["WikipediaUrlGenerator", "WikipediaDownloader", "WikipediaIterator",
           "WikipediaExtractor", "WikipediaDownloadExtractStage"]

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
                      for name, info in files.items() if name.endswith(".bz2"))


class WikipediaDownloader(DocumentDownloader):
    """Downloads dump files under their own names."""

    def _get_output_filename(self, url: str) -> str:
        return urlparse(url).path.rsplit("/", 1)[-1]


class WikipediaIterator(DocumentIterator):
    """Streams the ``<page>`` elements of a (bz2) XML dump: main-namespace articles as
    ``{title, id, url, language, source_id, raw_content}``; redirects and other namespaces are
    counted as skipped. Malformed XML is rejected with its line; pages before it are kept."""

    def __init__(self, language: str = "en") -> None:
        self.language = language

    def output_columns(self) -> list[str]:
        return ["title", "id", "url", "language", "source_id", "raw_content"]

    def iterate(self, file_path: str) -> Iterator[dict[str, Any]]:
        import os  # noqa: PLC0415

        opener = bz2.open if file_path.endswith(".bz2") else open
        source_id = os.path.basename(file_path)
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
        import mwparserfromhell as mwp  # noqa: PLC0415

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
        urls: URLGenerator = (LocalFilesUrlGenerator(dump_paths, [".bz2", ".xml"])
                              if dump_paths is not None else
                              WikipediaUrlGenerator(language, dump_date, wikidumps_index_prefix))
        self.language, self.download_dir = language, download_dir
        super().__init__(url_generator=urls,
                         downloader=WikipediaDownloader(download_dir or ".", verbose=verbose),
                         iterator=WikipediaIterator(language),
                         extractor=WikipediaExtractor(language), url_limit=url_limit,
                         record_limit=record_limit, add_filename_column=add_filename_column,
                         name=name)
