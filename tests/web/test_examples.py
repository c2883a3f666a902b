"""The curator-web examples run end to end on generated data (a local HTTP server for
TinyStories)."""

from __future__ import annotations

import glob
import importlib.util
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", "text",
                                                                     f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows(pattern: str) -> list[dict]:
    return [json.loads(line) for f in sorted(glob.glob(pattern)) for line in open(f)]


def test_common_crawl_example(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    mod = _load("common_crawl")
    assert mod.main(["--warcs", "2", "--pages", "30", "--workdir", str(tmp_path)]) == 0
    extracted = _rows(str(tmp_path / "extracted" / "*.jsonl"))
    deduped = _rows(str(tmp_path / "dedup" / "deduplicated" / "*.jsonl"))
    assert extracted and {r["language"] for r in extracted} == {"ENGLISH"}
    assert all("cookies" not in r["text"] and "Copyright" not in r["text"] for r in extracted)
    texts = [r["text"] for r in deduped]
    assert len(texts) == len(set(texts)) < len(extracted)  # the repeated page was removed


def test_yaml_spec_builds() -> None:
    spec_mod = pytest.importorskip("curator.spec")
    spec = spec_mod.load_spec(os.path.join(ROOT, "examples", "text", "common_crawl.yaml"))
    names = [s.name for s in spec_mod.pipeline_from_spec(spec).build()]
    assert names[:3] == ["CommonCrawlDownloadExtractStage.urls",
                         "CommonCrawlDownloadExtractStage.download",
                         "CommonCrawlDownloadExtractStage.extract"]
    assert names[-1] == "JsonlWriter"


def test_tinystories_guide_example_from_a_local_url(http_server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    base, root, server = http_server
    long_story = ("Once upon a time there was a little cat called Tom who lived in a small "
                  "house by the river with his mother and his two sisters. " * 6).strip()
    stories = [long_story + f" Story {i} ends here." for i in range(20)]
    stories += ["Too short.", long_story + " and then"]  # filtered: word count, incomplete
    (root / "TinyStories-valid.txt").write_text("<|endoftext|>\n".join(stories))
    mod = _load("tinystories_guide")
    from curator_web.tinystories import TINYSTORIES_URLS

    monkeypatch.setitem(TINYSTORIES_URLS, "valid", TINYSTORIES_URLS["valid"])
    assert mod.main(["--split", "valid", "--workdir", str(tmp_path),
                     "--url", f"{base}/TinyStories-valid.txt"]) == 0
    rows = _rows(str(tmp_path / "curated" / "*.jsonl"))
    assert sorted(r["text"] for r in rows) == sorted(stories[:20])
    assert server.log == [("/TinyStories-valid.txt", None)]
