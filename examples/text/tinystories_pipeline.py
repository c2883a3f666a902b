"""The TinyStories-style text curation pipeline (NeMo Curator's tutorial) on a generated corpus.

    uv run python examples/text/tinystories_pipeline.py [--docs 20000] [--workdir DIR]

Generates a small seeded corpus of short stories (some broken: mojibake, curly quotes, too short,
unfinished, a few malformed JSON lines) if it is missing, then runs
read → Modify(UnicodeReformatter, QuotationUnifier) → ScoreFilters → JsonlWriter on the local
executor and prints a summary. Malformed JSON lines go to ``{workdir}/rejected`` with their
reason; stories the filters remove are dropped and counted in the summary (give a
``ScoreFilter`` ``split=True`` to keep them in ``{workdir}/rejected`` too). Running it again
replaces its own output; after Ctrl-C the same command resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

HERE = os.path.dirname(os.path.abspath(__file__))

NAMES = ["Lily", "Tom", "Mia", "Ben", "Sue", "Max", "Anna", "Sam"]
THINGS = ["a red ball", "a little dog", "a shiny stone", "a big tree", "a blue kite", "a cat"]
PLACES = ["the park", "the garden", "the beach", "the forest", "school", "the river"]
FEELINGS = ["happy", "sad", "surprised", "scared", "excited", "tired"]


def _story(rng: random.Random) -> str:
    name, thing, place = rng.choice(NAMES), rng.choice(THINGS), rng.choice(PLACES)
    sentences = [f"Once upon a time, there was a kid named {name}.",
                 f"{name} liked to play in {place} every day."]
    for _ in range(rng.randint(3, 12)):
        sentences.append(rng.choice([
            f"One day, {name} found {thing} near {place}.",
            f"{name} felt very {rng.choice(FEELINGS)} and ran to tell mom.",
            f"“Look at this!” said {name} with a big smile.",
            f"The sun was warm and the birds sang in {place}.",
            f"{name} and a friend shared {thing} and laughed together.",
            "They learned that it is good to be kind and to share.",
        ]))
    kind = rng.random()
    if kind < 0.08:
        sentences = sentences[:2]  # too short
    text = " ".join(sentences)
    if 0.08 <= kind < 0.16:
        text = text.rsplit(" ", 3)[0]  # unfinished story
    elif 0.16 <= kind < 0.24:
        text = text.replace("'", "â€™").replace("“", "â€œ")  # mojibake for ftfy to fix
    elif 0.24 <= kind < 0.27:
        text = text + " " + " ".join(["buy now"] * 20) + "."  # repetitive spam
    return text


def generate(raw_dir: str, docs: int, files: int = 8, seed: int = 42) -> None:
    """Write ``docs`` stories into ``files`` JSONL files (a couple of malformed lines included)."""
    rng = random.Random(seed)
    os.makedirs(raw_dir, exist_ok=True)
    per = docs // files
    for f in range(files):
        with open(os.path.join(raw_dir, f"stories_{f:03d}.jsonl"), "w", encoding="utf-8") as fh:
            for i in range(per):
                fh.write(json.dumps({"id": f"{f}-{i}", "text": _story(rng)},
                                    ensure_ascii=False) + "\n")
                if i == per // 2 and f % 4 == 0:
                    fh.write('{"id": "broken", "text": "unterminated\n')


def build_pipeline(raw_dir: str, out_dir: str):
    from curator import Pipeline
    from curator_text import (
        IncompleteStoryFilter,
        JsonlReader,
        JsonlWriter,
        Modify,
        QuotationUnifier,
        RepeatingTopNGramsFilter,
        ScoreFilter,
        UnicodeReformatter,
        WordCountFilter,
    )

    return Pipeline(name="tinystories", description="Clean and filter short stories", stages=[
        JsonlReader(file_paths=raw_dir, fields=["id", "text"], files_per_partition=1),
        Modify([UnicodeReformatter(), QuotationUnifier()], text_field="text"),
        ScoreFilter(WordCountFilter(min_words=80), text_field="text", score_field="word_count"),
        ScoreFilter(IncompleteStoryFilter(), text_field="text"),
        ScoreFilter(RepeatingTopNGramsFilter(n=2, max_repeating_ngram_ratio=0.2),
                    text_field="text"),
        JsonlWriter(path=out_dir, mode="overwrite"),
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--workdir", default=os.path.join(HERE, "data"))
    args = parser.parse_args(argv)
    raw, out = os.path.join(args.workdir, "raw"), os.path.join(args.workdir, "curated")
    if not os.path.isdir(raw) or not os.listdir(raw):
        print(f"generating {args.docs} stories in {raw}")
        generate(raw, args.docs)
    start = time.perf_counter()
    result = build_pipeline(raw, out).run(rejected_dir=os.path.join(args.workdir, "rejected"),
                                          raise_on_failure=False)  # exit status 1 instead
    elapsed = time.perf_counter() - start
    kept = sum(t.metadata.get("num_rows", 0) for t in result)
    print(f"\nkept {kept} stories in {len(result)} files under {out} ({elapsed:.1f}s)")
    print("rejected: "
          + (", ".join(f"{n} by {s}" for s, n in result.rejected.counts.items()) or "none"))
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
