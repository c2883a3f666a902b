"""Web ingestion checked against data nobody here wrote: extraction quality on a public
benchmark with gold article text, and record accounting on real web archives.

    uv run python benchmarks/web_quality.py --data DIR [--extractors justext,resiliparse,...]
    uv run python benchmarks/web_quality.py --archives DIR

``--data DIR``: the scrapinghub/article-extraction-benchmark checkout (its ``html/*.html.gz``
and ``ground-truth.json``; 181 real pages with gold article text). Fetch it outside the
repository, e.g. ``git clone https://github.com/scrapinghub/article-extraction-benchmark
/tmp/aeb``; nothing fetched is committed. For each extractor it prints the bag-of-tokens F1
(per-page precision and recall over ``\\w+`` tokens, averaged over pages as the benchmark's
``evaluate.py`` does) of Curator's extractor with its defaults, of the wrapped library called
directly with its own defaults, and of Curator with ``nemo_compat=True``.

``--archives DIR``: every WARC/ARC file under DIR is read twice: warcio (a reference reader)
counts its HTML responses; Curator's iterator + extractor must account for each of them exactly
once: extracted, skipped with a reason or rejected with a reason and offset.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable

_TOKEN = re.compile(r"\w+", re.UNICODE)


def token_prf(true: str, pred: str) -> tuple[float, float] | None:
    """(precision, recall) of ``pred``'s bag of tokens against ``true``'s."""
    t, p = Counter(_TOKEN.findall(true or "")), Counter(_TOKEN.findall(pred or ""))
    tp = sum((t & p).values())
    fp, fn = sum(p.values()) - tp, sum(t.values()) - tp
    if fp == fn == 0:
        return 1.0, 1.0
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return precision, recall


def f1(truth: dict[str, str], pred: dict[str, str]) -> float:
    """The benchmark's F1: mean precision and mean recall over pages, then their F1."""
    scores = [token_prf(truth[k], pred.get(k, "")) for k in truth]
    precision = statistics.mean(s[0] for s in scores)
    recall = statistics.mean(s[1] for s in scores)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def load(data: str) -> tuple[dict[str, str], dict[str, bytes]]:
    truth_path, html_dir = os.path.join(data, "ground-truth.json"), os.path.join(data, "html")
    if not (os.path.isfile(truth_path) and os.path.isdir(html_dir)):
        raise SystemExit(f"--data {data}: expected ground-truth.json and html/ (clone "
                         f"github.com/scrapinghub/article-extraction-benchmark there)")
    with open(truth_path, encoding="utf-8") as fh:
        truth = {k: v.get("articleBody", "") for k, v in json.load(fh).items()}
    pages = {}
    for key in truth:
        with gzip.open(os.path.join(html_dir, f"{key}.html.gz"), "rb") as fh:
            pages[key] = fh.read()
    return truth, pages


def _str(content: bytes) -> str:
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding

    return bytes_to_str(content, detect_encoding(content))


def raw_extractors() -> dict[str, Callable[[bytes], str]]:
    """Each wrapped library called directly with its own defaults."""
    import justext
    import trafilatura
    from resiliparse.extract.html2text import extract_plain_text

    english = justext.get_stoplist("English")  # the benchmark's pages are English
    return {  # jusText and Trafilatura decode bytes themselves; Resiliparse takes a str
        "justext": lambda b: "\n".join(p.text for p in justext.justext(b, english)
                                       if not p.is_boilerplate),
        "resiliparse": lambda b: extract_plain_text(_str(b), main_content=True),
        "trafilatura": lambda b: trafilatura.extract(b) or "",
    }


def curator_extractor(name: str, nemo_compat: bool) -> Callable[[bytes], str]:
    from curator_web import CommonCrawlHTMLExtractor

    ex = CommonCrawlHTMLExtractor(name, {"nemo_compat": nemo_compat})
    ex.setup()

    def run(content: bytes) -> str:
        doc = ex.extract({"url": "", "warc_id": "", "source_id": "", "content": content})
        return doc["text"] if doc else ""

    return run


def quality(data: str, extractors: list[str]) -> list[dict]:
    truth, pages = load(data)
    raw = raw_extractors()
    rows = []
    for name in extractors:
        row = {"extractor": name}
        for label, fn in (("curator", curator_extractor(name, False)), ("raw", raw[name]),
                          ("curator_nemo_compat", curator_extractor(name, True))):
            row[label] = round(f1(truth, {k: fn(v) for k, v in pages.items()}), 4)
        row["ok"] = row["curator"] >= row["raw"] - 0.01
        rows.append(row)
        print(f"{name:12s} curator {row['curator']:.3f} | raw library {row['raw']:.3f} | "
              f"nemo_compat {row['curator_nemo_compat']:.3f} | "
              f"{'ok' if row['ok'] else 'BELOW raw - 0.01'}", flush=True)
    return rows


def _warcio_html_responses(path: str) -> int:
    """HTML responses as warcio (an independent reader) sees them."""
    from warcio.archiveiterator import ArchiveIterator

    n = 0
    with open(path, "rb") as fh:
        try:
            for rec in ArchiveIterator(fh, arc2warc=True):
                if rec.rec_type != "response" or rec.http_headers is None:
                    continue
                ctype = (rec.http_headers.get_header("Content-Type") or "").lower()
                if ctype.startswith(("text/html", "application/xhtml+xml")):
                    n += 1
        except Exception as exc:
            print(f"  warcio stopped in {os.path.basename(path)}: {exc}", file=sys.stderr)
    return n


def accounting(archives: str, algorithm: str = "resiliparse") -> list[dict]:
    from curator import FileGroupTask
    from curator_web import (
        CommonCrawlHTMLExtractor,
        CommonCrawlWarcIterator,
        DocumentIterateExtractStage,
        LocalFilesUrlGenerator,
    )
    from curator_web.common_crawl import WARC_EXTENSIONS

    rows = []
    for path in LocalFilesUrlGenerator(archives, WARC_EXTENSIONS).generate_urls():
        stage = DocumentIterateExtractStage(iterator=CommonCrawlWarcIterator(),
                                            extractor=CommonCrawlHTMLExtractor(algorithm))
        out = stage.process(FileGroupTask(task_id="t", dataset_name="a", data=[path]))
        rejected = stage.drain_rejected()
        html_rejected = [r for r in rejected if r.record.get("url")]
        row = {"file": os.path.basename(path), "warcio_html": _warcio_html_responses(path),
               "extracted": out.to_pyarrow().num_rows, "skipped_html": len(
                   out.metadata["skipped_at"]), "rejected": len(rejected),
               "rejected_html": len(html_rejected),
               "skipped": out.metadata["skipped_records"],
               "rejected_reasons": dict(Counter(r.reason for r in rejected))}
        row["accounted_html"] = row["extracted"] + row["skipped_html"] + row["rejected_html"]
        rows.append(row)
        print(f"{row['file']:45s} warcio HTML {row['warcio_html']:4d} | accounted "
              f"{row['accounted_html']:4d} (extracted {row['extracted']}, skipped "
              f"{row['skipped_html']}, rejected {row['rejected_html']}) | other rejects "
              f"{row['rejected'] - row['rejected_html']} {row['rejected_reasons']}", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="article-extraction-benchmark checkout")
    parser.add_argument("--archives", help="a directory of real WARC / ARC files")
    parser.add_argument("--extractors", default="justext,resiliparse,trafilatura")
    args = parser.parse_args(argv)
    if not (args.data or args.archives):
        parser.error("give --data DIR and/or --archives DIR")
    result: dict = {}
    if args.data:
        result["quality"] = quality(args.data, args.extractors.split(","))
    if args.archives:
        result["accounting"] = accounting(args.archives)
    print(json.dumps(result))
    ok = all(r["ok"] for r in result.get("quality", []))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
