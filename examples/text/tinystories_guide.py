"""The migration guide's TinyStories pipeline, as written there (only the imports changed):

    uv run python examples/text/tinystories_guide.py --split valid [--workdir DIR] [--url URL]

Downloads the TinyStories text file of the split from its published location (resumable; a
complete file in ``{workdir}/raw`` is not fetched again), splits it into stories, cleans and
filters them and writes JSONL to ``{workdir}/curated``. ``--url`` points the download elsewhere
(a mirror, or a local server in the tests); ``--executor xenna`` runs on the Xenna executor as
the guide does (it needs Ray), the default is the local executor.
"""

from __future__ import annotations

import argparse
import os

from curator import Pipeline
from curator_text import (
    IncompleteStoryFilter,
    JsonlWriter,
    Modify,
    QuotationUnifier,
    ScoreFilter,
    UnicodeReformatter,
    WordCountFilter,
)
from curator_web import TinyStoriesDownloadExtractStage
from curator_web.tinystories import TINYSTORIES_URLS

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="valid", choices=["train", "valid"])
    parser.add_argument("--workdir", default=os.path.join(HERE, "data", "tinystories_guide"))
    parser.add_argument("--url", default=None, help="download from here instead")
    parser.add_argument("--executor", default="local", choices=["local", "xenna"])
    args = parser.parse_args(argv)
    if args.url:
        TINYSTORIES_URLS[args.split] = args.url
    raw_dir = os.path.join(args.workdir, "raw")
    curated_dir = os.path.join(args.workdir, "curated")

    # New: Define stages (the guide's code)
    stages = [
        TinyStoriesDownloadExtractStage(raw_dir, split=args.split),
        Modify(modifier_fn=QuotationUnifier()),
        Modify(modifier_fn=UnicodeReformatter()),
        ScoreFilter(filter_obj=WordCountFilter(min_words=80)),
        ScoreFilter(filter_obj=IncompleteStoryFilter()),
        JsonlWriter(curated_dir),
    ]

    # New: Create pipeline with stages
    pipeline = Pipeline(
        name="tinystories",
        description="Download and curation pipeline for the TinyStories dataset.",
        stages=stages,
    )

    if args.executor == "xenna":
        from curator import XennaExecutor

        executor = XennaExecutor()
    else:
        from curator import LocalExecutor

        executor = LocalExecutor()

    # Execute pipeline
    result = pipeline.run(executor, raise_on_failure=False)  # exit status 1 instead
    kept = sum(t.metadata.get("num_rows", 0) for t in result)
    print(f"kept {kept} stories under {curated_dir}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
