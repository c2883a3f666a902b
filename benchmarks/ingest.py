"""WARC -> text -> JSONL throughput of Curator beside an honest floor, in the same run.

    uv run python benchmarks/ingest.py [--html DIR] [--warcs 4] [--pages 400] [--workers 2]
                                       [--repeats 3] [--extractors resiliparse]

The floor is the plain loop anyone would write, run in ``--workers`` processes over the same
files: FastWARC iteration, HTTP body decoding where the headers ask for it (chunked, gzip,
deflate, brotli), charset detection, ``extract_plain_text(main_content=True)`` (or the other
library called with its own defaults), language id on the extracted text, one JSONL file per
WARC. Curator is ``CommonCrawlDownloadExtractStage`` + ``JsonlWriter`` on the local executor
with ``--workers`` workers for the extract stage. Floor and Curator alternate ``--repeats``
times; the median ratio is reported (the machine may be shared: only the ratio means much).

``--html DIR``: build the WARC files from real pages, e.g. the ``html/*.html.gz`` of
github.com/scrapinghub/article-extraction-benchmark (clone it outside the repository);
without it the pages are generated like examples/text/common_crawl.py. A third of the pages
are stored gzip-encoded and a tenth chunked, as crawlers other than Common Crawl store them,
beside request and metadata records as Common Crawl writes them.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import statistics
import sys
import tempfile
import time
from multiprocessing import get_context

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "text"))
from _rss import PeakRSS


def build_warcs(warc_dir: str, warcs: int, pages: int, html_dir: str | None) -> None:
    """``warcs`` WARC.gz files of ``pages`` HTML responses each (plus request / metadata)."""
    if html_dir is None:
        from common_crawl import generate

        generate(warc_dir, warcs, pages)
        return
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    names = sorted(n for n in os.listdir(html_dir) if n.endswith((".html", ".html.gz")))
    bodies = []
    for n in names:
        opener = gzip.open if n.endswith(".gz") else open
        with opener(os.path.join(html_dir, n), "rb") as fh:
            bodies.append(fh.read())
    os.makedirs(warc_dir, exist_ok=True)
    k = 0
    for w in range(warcs):
        with open(os.path.join(warc_dir, f"REAL-{w:05d}.warc.gz"), "wb") as fh:
            writer = WARCWriter(fh, gzip=True)
            for i in range(pages):
                body, url = bodies[k % len(bodies)], f"http://example.com/{w}/{i}"
                k += 1
                headers = [("Content-Type", "text/html")]
                if i % 3 == 1:
                    body, headers = gzip.compress(body), headers + [("Content-Encoding", "gzip")]
                elif i % 10 == 2:
                    body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
                    headers += [("Transfer-Encoding", "chunked")]
                req = StatusAndHeaders(f"GET /{w}/{i} HTTP/1.1", [("Host", "example.com")],
                                       is_http_request=True)
                writer.write_record(writer.create_warc_record(url, "request",
                                                              payload=io.BytesIO(b""),
                                                              http_headers=req))
                http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
                writer.write_record(writer.create_warc_record(
                    url, "response", payload=io.BytesIO(body), http_headers=http))
                writer.write_record(writer.create_warc_record(
                    url, "metadata", payload=io.BytesIO(b"fetchTimeMs: 12\r\n"),
                    warc_content_type="application/warc-fields"))


def _floor_file(args: tuple[str, str, str]) -> tuple[int, int]:
    """The plain loop over one WARC file: (HTML responses, documents written)."""
    import zlib

    from fastwarc.warc import ArchiveIterator, WarcRecordType
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding
    from resiliparse.parse.http import iterate_http_chunks
    from resiliparse.parse.lang import detect_fast

    path, algorithm, out_dir = args
    extract = _library(algorithm)
    pages = docs = 0
    out_path = os.path.join(out_dir, os.path.basename(path) + ".jsonl")
    with open(path, "rb") as fh, open(out_path, "w", encoding="utf-8") as out:
        for rec in ArchiveIterator(fh, record_types=WarcRecordType.response, parse_http=True):
            if not (rec.http_content_type or "").startswith("text/html"):
                continue
            pages += 1
            body = rec.reader.read()
            if "chunked" in (rec.http_headers.get("Transfer-Encoding") or ""):
                body = b"".join(iterate_http_chunks(io.BytesIO(body)))
            coding = rec.http_headers.get("Content-Encoding")
            if coding in ("gzip", "x-gzip", "deflate"):
                body = zlib.decompress(body, 47)
            elif coding == "br":
                import brotli

                body = brotli.decompress(body)
            html = bytes_to_str(body, rec.http_charset or detect_encoding(body))
            text = extract(html)
            if not text:
                continue
            lang, _ = detect_fast(text[:20000])
            out.write(json.dumps({"url": rec.headers.get("WARC-Target-URI"),
                                  "warc_id": rec.record_id, "language": lang, "text": text})
                      + "\n")
            docs += 1
    return pages, docs


def _library(algorithm: str):
    """The wrapped library called with its own defaults."""
    if algorithm == "resiliparse":
        from resiliparse.extract.html2text import extract_plain_text

        return lambda html: extract_plain_text(html, main_content=True)
    if algorithm == "trafilatura":
        import trafilatura

        return trafilatura.extract
    import justext

    stop = justext.get_stoplist("English")
    return lambda html: "\n\n".join(p.text for p in justext.justext(html, stop)
                                    if not p.is_boilerplate)


def floor(files: list[str], algorithm: str, workers: int, out_dir: str) -> dict:
    os.makedirs(out_dir, exist_ok=True)
    with PeakRSS() as rss:
        start = time.perf_counter()
        with get_context("spawn").Pool(workers) as pool:
            out = pool.map(_floor_file, [(f, algorithm, out_dir) for f in files], chunksize=1)
        wall = time.perf_counter() - start
    pages = sum(p for p, _ in out)
    return {"pages": pages, "docs": sum(d for _, d in out), "wall_s": round(wall, 2),
            "pages_per_s": round(pages / wall, 1), "peak_rss_mb": round(rss.peak / 2**20)}


def pipeline(warc_dir: str, algorithm: str, workers: int, pages: int, out_dir: str) -> dict:
    from curator import LocalExecutor, Pipeline
    from curator_text.io import JsonlWriter
    from curator_web import CommonCrawlDownloadExtractStage

    stage = CommonCrawlDownloadExtractStage(warc_paths=warc_dir, html_extraction=algorithm)
    stages = stage.decompose()
    stages[-1] = stages[-1].with_(num_workers=workers)
    with PeakRSS() as rss:
        start = time.perf_counter()
        result = Pipeline("ingest", stages=[*stages, JsonlWriter(path=out_dir)]).run(
            LocalExecutor(), summary=False)
        wall = time.perf_counter() - start
    docs = sum(sum(1 for _ in open(os.path.join(out_dir, f), encoding="utf-8"))
               for f in os.listdir(out_dir) if f.endswith(".jsonl"))
    del result
    return {"pages": pages, "docs": docs, "wall_s": round(wall, 2),
            "pages_per_s": round(pages / wall, 1), "peak_rss_mb": round(rss.peak / 2**20)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--html", help="a directory of real pages (.html or .html.gz)")
    parser.add_argument("--warcs", type=int, default=4)
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--extractors", default="resiliparse")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        warc_dir = os.path.join(tmp, "warc")
        build_warcs(warc_dir, args.warcs, args.pages, args.html)
        files = sorted(os.path.join(warc_dir, f) for f in os.listdir(warc_dir))
        for algorithm in args.extractors.split(","):
            runs = []
            for r in range(args.repeats):  # alternate, so load changes hit both alike
                f = floor(files, algorithm, args.workers, os.path.join(tmp, f"floor-{r}"))
                p = pipeline(warc_dir, algorithm, args.workers, f["pages"],
                             os.path.join(tmp, f"out-{algorithm}-{r}"))
                runs.append({"floor": f, "pipeline": p,
                             "ratio": round(p["pages_per_s"] / f["pages_per_s"], 3)})
                print(f"{algorithm:12s} run {r}: curator {p['pages_per_s']:7.1f} pages/s "
                      f"({p['docs']} docs, {p['peak_rss_mb']} MB) | floor "
                      f"{f['pages_per_s']:7.1f} pages/s ({f['docs']} docs, "
                      f"{f['peak_rss_mb']} MB) | ratio {runs[-1]['ratio']}", flush=True)
            median = statistics.median(r["ratio"] for r in runs)
            rows.append({"extractor": algorithm, "runs": runs, "median_ratio": median})
            print(f"{algorithm:12s} median ratio curator / floor: {median}", flush=True)
    print(json.dumps({"warcs": args.warcs, "pages_per_warc": args.pages, "html": args.html,
                      "workers": args.workers, "results": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
