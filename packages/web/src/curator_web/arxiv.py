"""ArXiv: LaTeX source tarballs (``arXiv_src_*.tar``: one gzipped tar or gzipped .tex per
paper) -> papers -> text with comments, preamble and bibliography removed and simple macros
expanded."""

from __future__ import annotations

import gzip
import io
import os
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from curator.errors import ConfigError

from curator_web.download.base import (
    DocumentDownloader,
    DocumentDownloadExtractStage,
    DocumentExtractor,
    DocumentIterator,
    LocalFilesUrlGenerator,
    URLGenerator,
)

__all__ = ["ArxivUrlGenerator", "ArxivDownloader", "ArxivIterator", "ArxivExtractor",
           "ArxivDownloadExtractStage"]


class ArxivUrlGenerator(URLGenerator):
    """The ``arXiv_src_*.tar`` files under ``prefix`` (default arXiv's requester-pays S3 bucket;
    listing it needs ``s3fs`` and AWS credentials)."""

    def __init__(self, prefix: str = "s3://arxiv/src/") -> None:
        self.prefix = prefix

    def generate_urls(self) -> list[str]:
        from curator.io import get_fs

        try:
            fs, p = get_fs(self.prefix)
            names = fs.ls(p, detail=False, **({"requester_pays": True}
                                               if self.prefix.startswith("s3://") else {}))
        except ImportError as exc:
            raise ConfigError(f"ArxivUrlGenerator: listing {self.prefix} needs a filesystem "
                              f"driver ({exc}); pip install s3fs, or pass tar_paths") from exc
        proto = self.prefix.split("://", 1)[0] + "://" if "://" in self.prefix else ""
        return sorted(proto + n.removeprefix(proto) for n in names if n.endswith(".tar"))


class ArxivDownloader(DocumentDownloader):
    """Downloads source tarballs under their own names."""

    def _get_output_filename(self, url: str) -> str:
        return urlparse(url).path.rsplit("/", 1)[-1]


class ArxivIterator(DocumentIterator):
    """Yields one ``{id, source_id, content}`` per paper of a source tarball, ``content`` being
    the list of the paper's ``.tex`` files. A paper that cannot be unpacked is rejected with its
    member name; papers without LaTeX (PDF-only) are counted as skipped."""

    def output_columns(self) -> list[str]:
        return ["id", "source_id", "content"]

    def iterate(self, file_path: str) -> Iterator[dict[str, Any]]:
        source_id = os.path.basename(file_path)
        with tarfile.open(file_path, "r:*") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                base = os.path.basename(member.name)
                paper_id = _paper_id(re.sub(r"\.(tar\.gz|tgz|gz|pdf|tex)$", "", base))
                if base.endswith(".pdf"):
                    self.skip("PDF only, no LaTeX source")
                    continue
                try:
                    raw = tar.extractfile(member).read()
                    texs = _tex_files(raw)
                except Exception as exc:
                    self.reject("paper source could not be unpacked", error=exc,
                                member=member.name)
                    continue
                if not texs:
                    self.skip("no .tex file")
                    continue
                yield {"id": paper_id, "source_id": source_id, "content": texs}


_OLD_STYLE = re.compile(r"^([a-z][a-z\-]*(?:\.[A-Z]{2})?)(\d{7})$")


def _paper_id(stem: str) -> str:
    """The arXiv id of a member name: ``hep-th9901001`` (old-style ids lose their slash in
    the bulk tarballs) -> ``hep-th/9901001``; new-style ids are kept."""
    m = _OLD_STYLE.match(stem)
    return f"{m.group(1)}/{m.group(2)}" if m else stem


def _tex_files(raw: bytes) -> list[str]:
    """The .tex files of one paper: a gzipped tar of files, or one gzipped .tex file."""
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        inner = tarfile.open(fileobj=io.BytesIO(raw), mode="r:*")
    except tarfile.TarError:
        return [raw.decode("utf-8", "replace")] if b"\\" in raw else []
    with inner:
        return [inner.extractfile(m).read().decode("utf-8", "replace")
                for m in inner if m.isfile() and m.name.endswith(".tex")]


_COMMENT = re.compile(r"(?<!\\)%.*")
_DEFINITION = re.compile(r"\\(?:(?:(?:re)?new|provide)command\*?|def)(?![A-Za-z])\s*")
_NAME = re.compile(r"\{\s*\\([A-Za-z]+)\s*\}|\\([A-Za-z]+)")
_EXPANSION_ROUNDS = 8  # macros defined through other macros; bounded against \def\a{\a}
_SECTION = re.compile(r"\\(?:section|chapter)\*?\{")
_BIB = re.compile(r"\\begin\{thebibliography\}.*?\\end\{thebibliography\}|\\bibliography\{[^}]*\}",
                  re.S)


def _group_end(tex: str, start: int) -> int | None:
    """The index after the ``}`` closing the ``{`` at ``start`` (``\\{`` and ``\\}`` are
    characters, not braces), or ``None`` when it is not closed."""
    depth, i = 0, start
    while i < len(tex):
        c = tex[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _macros(tex: str) -> dict[str, str]:
    """The argument-free macros a paper defines: ``\\newcommand`` / ``\\renewcommand`` /
    ``\\providecommand`` (starred or not, the name braced or bare, spaces anywhere between
    the parts) and ``\\def``, their bodies brace-balanced. Macros taking arguments are left
    alone, as are definitions inside another definition's body."""
    macros: dict[str, str] = {}
    done = 0
    for m in _DEFINITION.finditer(tex):
        if m.start() < done:
            continue
        name = _NAME.match(tex, m.end())
        if name is None:
            continue
        pos = name.end()
        while pos < len(tex) and tex[pos] in " \t\n":
            pos += 1
        if pos >= len(tex) or tex[pos] != "{":  # [n] arguments, or \def's #1 parameters
            continue
        end = _group_end(tex, pos)
        if end is None:
            continue
        macros[name.group(1) or name.group(2)] = tex[pos + 1:end - 1].strip()
        done = end
    return macros


def _expand(body: str, macros: dict[str, str]) -> str:
    """``body`` with each macro replaced by its definition, again while a definition uses
    another macro (at most ``_EXPANSION_ROUNDS`` times)."""
    if not macros:
        return body
    use = re.compile(r"\\(" + "|".join(sorted(map(re.escape, macros), key=len, reverse=True))
                     + r")(?![A-Za-z])")
    for _ in range(_EXPANSION_ROUNDS):
        body, n = use.subn(lambda m: macros[m.group(1)], body)
        if not n:
            break
    return body


class ArxivExtractor(DocumentExtractor):
    """LaTeX -> text: drops comments, everything before the first ``\\section`` (preamble,
    abstract block), the bibliography and ``\\end{document}``; expands argument-free
    ``\\newcommand`` / ``\\renewcommand`` / ``\\providecommand`` / ``\\def`` macros (bodies
    with nested braces, macros defined through other macros). Papers with no section are dropped (counted)."""

    def output_columns(self) -> list[str]:
        return ["id", "source_id", "text"]

    def extract(self, record: dict[str, Any]) -> dict[str, Any] | None:
        parts = []
        for tex in record["content"]:
            tex = "\n".join(_COMMENT.sub("", line) for line in tex.splitlines())
            macros = _macros(tex)
            m = _SECTION.search(tex)
            if m is None:
                continue
            body = _BIB.sub("", tex[m.start():]).split("\\end{document}")[0]
            body = _expand(body, macros)
            parts.append(re.sub(r"\n{3,}", "\n\n", body).strip())
        if not parts:
            return None
        return {"id": record["id"], "source_id": record["source_id"], "text": "\n\n".join(parts)}


@dataclass(init=False)
class ArxivDownloadExtractStage(DocumentDownloadExtractStage):
    """Downloads arXiv LaTeX source tarballs and extracts each paper's text into DocumentBatches
    with ``id``, ``source_id`` and ``text``.

    Parameters:
        download_dir: where tarballs are downloaded (resumable; default ``./arxiv_downloads``).
        tar_paths: tarballs you already have or their URLs (directory, glob, list); default:
            list arXiv's S3 bucket (needs s3fs and AWS credentials).
        url_limit / record_limit / add_filename_column: as for every download stage.
    """

    def __init__(self, download_dir: str = "./arxiv_downloads", verbose: bool = False,
                 url_limit: int | None = None, record_limit: int | None = None,
                 add_filename_column: bool | str = True,
                 tar_paths: str | list[str] | None = None,
                 name: str = "ArxivDownloadExtractStage"):
        if tar_paths is None and not download_dir:
            raise ConfigError(f"{name}: download_dir must not be empty (or give tar_paths)")
        if tar_paths is None:
            urls: URLGenerator = ArxivUrlGenerator()
        elif isinstance(tar_paths, list) and any("://" in p and not p.startswith("file://")
                                                 for p in tar_paths):
            urls = _Listed(tar_paths)
        else:
            urls = LocalFilesUrlGenerator(tar_paths, [".tar"])
        self.download_dir = download_dir
        super().__init__(url_generator=urls,
                         downloader=ArxivDownloader(download_dir or ".", verbose=verbose),
                         iterator=ArxivIterator(), extractor=ArxivExtractor(),
                         url_limit=url_limit, record_limit=record_limit,
                         add_filename_column=add_filename_column, name=name)


class _Listed(URLGenerator):
    def __init__(self, urls: list[str]) -> None:
        self.urls = list(urls)

    def generate_urls(self) -> list[str]:
        return list(self.urls)
