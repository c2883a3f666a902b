"""curator-web: web-scale ingestion for Curator — the download -> iterate -> extract chain with
Common Crawl (WARC), Wikipedia, ArXiv and TinyStories stages and three HTML extractors."""

from curator_web.arxiv import (
    ArxivDownloader,
    ArxivDownloadExtractStage,
    ArxivExtractor,
    ArxivIterator,
    ArxivUrlGenerator,
)
from curator_web.common_crawl import (
    CommonCrawlDownloadExtractStage,
    CommonCrawlHTMLExtractor,
    CommonCrawlWARCDownloader,
    CommonCrawlWarcIterator,
    MainCommonCrawlUrlGenerator,
)
from curator_web.download.base import (
    DocumentDownloader,
    DocumentDownloadExtractStage,
    DocumentDownloadStage,
    DocumentExtractor,
    DocumentIterateExtractStage,
    DocumentIterator,
    DownloadError,
    LocalFilesUrlGenerator,
    URLGenerationStage,
    URLGenerator,
)
from curator_web.html import (
    HTML_EXTRACTORS,
    HTMLExtractorAlgorithm,
    JusTextExtractor,
    ResiliparseExtractor,
    TrafilaturaExtractor,
    decode_html,
    get_stop_list_dict,
    lang_detect,
)
from curator_web.tinystories import TinyStoriesDownloadExtractStage
from curator_web.wikipedia import (
    WikipediaDownloader,
    WikipediaDownloadExtractStage,
    WikipediaExtractor,
    WikipediaIterator,
    WikipediaUrlGenerator,
)

__all__ = [
    "URLGenerator", "DocumentDownloader", "DocumentIterator", "DocumentExtractor",
    "URLGenerationStage", "DocumentDownloadStage", "DocumentIterateExtractStage",
    "DocumentDownloadExtractStage", "LocalFilesUrlGenerator", "DownloadError",
    "HTMLExtractorAlgorithm", "JusTextExtractor", "ResiliparseExtractor", "TrafilaturaExtractor",
    "HTML_EXTRACTORS", "decode_html", "lang_detect", "get_stop_list_dict",
    "MainCommonCrawlUrlGenerator", "CommonCrawlWARCDownloader", "CommonCrawlWarcIterator",
    "CommonCrawlHTMLExtractor", "CommonCrawlDownloadExtractStage",
    "WikipediaUrlGenerator", "WikipediaDownloader", "WikipediaIterator", "WikipediaExtractor",
    "WikipediaDownloadExtractStage",
    "ArxivUrlGenerator", "ArxivDownloader", "ArxivIterator", "ArxivExtractor",
    "ArxivDownloadExtractStage",
    "TinyStoriesDownloadExtractStage",
]
