"""Realistic benchmark corpus shared by ``benchmarks/text.py`` and ``benchmarks/dedup.py``, and
the I/O floor they compare against.

Text is real English: runs of 8-30 consecutive words of the Python standard library's
docstrings and help topics and of the licence texts on this machine
(``/usr/share/common-licenses``, ``LICENSE*`` files of installed packages), de-duplicated by
paragraph. Lengths are log-normal (median ``MEDIAN_WORDS``). Every
document has a ground-truth ``kind``:

    normal, short, boilerplate, url, repetitive  (unique documents)
    exact                                        (byte copy of an earlier normal document)
    near                                         (copy with 1-10 words replaced, ~1 in 100)

Copies are taken from documents of *earlier files*, so duplicates cross partitions. The labels
(id, kind, root id of the duplicate group) go to ``labels.tsv`` beside the data files, which a
reader of ``*.jsonl`` / ``*.parquet`` does not pick up.

    uv run python benchmarks/corpus.py DIR [--docs 20000] [--files 8] [--format jsonl]
"""

from __future__ import annotations

import argparse
import ast
import glob
import hashlib
import os
import sys
import sysconfig
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np

__all__ = ["KINDS", "MEDIAN_WORDS", "Labels", "english_words", "generate", "io_floor",
           "read_labels"]

MEDIAN_WORDS = 350
#: kind -> share of the corpus (exact and near copies need an earlier file; in the first file
#: they are written as normal documents)
KINDS = {"normal": 0.65, "short": 0.08, "boilerplate": 0.06, "url": 0.06, "repetitive": 0.05,
         "exact": 0.05, "near": 0.05}
BOILERPLATE = (
    "By using this site you agree to our privacy policy and terms of use.",
    "This website uses cookies to improve your experience. Read our cookie policy.",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.",
    "All rights reserved. See our terms of use and privacy policy for details.",
)
Labels = tuple  # (ids: np.ndarray[int64], kinds: np.ndarray[str], roots: np.ndarray[int64])


def _license_texts() -> Iterator[str]:
    yield from sorted(glob.glob("/usr/share/common-licenses/*"))
    seen: set[str] = set()
    for site in sorted({sysconfig.get_paths()["purelib"], *[p for p in sys.path
                                                           if p.endswith("site-packages")]}):
        for path in sorted(glob.glob(os.path.join(site, "*.dist-info", "LICEN[CS]E*"))
                           + glob.glob(os.path.join(site, "*.dist-info", "licenses", "*"))):
            if path not in seen:
                seen.add(path)
                yield path


def _docstrings() -> Iterator[str]:
    stdlib = sysconfig.get_paths()["stdlib"]
    try:  # the language reference and library topics behind help()
        from pydoc_data.topics import topics

        yield from (topics[k] for k in sorted(topics))
    except ImportError:
        pass
    for path in sorted(glob.glob(os.path.join(stdlib, "*.py"))
                       + glob.glob(os.path.join(stdlib, "*", "*.py"))
                       + glob.glob(os.path.join(stdlib, "*", "*", "*.py"))):
        rel = path[len(stdlib):]
        if "/test" in rel or "/idlelib/" in rel or "-packages/" in rel:
            continue
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    yield doc


def english_words(max_words: int = 3_000_000) -> np.ndarray:
    """The source text as one array of whitespace-separated words (paragraphs seen twice are
    kept once; doctest and indented code lines are dropped): about 0.5M words with
    Python 3.11."""
    seen: set[bytes] = set()
    words: list[str] = []

    def add(text: str) -> None:
        for para in text.split("\n\n"):
            lines = [ln.strip() for ln in para.splitlines()
                     if ln.strip() and not ln.startswith((" ", "\t", ">>>", "..."))]
            if not lines:
                continue
            key = hashlib.blake2b(" ".join(lines).encode(), digest_size=12).digest()
            if key not in seen:
                seen.add(key)
                words.extend(" ".join(lines).split())

    for path in _license_texts():
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                add(fh.read())
        except OSError:
            continue
    for doc in _docstrings():
        add(doc)
        if len(words) >= max_words:
            break
    if len(words) < 10_000:
        raise RuntimeError("corpus: found too little English text (stdlib docstrings and "
                           "licence files); is the Python standard library source installed?")
    return np.array(words[:max_words], dtype=object)


class _Maker:
    """Makes documents of each kind from spans of ``words``."""

    def __init__(self, words: np.ndarray, rng: np.random.Generator) -> None:
        self.words, self.rng = words, rng

    def span(self, n: int, run: tuple[int, int] = (8, 30)) -> str:
        """``n`` words made of runs of ``run`` consecutive source words from random places (so
        two unique documents never share most of their text by chance)."""
        parts, left = [], n
        while left > 0:
            k = min(left, int(self.rng.integers(run[0], run[1] + 1)))
            start = int(self.rng.integers(0, len(self.words) - k))
            parts.append(" ".join(self.words[start:start + k]))
            left -= k
        return " ".join(parts)

    def body(self, n: int) -> str:
        paras, left = [], n
        while left > 0:
            k = min(left, int(self.rng.integers(40, 160)))
            paras.append(self.span(k))
            left -= k
        return "\n\n".join(paras)

    def length(self) -> int:
        return int(np.clip(self.rng.lognormal(np.log(MEDIAN_WORDS), 0.7), 60, 20_000))

    def make(self, kind: str) -> str:
        rng = self.rng
        if kind == "short":
            return self.span(int(rng.integers(3, 40)), run=(3, 8))
        if kind == "boilerplate":
            return "\n\n".join([self.span(int(rng.integers(20, 60)))]
                               + [str(rng.choice(BOILERPLATE)) for _ in range(rng.integers(2, 5))])
        if kind == "url":
            urls = " ".join(f"https://www.{self.words[rng.integers(len(self.words))].strip('.,;:()')}"
                            f"{rng.integers(1000)}.com/page/{rng.integers(10**6)}?ref={rng.integers(99)}"
                            for _ in range(rng.integers(15, 40)))
            return self.span(int(rng.integers(20, 80))) + "\n" + urls
        if kind == "repetitive":
            phrase = self.span(int(rng.integers(4, 12)), run=(2, 4))
            return " ".join([phrase] * int(rng.integers(10, 40)))
        return self.body(self.length())

    def near(self, text: str) -> str:
        words = text.split(" ")
        k = int(self.rng.integers(1, min(10, max(1, len(words) // 100)) + 1))
        for pos in self.rng.choice(len(words), k, replace=False):
            words[pos] = str(self.words[self.rng.integers(len(self.words))])
        return " ".join(words)


def generate(directory: str, docs: int, files: int, *, fmt: str = "jsonl", seed: int = 1234,
             words: np.ndarray | None = None, first_id: int = 0, first_file: int = 0) -> Labels:
    """Write ``docs`` documents as ``files`` files (``fmt``: jsonl or parquet) in ``directory``
    plus ``labels.tsv``; returns the labels (ids, kinds, duplicate-group roots). ``first_id`` /
    ``first_file`` number a chunk of a bigger corpus made by several calls (ids and file names
    are offset; copies come from the chunk's own documents).

    Memory is bounded: copies come from a reservoir of at most 20,000 earlier documents."""
    words = english_words() if words is None else words
    rng = np.random.default_rng(seed)
    maker = _Maker(words, rng)
    os.makedirs(directory, exist_ok=True)
    names = list(KINDS)
    probs = np.array([KINDS[k] for k in names])
    kinds = np.array(names, dtype=object)[rng.choice(len(names), docs, p=probs / probs.sum())]
    roots = np.arange(docs, dtype=np.int64)
    pool: list[tuple[int, str]] = []  # sources for copies: (id, text) of earlier normal docs
    fresh: list[tuple[int, str]] = []
    bounds = np.linspace(0, docs, files + 1).astype(int)
    for f in range(files):
        pool.extend(fresh)
        fresh = []
        if len(pool) > 20_000:
            pool = [pool[i] for i in rng.choice(len(pool), 20_000, replace=False)]
        ids, texts = [], []
        for i in range(bounds[f], bounds[f + 1]):
            kind = kinds[i]
            if kind in ("exact", "near") and not pool:
                kind = kinds[i] = "normal"
            if kind in ("exact", "near"):
                src, text = pool[rng.integers(len(pool))]
                roots[i] = roots[src]
                if kind == "near":
                    text = maker.near(text)
            else:
                text = maker.make(kind)
                if kind == "normal" and len(fresh) < 20_000:
                    fresh.append((i, text))
            ids.append(first_id + i)
            texts.append(text)
        _write(os.path.join(directory, f"part-{first_file + f:05d}.{fmt}"), fmt, ids, texts)
    with open(os.path.join(directory, "labels.tsv"), "w") as fh:
        fh.write("id\tkind\troot\n")
        fh.writelines(f"{first_id + i}\t{k}\t{first_id + r}\n"
                      for i, (k, r) in enumerate(zip(kinds, roots, strict=True)))
    return np.arange(first_id, first_id + docs, dtype=np.int64), kinds, roots + first_id


def _write(path: str, fmt: str, ids: list[int], texts: list[str]) -> None:
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "text": texts}), path)
        return
    import orjson

    with open(path, "wb") as fh:
        for i, t in zip(ids, texts, strict=True):
            fh.write(orjson.dumps({"id": i, "text": t, "url": f"https://site{i % 97}.org/{i}"}))
            fh.write(b"\n")


def read_labels(directory: str) -> Labels:
    """The labels :func:`generate` wrote in ``directory``."""
    import pyarrow.csv as pcsv

    t = pcsv.read_csv(os.path.join(directory, "labels.tsv"),
                      parse_options=pcsv.ParseOptions(delimiter="\t"))
    return (t.column("id").to_numpy(), np.array(t.column("kind").to_pylist(), dtype=object),
            t.column("root").to_numpy())


def _floor_one(args: tuple[str, str, int, int]) -> int:
    """Parse + word count + write the lines of ``src`` that start in bytes ``[start, end)``
    (``end`` -1: to the end; a compressed file is always read whole)."""
    import io

    import orjson
    import pyarrow as pa

    src, dst, start, end = args
    n = 0
    # compressed inputs (.zst, .gz) decompress as they stream; output is plain JSONL
    with io.BufferedReader(pa.input_stream(src, compression="detect")) as fin, \
            open(dst, "wb") as fout:
        pos = 0
        if start > 0:  # the line crossing ``start`` belongs to the previous range
            fin.seek(start - 1)
            pos = start - 1 + len(fin.readline())
        for line in fin:
            if 0 <= end <= pos:
                break
            pos += len(line)
            row = orjson.loads(line)
            row["word_count"] = len(row["text"].split())
            fout.write(orjson.dumps(row))
            fout.write(b"\n")
            n += 1
    return n


def _floor_jobs(paths: list[str], out_dir: str, processes: int
                ) -> list[tuple[str, str, int, int]]:
    """The floor's work: uncompressed files split into byte ranges of about a quarter of each
    process's share, so every process works whatever the layout (one big file included)."""
    sizes = [os.path.getsize(p) for p in paths]
    target = max(sum(sizes) // (4 * processes), 1 << 20)
    jobs = []
    for path, size in zip(paths, sizes, strict=True):
        parts = 1 if path.endswith((".zst", ".gz", ".bz2")) else max(1, round(size / target))
        bounds = [size * k // parts for k in range(parts)] + [-1]
        name = os.path.basename(path)
        jobs += [(path, os.path.join(out_dir, f"{name}.{k}" if parts > 1 else name),
                  bounds[k], bounds[k + 1]) for k in range(parts)]
    return jobs


def io_floor(paths: list[str], out_dir: str, processes: int) -> tuple[int, float, int]:
    """The I/O floor: orjson parse + word count + write of every JSONL file in ``paths`` by
    ``processes`` processes (big files split in line-aligned byte ranges, so all of them work);
    returns (documents, seconds, peak RSS of those processes in bytes)."""
    from _rss import PeakRSS

    os.makedirs(out_dir, exist_ok=True)
    jobs = _floor_jobs(paths, out_dir, processes)
    # fresh processes, started before the clock: their memory is the floor's own (a forked
    # child would count this process's pages), and no start-up is timed
    with ProcessPoolExecutor(processes, mp_context=get_context("spawn")) as pool:
        list(pool.map(time.sleep, [0.2] * processes))
        with PeakRSS(processes=lambda: list(pool._processes)) as rss:
            start = time.perf_counter()
            n = sum(pool.map(_floor_one, jobs))
            wall = time.perf_counter() - start
    return n, wall, rss.peak


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory")
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--format", default="jsonl", choices=["jsonl", "parquet"])
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    t = time.perf_counter()
    _, kinds, _ = generate(args.directory, args.docs, args.files, fmt=args.format, seed=args.seed)
    counts = {k: int((kinds == k).sum()) for k in KINDS}
    print(f"{args.docs} docs in {args.files} files in {time.perf_counter() - t:.1f}s: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
