"""Common Crawl extraction on a Ray executor: the same documents and rejections as locally."""

from __future__ import annotations

import pytest
from curator import Pipeline
from curator_web import CommonCrawlDownloadExtractStage


@pytest.mark.ray
def test_common_crawl_on_ray_data(ray_cluster, warc_files) -> None:
    stage = CommonCrawlDownloadExtractStage(warc_paths=warc_files["dir"],
                                            html_extraction="resiliparse")
    result = Pipeline("cc-ray", stages=[stage]).run("ray_data", summary=False)
    assert result.ok
    urls = sorted(u for t in result for u in t.to_pyarrow().column("url").to_pylist())
    assert urls == sorted(["http://en.example.com/harbour", "http://fr.example.com/port",
                           "http://ru.example.com/port", "http://ja.example.com/port",
                           "http://en.example.com/first", "http://en.example.com/last"])
    assert result.rejected.counts["CommonCrawlDownloadExtractStage.extract"] == 2
