"""Common Crawl ingestion on real WARC.gz files (warcio) and a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import os

import pytest
from curator import Pipeline
from curator.errors import ConfigError
from curator_text.io import JsonlWriter
from curator_web import (
    CommonCrawlDownloadExtractStage,
    CommonCrawlHTMLExtractor,
    CommonCrawlWarcIterator,
    DocumentIterateExtractStage,
)
from curator_web.download.http import DownloadError, fetch

from tests.web.conftest import BOILER, MAIN_EN, MAIN_JA, MAIN_RU, write_cc_site

pytestmark = pytest.mark.filterwarnings("ignore")


def _extract(path: str, algorithm: str) -> dict[str, dict]:
    it, ex = CommonCrawlWarcIterator(), CommonCrawlHTMLExtractor(algorithm)
    out = {}
    for rec in it.iterate(path):
        doc = ex.extract(rec)
        if doc is not None:
            out[doc["url"]] = doc
    return out


@pytest.mark.parametrize("algorithm", ["justext", "resiliparse", "trafilatura"])
def test_extractor_keeps_main_content_and_drops_boilerplate(warc_files, algorithm) -> None:
    docs = _extract(warc_files["good"], algorithm)
    en = docs["http://en.example.com/harbour"]
    assert en["language"] == "ENGLISH"
    for paragraph in MAIN_EN[:2]:
        assert paragraph in en["text"]
    for boiler in BOILER:
        assert boiler not in en["text"], (algorithm, boiler)
    assert en["source_id"] == os.path.basename(warc_files["good"])
    assert len(en["warc_id"]) == 36 and "urn:uuid" not in en["warc_id"]


@pytest.mark.parametrize("algorithm", ["justext", "resiliparse", "trafilatura"])
def test_non_utf8_pages_are_decoded_and_their_language_identified(warc_files,
                                                                    algorithm) -> None:
    docs = _extract(warc_files["good"], algorithm)
    fr = docs["http://fr.example.com/port"]  # Latin-1, declared in the HTTP header
    ru = docs["http://ru.example.com/port"]  # CP1251, not declared: detected
    ja = docs["http://ja.example.com/port"]  # Shift-JIS, declared in a <meta> tag
    assert (fr["language"], ru["language"], ja["language"]) == ("FRENCH", "RUSSIAN", "JAPANESE")
    assert "pêcheurs rentrent" in fr["text"] and "à côté de l'église" in fr["text"]
    assert MAIN_RU[:60] in ru["text"]
    assert MAIN_JA[:30] in ja["text"]
    for doc in (fr, ru, ja):
        assert "cookies" not in doc["text"] and "Copyright" not in doc["text"]


def test_non_html_and_non_response_records_are_skipped_and_counted(warc_files) -> None:
    stage = DocumentIterateExtractStage(iterator=CommonCrawlWarcIterator(),
                                        extractor=CommonCrawlHTMLExtractor("resiliparse"))
    from curator import FileGroupTask

    out = stage.process(FileGroupTask(task_id="t", dataset_name="cc", data=[warc_files["good"]]))
    assert out.to_pyarrow().num_rows == 4
    assert set(out.to_pyarrow().column_names) >= {"url", "warc_id", "source_id", "language", "text",
                                          "file_name"}
    assert out.metadata["skipped_records"] == {
        "warcinfo record": 1, "request record": 1, "metadata record": 1, "revisit record": 1,
        "non-HTML response": 1}
    assert stage.drain_rejected() == []


def test_truncated_member_and_malformed_record_are_rejected_and_the_rest_is_read(
        warc_files) -> None:
    from curator import FileGroupTask

    stage = DocumentIterateExtractStage(iterator=CommonCrawlWarcIterator(),
                                        extractor=CommonCrawlHTMLExtractor("resiliparse"))
    out = stage.process(FileGroupTask(task_id="t", dataset_name="cc", data=[warc_files["bad"]]))
    assert out.to_pyarrow().column("url").to_pylist() == ["http://en.example.com/first",
                                                  "http://en.example.com/last"]
    rejected = stage.drain_rejected()
    assert [r.record["offset"] for r in rejected] == list(warc_files["offsets"])
    assert all(r.record["file"] == warc_files["bad"] for r in rejected)
    assert "gzip member" in rejected[0].reason and "WARC" in rejected[1].reason


def test_snapshot_range_over_http_with_resume(http_server, warc_files, tmp_path) -> None:
    base, root, server = http_server
    served = write_cc_site(root, warc_files)
    server.drop_once.add("/" + served[0])  # the first WARC download breaks off midway
    out_dir, rejected_dir = tmp_path / "out", tmp_path / "rejected"
    stage = CommonCrawlDownloadExtractStage(
        "2024-01", "2024-52", str(tmp_path / "dl"), html_extraction="trafilatura",
        data_prefix=base, index_url=f"{base}/collinfo.json")
    result = Pipeline("cc", stages=[stage, JsonlWriter(path=str(out_dir))]).run(
        rejected_dir=str(rejected_dir))
    assert result.ok
    # both in-range snapshots downloaded, the 2023 one not; the broken download was resumed
    assert sorted(os.listdir(tmp_path / "dl")) == sorted(p.replace("/", "-") for p in served)
    assert ("/" + served[0], None) in server.log
    assert any(p == "/" + served[0] and r and r.startswith("bytes=") for p, r in server.log)
    assert not any("2023-50/segments" in p for p, _ in server.log)
    with open(tmp_path / "dl" / served[0].replace("/", "-"), "rb") as fh:
        assert fh.read() == open(warc_files["good"], "rb").read()
    import json

    rows = [json.loads(line) for f in sorted(out_dir.rglob("*.jsonl")) for line in open(f)]
    urls = sorted(r["url"] for r in rows)
    assert urls == sorted(["http://en.example.com/harbour", "http://fr.example.com/port",
                           "http://ru.example.com/port", "http://ja.example.com/port",
                           "http://en.example.com/first", "http://en.example.com/last"])
    assert {r["language"] for r in rows} == {"ENGLISH", "FRENCH", "RUSSIAN", "JAPANESE"}
    assert result.rejected.total == 2  # the truncated member and the malformed record


def test_local_warc_paths_are_read_in_place(warc_files, tmp_path) -> None:
    stage = CommonCrawlDownloadExtractStage(warc_paths=f"file://{warc_files['dir']}",
                                            html_extraction="resiliparse")
    result = Pipeline("cc-local", stages=[stage]).run()
    assert sum(t.to_pyarrow().num_rows for t in result) == 6
    assert sorted({t.to_pyarrow().column("source_id")[0].as_py() for t in result}) == sorted(
        os.path.basename(warc_files[k]) for k in ("bad", "good"))


def test_configuration_errors_name_the_parameter(tmp_path) -> None:
    with pytest.raises(ConfigError, match="start_snapshot"):
        CommonCrawlDownloadExtractStage("2024", "2024-10", str(tmp_path))
    with pytest.raises(ConfigError, match="html_extraction"):
        CommonCrawlDownloadExtractStage(warc_paths=str(tmp_path), html_extraction="boilerpipe")
    with pytest.raises(ConfigError, match="warc_paths"):
        CommonCrawlDownloadExtractStage(download_dir=str(tmp_path))


def test_fetch_gives_up_with_the_partial_file_kept(http_server, tmp_path) -> None:
    base, root, server = http_server
    (root / "big.bin").write_bytes(os.urandom(10000))
    with pytest.raises(DownloadError, match="missing.bin"):
        fetch(f"{base}/missing.bin", str(tmp_path / "m.bin"), retries=1, backoff=0)
    assert not (tmp_path / "m.bin").exists()
    # a size check: a .part file longer than the server's file is refused, not placed, and
    # dropped so that the next attempt starts again
    (tmp_path / "b.bin.part").write_bytes(b"x" * 20000)
    with pytest.raises(DownloadError, match="size check"):
        fetch(f"{base}/big.bin", str(tmp_path / "b.bin"), retries=0, backoff=0)
    assert not (tmp_path / "b.bin").exists()
    fetch(f"{base}/big.bin", str(tmp_path / "b.bin"), retries=0)
    assert (tmp_path / "b.bin").read_bytes() == (root / "big.bin").read_bytes()


def test_a_download_that_keeps_failing_fails_its_task(http_server, tmp_path) -> None:
    from curator import FileGroupTask
    from curator_web import CommonCrawlWARCDownloader, DocumentDownloadStage

    base, _root, _server = http_server
    dl = tmp_path / "dl"
    stage = DocumentDownloadStage(downloader=CommonCrawlWARCDownloader(str(dl), retries=0))
    task = FileGroupTask(task_id="t", dataset_name="cc", data=[f"{base}/crawl-data/gone.warc.gz"])
    with pytest.raises(DownloadError, match="gone.warc.gz"):
        stage.process(task)  # raised: the executor keeps the task whole and the run is not ok
    assert not dl.exists() or os.listdir(dl) == []


def test_record_limit_caps_documents_per_file(warc_files) -> None:
    from curator import FileGroupTask

    stage = DocumentIterateExtractStage(iterator=CommonCrawlWarcIterator(),
                                        extractor=CommonCrawlHTMLExtractor("resiliparse"),
                                        record_limit=2, add_filename_column="warc_file")
    out = stage.process(FileGroupTask(task_id="t", dataset_name="cc",
                                      data=[warc_files["good"], warc_files["bad"]]))
    assert out.to_pyarrow().num_rows == 4
    assert set(out.to_pyarrow().column("warc_file").to_pylist()) == {
        os.path.basename(warc_files["good"]), os.path.basename(warc_files["bad"])}


def test_uncompressed_warc_is_streamed_with_offsets(warc_files, tmp_path) -> None:
    import gzip

    plain = tmp_path / "plain.warc"
    plain.write_bytes(gzip.decompress(open(warc_files["good"], "rb").read()))
    it = CommonCrawlWarcIterator()
    recs = list(it.iterate(str(plain)))
    assert [r["url"] for r in recs] == ["http://en.example.com/harbour",
                                        "http://fr.example.com/port", "http://ru.example.com/port",
                                        "http://ja.example.com/port"]
    offsets = [r["offset"] for r in recs]
    assert offsets == sorted(offsets) and offsets[0] > 0
    assert plain.read_bytes()[offsets[0]:].startswith(b"WARC/1")
    _rejected, skipped, _at = it._drain()
    assert sum(skipped.values()) == 5 and not _rejected


def test_a_truncated_member_is_rejected_whatever_its_bytes(tmp_path) -> None:
    """The cut member's bytes change with each archive written (a record id and date): for
    about one in fifteen, FastWARC still parses the cut record's header before it fails. That
    record is rejected with its member, never given out partial nor lost (150 archives: the old
    code missed it in some with near certainty)."""
    from curator import FileGroupTask

    from tests.web.conftest import bad_warc

    path = tmp_path / "CC-MAIN-bad-00001.warc.gz"
    for _ in range(150):
        data, off_cut, off_garbage = bad_warc()
        path.write_bytes(data)
        stage = DocumentIterateExtractStage(iterator=CommonCrawlWarcIterator(),
                                            extractor=CommonCrawlHTMLExtractor("resiliparse"))
        out = stage.process(FileGroupTask(task_id="t", dataset_name="cc", data=[str(path)]))
        assert out.to_pyarrow().column("url").to_pylist() == ["http://en.example.com/first",
                                                              "http://en.example.com/last"]
        rejected = stage.drain_rejected()
        assert [r.record["offset"] for r in rejected] == [off_cut, off_garbage]
        assert "gzip member" in rejected[0].reason
