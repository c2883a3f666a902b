"""TinyStories: the split's text file -> stories split on ``<|endoftext|>``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from curator.errors import ConfigError

from curator_web.download.base import (
    DocumentDownloader,
    DocumentDownloadExtractStage,
    DocumentIterator,
    URLGenerator,
)

__all__ = ["TinyStoriesUrlGenerator", "TinyStoriesDownloader", "TinyStoriesIterator",
           "TinyStoriesDownloadExtractStage", "TINYSTORIES_URLS"]

TINYSTORIES_URLS = {
    "train": "https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main/"
             "TinyStories-train.txt",
    "valid": "https://huggingface.co/datasets/roneneldan/TinyStories/resolve/main/"
             "TinyStories-valid.txt",
}
"""Where the TinyStories text files are published, per split."""

_EOT = "<|endoftext|>"


class TinyStoriesUrlGenerator(URLGenerator):
    def __init__(self, url: str) -> None:
        self.url = url

    def generate_urls(self) -> list[str]:
        return [self.url]


class TinyStoriesDownloader(DocumentDownloader):
    """Downloads the split's file under its own name into ``raw_dir``."""

    def _get_output_filename(self, url: str) -> str:
        return urlparse(url).path.rsplit("/", 1)[-1] or "tinystories.txt"


class TinyStoriesIterator(DocumentIterator):
    """Streams the stories of a TinyStories file (``<|endoftext|>``-separated) as
    ``{id, text}``; ids are ``"<file stem>-<n>"``. Empty stories are counted as skipped."""

    def output_columns(self) -> list[str]:
        return ["id", "text"]

    def iterate(self, file_path: str) -> Iterator[dict[str, Any]]:
        stem = os.path.basename(file_path).rsplit(".", 1)[0]
        n = 0
        buf = ""
        with open(file_path, encoding="utf-8", errors="replace") as fh:
            while True:
                chunk = fh.read(1 << 20)
                buf += chunk
                *stories, buf = buf.split(_EOT) if chunk else (*buf.split(_EOT), "")
                for story in stories:
                    story = story.strip()
                    if not story:
                        self.skip("empty story")
                        continue
                    yield {"id": f"{stem}-{n}", "text": story}
                    n += 1
                if not chunk:
                    return


@dataclass(init=False)
class TinyStoriesDownloadExtractStage(DocumentDownloadExtractStage):
    """Downloads the TinyStories file of ``split`` into ``raw_dir`` (resumable, atomic) and
    yields its stories as DocumentBatches with ``id`` and ``text``.

    Parameters:
        raw_dir: where the file is downloaded (kept; a complete file is not fetched again).
        split: ``"train"`` or ``"valid"``.
        url: where to download from (default: the published location of the split).
        record_limit: at most this many stories.
        add_filename_column: add the file name (``True``: column ``file_name``; default off).
    """

    def __init__(self, raw_dir: str, split: str = "train", url: str | None = None,
                 record_limit: int | None = None, add_filename_column: bool | str = False,
                 verbose: bool = False, name: str = "TinyStoriesDownloadExtractStage"):
        if split not in TINYSTORIES_URLS:
            raise ConfigError(f"{name}: split={split!r} must be one of {sorted(TINYSTORIES_URLS)}")
        if not raw_dir:
            raise ConfigError(f"{name}: raw_dir is required (where the file is downloaded)")
        self.raw_dir, self.split = raw_dir, split
        self.url = url or TINYSTORIES_URLS[split]
        super().__init__(url_generator=TinyStoriesUrlGenerator(self.url),
                         downloader=TinyStoriesDownloader(raw_dir, verbose=verbose),
                         iterator=TinyStoriesIterator(), extractor=None,
                         record_limit=record_limit, add_filename_column=add_filename_column,
                         name=name)
