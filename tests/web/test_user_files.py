"""Issue 31: a writer whose folder is, contains or is inside a downloader's download directory
is refused before anything is downloaded or touched."""

from __future__ import annotations

import pytest
from curator import Pipeline
from curator.output_dir import OutputDirError
from curator_text import JsonlWriter
from curator_web.tinystories import TinyStoriesDownloadExtractStage


@pytest.mark.parametrize("where", ["equal", "inside", "parent"])
def test_an_output_overlapping_the_download_directory_is_refused(tmp_path, where):
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "earlier-download.txt").write_text("kept")
    out = {"equal": raw, "inside": raw / "out", "parent": tmp_path}[where]
    stage = TinyStoriesDownloadExtractStage(str(raw), url="http://127.0.0.1:9/stories.txt")
    with pytest.raises(OutputDirError, match=r"the input path .*download_dir"):
        Pipeline("p", stages=[stage, JsonlWriter(path=str(out), mode="overwrite")]).run(
            summary=False)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["earlier-download.txt", "raw"]


def test_an_output_inside_the_users_warc_folder_is_refused(tmp_path):
    from curator_web.common_crawl import CommonCrawlDownloadExtractStage

    warcs = tmp_path / "warcs"
    warcs.mkdir()
    (warcs / "mine.warc.gz").write_bytes(b"")
    stage = CommonCrawlDownloadExtractStage(warc_paths=str(warcs))
    with pytest.raises(OutputDirError, match=r"the input path .*file_paths"):
        Pipeline("p", stages=[stage, JsonlWriter(path=str(warcs / "out"))]).run(summary=False)
    assert sorted(p.name for p in warcs.iterdir()) == ["mine.warc.gz"]
