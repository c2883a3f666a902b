"""WARC -> HTML extraction throughput and peak memory, per extractor, beside the floor.

    uv run python benchmarks/ingest.py [--warcs 8] [--pages 1000] [--workers 2]
                                       [--extractors justext,resiliparse,trafilatura]

For each extractor: the floor is a bare loop (CommonCrawlWarcIterator + the extractor's
``extract``) over the same WARC files in ``--workers`` processes; the pipeline is
``CommonCrawlDownloadExtractStage`` on the local executor. Reports pages/s (pages read from the
WARC files, HTML responses) and peak RSS of the process tree, and the warm one-core rate of the
bare loop (no process start-up) to tell extraction cost from start-up cost. Both timed runs
include worker start-up, so use enough pages (the defaults) for it to amortise. Run with
``--warcs`` 10x larger to check that memory stays flat. The WARC files are generated like examples/text/common_crawl.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from multiprocessing import get_context

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "text"))
from _rss import PeakRSS  # noqa: E402
from common_crawl import generate  # noqa: E402


def _bare(args: tuple[str, str]) -> tuple[int, int]:
    from curator_web import CommonCrawlHTMLExtractor, CommonCrawlWarcIterator

    path, algorithm = args
    it, ex = CommonCrawlWarcIterator(), CommonCrawlHTMLExtractor(algorithm)
    ex.setup()
    pages = docs = 0
    for rec in it.iterate(path):
        pages += 1
        docs += ex.extract(rec) is not None
    return pages, docs


def steady(files: list[str], algorithm: str) -> float:
    """Pages/s of iterate + extract in this process after a warm-up (no start-up costs)."""
    from curator_web import CommonCrawlHTMLExtractor, CommonCrawlWarcIterator

    it, ex = CommonCrawlWarcIterator(), CommonCrawlHTMLExtractor(algorithm)
    ex.setup()
    recs = list(it.iterate(files[0]))
    for rec in recs[:10]:
        ex.extract(rec)
    start = time.perf_counter()
    for rec in it.iterate(files[0]):
        ex.extract(rec)
    return round(len(recs) / (time.perf_counter() - start), 1)


def floor(files: list[str], algorithm: str, workers: int) -> dict:
    with PeakRSS() as rss:
        start = time.perf_counter()
        with get_context("spawn").Pool(workers) as pool:
            out = pool.map(_bare, [(f, algorithm) for f in files], chunksize=1)
        wall = time.perf_counter() - start
    pages = sum(p for p, _ in out)
    return {"pages": pages, "docs": sum(d for _, d in out), "wall_s": round(wall, 2),
            "pages_per_s": round(pages / wall, 1), "peak_rss_mb": round(rss.peak / 2**20)}


def pipeline(warc_dir: str, algorithm: str, workers: int, pages: int) -> dict:
    from curator import LocalExecutor, Pipeline
    from curator_web import CommonCrawlDownloadExtractStage

    stage = CommonCrawlDownloadExtractStage(warc_paths=warc_dir, html_extraction=algorithm)
    stages = stage.decompose()
    stages[-1] = stages[-1].with_(num_workers=workers)
    with PeakRSS() as rss:
        start = time.perf_counter()
        result = Pipeline("ingest", stages=stages).run(LocalExecutor(), summary=False)
        wall = time.perf_counter() - start
    docs = sum(t.data.num_rows for t in result)
    return {"pages": pages, "docs": docs, "wall_s": round(wall, 2),
            "pages_per_s": round(pages / wall, 1), "peak_rss_mb": round(rss.peak / 2**20)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warcs", type=int, default=8)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--extractors", default="justext,resiliparse,trafilatura")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        warc_dir = os.path.join(tmp, "warc")
        generate(warc_dir, args.warcs, args.pages)
        files = sorted(os.path.join(warc_dir, f) for f in os.listdir(warc_dir))
        html_pages = sum(_bare((f, "resiliparse"))[0] for f in files)
        rows = []
        for algorithm in args.extractors.split(","):
            f = floor(files, algorithm, args.workers)
            p = pipeline(warc_dir, algorithm, args.workers, html_pages)
            one = steady(files, algorithm)
            rows.append({"extractor": algorithm, "floor": f, "pipeline": p,
                         "ratio": round(p["pages_per_s"] / f["pages_per_s"], 2),
                         "one_core_warm_pages_per_s": one})
            print(f"{algorithm:12s} pipeline {p['pages_per_s']:8.1f} pages/s "
                  f"{p['peak_rss_mb']:5d} MB | floor {f['pages_per_s']:8.1f} pages/s "
                  f"{f['peak_rss_mb']:5d} MB | ratio {rows[-1]['ratio']} | one core, warm "
                  f"{one:8.1f} pages/s", flush=True)
        print(json.dumps({"warcs": args.warcs, "pages_per_warc": args.pages,
                          "workers": args.workers, "results": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
