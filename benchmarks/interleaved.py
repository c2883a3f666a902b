"""Interleaved pipeline throughput and memory against a plain-loop floor.

    uv run python benchmarks/interleaved.py [--sizes 100MB 1GB] [--reps 3] [--workdir DIR]

On generated MINT-1T shards (``curator_interleaved.testing.make_mint_shards``, images padded to
~100 KB, ~50 MB shards) it runs, alternately in the same session and each in its own process:

* **plain**: a loop over the shards: ``tarfile`` iteration, ``json.loads`` of each document,
  ``PIL.Image.open(...).size`` of each image (aspect ratio in [0.5, 3]), images per word per
  document (<= 1), and one ``pyarrow.parquet.write_table`` per shard of the kept rows (image
  bytes included) - the least any code doing this work must do;
* **curator**: ``InterleavedWebdatasetReader`` -> ``InterleavedAspectRatioFilterStage`` ->
  ``InterleavedImageToTextRatioFilterStage`` -> ``InterleavedParquetWriterStage`` on the local
  executor (lazy image bytes: read by byte range when the filter needs them).

Reports the median seconds of ``--reps`` runs, MB/s, the ratio curator/plain throughput (target
>= 0.7) and the peak RSS of each run's whole process tree; with two sizes, the peak-memory
ratio of the largest to the smallest (target <= 1.2). Both write the same rows (checked).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

os.environ.setdefault("CURATOR_SUMMARY", "0")

MIN_AR, MAX_AR, MAX_IMG_PER_WORD = 0.5, 3.0, 1.0


def _size(text: str) -> int:
    units = {"KB": 10**3, "MB": 10**6, "GB": 10**9}
    for u, f in units.items():
        if text.upper().endswith(u):
            return int(float(text[:-2]) * f)
    return int(text)


def generate(path: str, size: int) -> int:
    """Shards totalling about ``size`` bytes under ``path`` (reused when present)."""
    from curator_interleaved.testing import make_mint_shards

    marker = os.path.join(path, ".done")
    if not os.path.exists(marker):
        shutil.rmtree(path, ignore_errors=True)
        per_doc = 120_000  # ~1.2 images of 100 KB + text per document on average
        docs = max(size // per_doc, 1)
        per_shard = 200
        make_mint_shards(path, n_shards=max(docs // per_shard, 1), docs_per_shard=per_shard,
                         image_bytes=100_000, seed=1)
        open(marker, "w").close()
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)
               if f.endswith(".tar"))


def run_plain(src: str, out: str) -> int:
    import io
    import tarfile

    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image

    os.makedirs(out, exist_ok=True)
    rows_out = 0
    for name in sorted(f for f in os.listdir(src) if f.endswith(".tar")):
        members: dict[str, bytes] = {}
        docs: list[tuple[str, dict]] = []
        with tarfile.open(os.path.join(src, name)) as tf:
            for info in tf:
                data = tf.extractfile(info).read()
                if info.name.endswith(".json"):
                    docs.append((info.name[:-5], json.loads(data)))
                else:
                    members[info.name] = data
        rows: dict[str, list] = {k: [] for k in ("sample_id", "position", "modality",
                                                 "text_content", "binary_content", "url")}
        for sid, doc in docs:
            kept: list[tuple[int, str, str | None, bytes | None]] = []
            words = 0
            for i, text in enumerate(doc["texts"]):
                if text is not None:
                    kept.append((i, "text", text, None))
                    words += len(text.split())
            for i, token in enumerate(doc["images"]):
                if token is None:
                    continue
                data = members[token]
                w, h = Image.open(io.BytesIO(data)).size
                if MIN_AR <= w / h <= MAX_AR:
                    kept.append((i, "image", None, data))
            n_img = sum(1 for k in kept if k[1] == "image")
            if n_img / max(words, 1) > MAX_IMG_PER_WORD or not kept:
                continue
            kept.sort()
            for col, v in zip(("sample_id", "position", "modality", "text_content",
                               "binary_content", "url"), (sid, -1, "metadata", None, None,
                                                          doc.get("url")), strict=True):
                rows[col].append(v)
            for pos, (_, modality, text, data) in enumerate(kept):
                for col, v in zip(("sample_id", "position", "modality", "text_content",
                                   "binary_content", "url"), (sid, pos, modality, text, data,
                                                              None), strict=True):
                    rows[col].append(v)
        table = pa.table({**rows, "binary_content": pa.array(rows["binary_content"],
                                                             pa.large_binary())})
        pq.write_table(table, os.path.join(out, name.replace(".tar", ".parquet")))
        rows_out += table.num_rows
    return rows_out


def run_curator(src: str, out: str) -> int:
    import pyarrow.parquet as pq
    from curator import LocalExecutor, Pipeline
    from curator_interleaved import (
        InterleavedAspectRatioFilterStage,
        InterleavedImageToTextRatioFilterStage,
        InterleavedParquetWriterStage,
        InterleavedWebdatasetReader,
    )

    Pipeline("bench", stages=[
        InterleavedWebdatasetReader(file_paths=src, fields=("url",)),
        InterleavedAspectRatioFilterStage(min_aspect_ratio=MIN_AR, max_aspect_ratio=MAX_AR),
        InterleavedImageToTextRatioFilterStage(max_ratio=MAX_IMG_PER_WORD),
        InterleavedParquetWriterStage(path=out)]).run(LocalExecutor(), summary=False)
    return sum(pq.ParquetFile(os.path.join(out, f)).metadata.num_rows
               for f in os.listdir(out) if f.endswith(".parquet"))


def measure(kind: str, src: str, out: str) -> tuple[float, float, int]:
    """``(seconds, peak RSS MB of the process tree, rows written)`` of one run in a child."""
    sys.path.insert(0, os.path.dirname(__file__))
    from _rss import PeakRSS

    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    with PeakRSS(include_self=False) as rss:
        proc = subprocess.run([sys.executable, __file__, "--run", kind, "--src", src,
                               "--out", out], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    return seconds, rss.peak / 2**20, int(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=["100MB", "1GB"])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--workdir", default="/tmp/curator-bench-interleaved")
    parser.add_argument("--run", choices=["plain", "curator"])
    parser.add_argument("--src")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.run:
        n = (run_plain if args.run == "plain" else run_curator)(args.src, args.out)
        print(n)
        return
    peaks: dict[str, dict[str, float]] = {}
    for label in args.sizes:
        src = os.path.join(args.workdir, f"shards-{label}")
        total = generate(src, _size(label))
        times: dict[str, list[float]] = {"plain": [], "curator": []}
        peak: dict[str, float] = {"plain": 0.0, "curator": 0.0}
        rows: dict[str, int] = {}
        for _ in range(args.reps):
            for kind in ("plain", "curator"):
                s, mb, n = measure(kind, src, os.path.join(args.workdir, f"out-{kind}"))
                times[kind].append(s)
                peak[kind] = max(peak[kind], mb)
                rows[kind] = n
        if rows["plain"] != rows["curator"]:  # the docstring's "checked": a run that lost or
            # duplicated rows is not a throughput figure
            raise SystemExit(f"{label}: rows written differ: plain={rows['plain']} "
                             f"curator={rows['curator']}")
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{label}: {total / 1e6:.0f} MB of shards; rows written plain={rows['plain']} "
              f"curator={rows['curator']}")
        for kind in ("plain", "curator"):
            print(f"  {kind:8s} median {med[kind]:6.2f} s  {total / 1e6 / med[kind]:6.1f} MB/s  "
                  f"peak RSS {peak[kind]:6.0f} MB  runs {[round(t, 2) for t in times[kind]]}")
        print(f"  curator / plain throughput: {med['plain'] / med['curator']:.2f}x "
              f"(target >= 0.7)")
        peaks[label] = peak
    if len(args.sizes) > 1:
        lo, hi = args.sizes[0], args.sizes[-1]
        print(f"peak memory {hi} / {lo}: curator {peaks[hi]['curator'] / peaks[lo]['curator']:.2f}x"
              f" (target <= 1.2), plain {peaks[hi]['plain'] / peaks[lo]['plain']:.2f}x")


if __name__ == "__main__":
    main()
