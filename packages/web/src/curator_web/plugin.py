"""The curator-web plugin: registers its stages, downloaders, iterators and extractors through
Curator's hooks (iterators and URL generators go with the extractor and downloader kinds of
the table of kinds). Imports here are cheap; parsers load inside functions."""

from __future__ import annotations

from curator.plugins.hookspecs import Register, hookimpl
from curator.plugins.migration import MigrationRules

__all__ = ["curator_migrate_rules", "curator_register_readers", "curator_register_downloaders",
           "curator_register_extractors"]


@hookimpl
def curator_register_readers(register: Register) -> None:
    import curator_web as W

    for cls in (W.CommonCrawlDownloadExtractStage, W.WikipediaDownloadExtractStage,
                W.ArxivDownloadExtractStage, W.TinyStoriesDownloadExtractStage,
                W.DocumentDownloadExtractStage):
        register(cls, modality="text")


@hookimpl
def curator_register_downloaders(register: Register) -> None:
    import curator_web as W

    for cls in (W.CommonCrawlWARCDownloader, W.WikipediaDownloader, W.ArxivDownloader,
                W.MainCommonCrawlUrlGenerator, W.WikipediaUrlGenerator, W.ArxivUrlGenerator):
        register(cls, modality="text")


@hookimpl
def curator_register_extractors(register: Register) -> None:
    import curator_web as W

    for cls in (W.CommonCrawlWarcIterator, W.WikipediaIterator, W.ArxivIterator,
                W.CommonCrawlHTMLExtractor, W.WikipediaExtractor, W.ArxivExtractor,
                W.JusTextExtractor, W.ResiliparseExtractor, W.TrafilaturaExtractor):
        register(cls, modality="text")


@hookimpl
def curator_migrate_rules() -> MigrationRules:
    from curator_web.migration import MIGRATION_RULES

    return MIGRATION_RULES
