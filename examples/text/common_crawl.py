"""Common Crawl ingestion on locally generated WARC files:

    WARC -> HTML extraction (+ language id) -> keep English -> heuristic filters -> JSONL
         -> exact dedup (ExactDeduplicationWorkflow, removal) -> deduplicated JSONL

    uv run python examples/text/common_crawl.py [--warcs 4] [--pages 200] [--extractor justext]

Generates ``--warcs`` WARC.gz files (warcio) of pages with navigation, cookie banners and
footers in English, French and Russian (CP1251), with exact duplicates across files and a few
non-HTML records, then runs the pipeline on the local executor. The language comes from the
extractor's own identification (Resiliparse's detector), so no model is needed. The YAML twin,
``common_crawl.yaml``, runs the first pipeline with ``curator run``.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import time

HERE = os.path.dirname(os.path.abspath(__file__))

EN = ["The harbour of the town has been the centre of its life for more than three hundred years, "
      "and the people who live there still talk about the ships that came and went.",
      "In the early morning the fishermen bring in their boats, and by the time the sun is high "
      "the market is full of people who want to buy what was caught during the night.",
      "Most of the houses near the water were built after the great fire, when the council "
      "decided that every new building should be made of stone so that it would last.",
      "The school at the top of the hill was opened in the spring, and the children who go "
      "there can see the whole bay from the windows of their classrooms.",
      "When the storms come in the winter the boats stay in the port for days, and the families "
      "wait in their kitchens for the wind to fall and for the news from the coast."]
FR = "Le vieux port de la ville est depuis longtemps le centre de la vie des habitants, et ceux qui y vivent parlent encore des bateaux qui arrivaient chaque été."
RU = "Старый порт этого города уже много лет является центром его жизни, и люди, которые живут здесь, до сих пор рассказывают о кораблях, которые приходили и уходили."
# jusText keeps long paragraphs (> 200 characters): two sentences each
EN = [f"{a} {b}" for a, b in zip(EN, EN[1:] + EN[:1], strict=True)]
FR, RU = f"{FR} {FR}", f"{RU} {RU}"
BOILER = ('<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/shop">Shop</a></nav>'
          '<div class="cookies"><p>We use cookies to improve your experience. Accept all cookies'
          '</p></div>', '<footer><p>Copyright 2024 Example Corp. All rights reserved.</p>'
          '<a href="/privacy">Privacy policy</a></footer>')


def _page(paragraphs: list[str], title: str) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<html><head><title>{title}</title></head><body>{BOILER[0]}<main><h1>{title}</h1>"
            f"{body}</main>{BOILER[1]}</body></html>")


def generate(warc_dir: str, warcs: int, pages: int, seed: int = 7) -> None:
    """Write ``warcs`` WARC.gz files of ``pages`` pages each (with duplicates and non-HTML)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    rng = random.Random(seed)
    os.makedirs(warc_dir, exist_ok=True)
    for w in range(warcs):
        with open(os.path.join(warc_dir, f"CC-MAIN-example-{w:05d}.warc.gz"), "wb") as fh:
            writer = WARCWriter(fh, gzip=True)
            for i in range(pages):
                r = rng.random()
                if r < 0.1:
                    html, ctype = _page([FR], "Le port").encode("latin-1"), \
                        "text/html; charset=ISO-8859-1"
                elif r < 0.2:
                    html, ctype = _page([RU], "Порт").encode("cp1251"), "text/html"
                elif r < 0.3:  # an exact duplicate of a page in every file
                    html, ctype = _page(EN, "The harbour").encode(), "text/html"
                elif r < 0.35:
                    html, ctype = b"%PDF-1.4", "application/pdf"
                else:
                    paras = rng.sample(EN, k=rng.randint(1, 5))
                    html, ctype = _page(paras + [f"This is page {w}-{i} of the example."],
                                        f"Page {w}-{i}").encode(), "text/html"
                http = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
                writer.write_record(writer.create_warc_record(
                    f"http://example.com/{w}/{i}", "response", payload=io.BytesIO(html),
                    http_headers=http))


def build_pipeline(warc_dir: str, out_dir: str, extractor: str = "justext"):
    from curator import Pipeline
    from curator_text import (
        Filter,
        JsonlWriter,
        NonAlphaNumericFilter,
        RepeatingTopNGramsFilter,
        ScoreFilter,
        WordCountFilter,
    )
    from curator_web import CommonCrawlDownloadExtractStage

    return Pipeline(name="common_crawl", description="WARC -> text -> filters", stages=[
        CommonCrawlDownloadExtractStage(warc_paths=warc_dir, html_extraction=extractor),
        Filter(filter_fn=lambda lang: lang == "ENGLISH", filter_field="language"),
        ScoreFilter(WordCountFilter(min_words=20), text_field="text", score_field="word_count"),
        ScoreFilter(NonAlphaNumericFilter(), text_field="text"),
        ScoreFilter(RepeatingTopNGramsFilter(n=2, max_repeating_ngram_ratio=0.2),
                    text_field="text"),
        JsonlWriter(path=out_dir),
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warcs", type=int, default=4)
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--extractor", default="justext",
                        choices=["justext", "resiliparse", "trafilatura"])
    parser.add_argument("--workdir", default=os.path.join(HERE, "data", "common_crawl"))
    args = parser.parse_args(argv)
    from curator.dedup import ExactDeduplicationWorkflow

    warc_dir = os.path.join(args.workdir, "warc")
    extracted = os.path.join(args.workdir, "extracted")
    if not os.path.isdir(warc_dir) or not os.listdir(warc_dir):
        generate(warc_dir, args.warcs, args.pages)
    start = time.perf_counter()
    result = build_pipeline(warc_dir, extracted, args.extractor).run(
        rejected_dir=os.path.join(args.workdir, "rejected"), raise_on_failure=False)
    kept = sum(t.metadata.get("num_rows", 0) for t in result)
    dedup = ExactDeduplicationWorkflow(extracted, os.path.join(args.workdir, "dedup"),
                                       id_field="warc_id", perform_removal=True).run()
    groups = sum(dedup.group_sizes.values())
    print(f"\nextracted and kept {kept} English pages; exact dedup found {dedup.num_duplicates} "
          f"duplicates in {groups} group{'s' * (groups != 1)} and removed {dedup.num_removed or 0} "
          f"({time.perf_counter() - start:.1f}s); deduplicated JSONL in {dedup.output_path}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
