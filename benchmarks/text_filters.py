"""Single-core speed of each text filter alone: ``score_batch`` + ``keep_batch`` on the realistic
corpus (benchmarks/corpus.py), ``--batch`` documents per call as a pipeline task would, one filter
at a time, Arrow limited to one thread. Prints docs/s by wall clock and by the process's CPU time
(the CPU figure is the steadier one on a loaded machine), the CPU time of each filter's first
call in the process (imports, compiled kernels loaded from numba's cache) and the load average.

    uv run python benchmarks/text_filters.py [--docs 10000] [--filters WordCountFilter,…]
        [--batch 1000] [--repeat 3]

To compare with another version of the filters, run the same command with that version's
``curator_text`` first on ``PYTHONPATH`` (e.g. ``git worktree`` of an older commit).
"""

from __future__ import annotations

import argparse
import glob
import os
import time

from corpus import generate

__all__ = ["PER_FILTER", "per_filter"]

PER_FILTER = ("WordCountFilter", "NonAlphaNumericFilter", "UrlsFilter", "RepeatingTopNGramsFilter",
              "BoilerPlateStringFilter", "SymbolsToWordsFilter", "LongWordFilter",
              "MeanWordLengthFilter", "CommonEnglishWordsFilter", "WordsWithoutAlphabetsFilter",
              "RepeatingDuplicateNGramsFilter", "RepeatedLinesFilter", "RepeatedParagraphsFilter",
              "RepeatedLinesByCharFilter", "RepeatedParagraphsByCharFilter")
"""The five filters of the pipeline benchmark first, then the other word/line filters."""


def _load(raw_dir: str, docs: int):
    import pyarrow as pa
    import pyarrow.json as pj

    tables = []
    for path in sorted(glob.glob(os.path.join(raw_dir, "*.jsonl"))):
        tables.append(pj.read_json(path).select(["text"]))
        if sum(t.num_rows for t in tables) >= docs:
            break
    return pa.concat_tables(tables)["text"].combine_chunks()[:docs]


def per_filter(raw_dir: str, docs: int, batch: int = 1000, names: tuple[str, ...] = PER_FILTER,
               repeat: int = 3) -> dict[str, float]:
    """Single-core docs/s (best of ``repeat``, by CPU time) of each filter in ``names`` on the
    first ``docs`` documents of the corpus in ``raw_dir``, ``batch`` documents per call."""
    import curator_text
    import pyarrow as pa

    pa.set_cpu_count(1)  # one core
    texts = _load(raw_dir, docs)
    chunks = [texts.slice(i, batch) for i in range(0, len(texts), batch)]
    print(f"one core, {len(texts)} documents, {batch} per batch, best of {repeat}; "
          f"curator_text from {os.path.dirname(curator_text.__file__)}")
    print(f"  {'filter':32s} {'docs/s (CPU)':>13s} {'docs/s (wall)':>14s} {'first call':>11s}"
          "  load average")
    out = {}
    for name in names:
        f = getattr(curator_text, name)()
        first = time.process_time()
        f.score_batch(chunks[0][:1])
        first = time.process_time() - first
        best_cpu = best_wall = float("inf")
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            for c in chunks:
                f.keep_batch(pa.array(f.score_batch(c)))
            best_cpu = min(best_cpu, time.process_time() - cpu)
            best_wall = min(best_wall, time.perf_counter() - wall)
        out[name] = len(texts) / best_cpu
        print(f"  {name:32s} {out[name]:>13,.0f} {len(texts) / best_wall:>14,.0f} "
              f"{first * 1000:>9,.0f}ms  "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--corpus-docs", type=int, default=20_000,
                    help="size of the generated corpus the documents are taken from")
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--filters", default=",".join(PER_FILTER))
    ap.add_argument("--workdir", default=os.path.join("benchmarks", "results", "text"))
    args = ap.parse_args()
    raw = os.path.join(args.workdir, f"raw_realistic_{args.corpus_docs}_{args.files}")
    if not os.path.isdir(raw):
        print(f"generating {args.corpus_docs} docs in {raw} …", flush=True)
        generate(raw, args.corpus_docs, args.files)
    per_filter(raw, min(args.docs, args.corpus_docs), args.batch,
               tuple(x for x in args.filters.split(",") if x), args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
