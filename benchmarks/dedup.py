"""Benchmark of the deduplication workflows on a generated corpus with planted duplicates.

    uv run python benchmarks/dedup.py                 # 100k documents
    uv run python benchmarks/dedup.py --docs 1000000  # 1M documents (needs ~4 GB of disk)

``--corpus realistic`` (default) is benchmarks/corpus.py (real English, log-normal lengths,
5% exact and 5% near copies with 1-10 words replaced, from earlier files, ground truth in
labels.tsv). ``--corpus simple`` is the old synthetic one: it has ``--exact`` (5%) exact copies and ``--near`` (5%) near copies (one word in a
hundred replaced) of random originals, planted in the *next* file so that duplicates cross
partitions, plus 2% very short documents (never to be grouped). Reports docs/s for MinHash
signatures (one core), the whole fuzzy workflow (identify) and the exact workflow (identify +
remove) beside a hash-set floor measured in the same run, precision and recall of both against
the planted groups, and the peak RSS of the process tree (psutil, sampled).
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from _rss import PeakRSS
from corpus import generate as generate_realistic

os.environ.setdefault("CURATOR_SUMMARY", "0")


def make_corpus(directory: str, n: int, files: int, *, exact: float, near: float, seed: int = 0):
    """Write the corpus as ``files`` Parquet files; returns ``root`` (id -> group root id)."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lex = np.array(["".join(rng.choice(letters, rng.integers(2, 10))) for _ in range(30000)])
    per = n // files
    root = np.arange(n, dtype=np.int64)
    prev_texts: list[str] = []
    prev_ids: np.ndarray = np.empty(0, np.int64)
    prev_long: np.ndarray = np.empty(0, np.int64)
    for f in range(files):
        ids = np.arange(f * per, (f + 1) * per if f < files - 1 else n)
        m = len(ids)
        n_exact, n_near = (int(m * exact), int(m * near)) if f else (0, 0)
        n_short = int(m * 0.02)
        n_orig = m - n_exact - n_near
        lengths = rng.integers(100, 300, n_orig)
        words = lex[rng.integers(0, len(lex), int(lengths.sum()))]
        bounds = np.concatenate(([0], np.cumsum(lengths)))
        texts = [" ".join(words[bounds[i]:bounds[i + 1]]) for i in range(n_orig)]
        for i in range(n_short):
            texts[i] = f"{lex[i % 7]} {lex[(i + 1) % 5]} {i}"
        src = rng.choice(prev_long, n_exact + n_near, replace=False) if n_exact + n_near else []
        roots = []
        for j, s in enumerate(src):
            t = prev_texts[s]
            if j >= n_exact:
                w = t.split()
                for pos in rng.choice(len(w), max(1, len(w) // 100), replace=False):
                    w[pos] = lex[rng.integers(len(lex))]
                t = " ".join(w)
            texts.append(t)
            roots.append(root[prev_ids[s]])
        perm = rng.permutation(m)
        texts = [texts[p] for p in perm]
        r = np.concatenate([ids[:n_orig], np.array(roots, np.int64)])[perm]
        r[perm < n_orig] = ids[perm[perm < n_orig]]
        root[ids] = r
        pq.write_table(pa.table({"id": ids, "text": texts}),
                       os.path.join(directory, f"part-{f:05d}.parquet"))
        prev_texts, prev_ids = texts, ids
        prev_long = np.flatnonzero(perm >= n_short)  # sources of copies: not the short docs
    return root


def score(removed: np.ndarray, root: np.ndarray, kinds: np.ndarray | None = None):
    """(precision, recall, false removals) of ``removed`` ids against the planted groups."""
    size = Counter(root.tolist())
    per_group = Counter(root[np.asarray(removed, dtype=np.int64)].tolist())
    expected = sum(s - 1 for s in size.values())
    correct = sum(min(c, size[g] - 1) for g, c in per_group.items())
    return correct / max(len(removed), 1), correct / max(expected, 1), len(removed) - correct


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--corpus", default="realistic", choices=["realistic", "simple"])
    ap.add_argument("--files", type=int, default=0, help="input files (default docs/10k)")
    ap.add_argument("--exact", type=float, default=0.05)
    ap.add_argument("--near", type=float, default=0.05)
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--skip", default="", help="comma list of: minhash,exact,fuzzy")
    ap.add_argument("--stage-processes", action="store_true",
                    help="run every phase's stage in worker processes, so the workflow process "
                         "holds only the driver: its peak RSS is the driver's")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
    from curator_text.dedup.minhash import minhash_signatures

    work = args.workdir or tempfile.mkdtemp(prefix="dedup_bench_")
    inp = os.path.join(work, "input")
    os.makedirs(inp, exist_ok=True)
    files = args.files or max(1, args.docs // 10_000)
    t = time.perf_counter()
    if args.corpus == "simple":
        root = make_corpus(inp, args.docs, files, exact=args.exact, near=args.near)
    else:
        _, _, root = generate_realistic(inp, args.docs, files, fmt="parquet")
    print(f"corpus: {args.corpus}, {args.docs} docs in {files} files, generated in "
          f"{time.perf_counter() - t:.1f}s ({work}); load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    skip = set(args.skip.split(","))
    if "minhash" not in skip:
        texts = pq.read_table(os.path.join(inp, "part-00000.parquet")).column("text").to_pylist()
        t = time.perf_counter()
        for s in range(0, len(texts), 1000):
            minhash_signatures(texts[s:s + 1000], num_perm=260)
        dt = time.perf_counter() - t
        print(f"minhash signatures (1 core, 260 values): {len(texts) / dt:,.0f} docs/s")
    if "exact" not in skip:
        t = time.perf_counter()
        kept = hash_set_floor(sorted(glob.glob(os.path.join(inp, "*.parquet"))),
                              os.path.join(work, "out_floor"))
        dt = time.perf_counter() - t
        print(f"hash-set floor (read, hash(text) into a set, write the first of each; 1 process): "
              f"{args.docs / dt:,.0f} docs/s ({dt:.1f}s), kept {kept}")
    for name in ("exact", "fuzzy"):
        if name in skip:
            continue
        out = os.path.join(work, f"out_{name}")
        shutil.rmtree(out, ignore_errors=True)
        with PeakRSS(include_self=False) as mem, ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            dt, dup_path, timings, driver = pool.submit(_run, name, inp, out,
                                                        args.stage_processes).result()
        removed = pq.read_table(dup_path).column("id").to_numpy()
        planted = root if name == "fuzzy" else _exact_roots(inp, root)
        p, r, bad = score(removed, planted)
        print(f"{name}: {args.docs / dt:,.0f} docs/s ({dt:.1f}s), removed {len(removed)}, "
              f"precision {p:.4f}, recall {r:.4f}, other docs removed {bad} "
              f"({bad / args.docs:.4%}), peak RSS {mem.peak / 2**30:.2f} GiB "
              f"(workflow process {driver[0] / 2**20:.0f} MiB"
              + (f", stages in worker processes; data held by the driver: peak "
                 f"{driver[1] / 2**20:.1f} MiB of NumPy/Python + Arrow" if args.stage_processes
                 else "") + "); "
              f"phases {', '.join(f'{k} {v:.1f}s' for k, v in timings.items())}; load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _run(name: str, inp: str, out: str, stage_processes: bool = False,
         ) -> tuple[float, str, dict[str, float], tuple[int, int]]:
    """Run one workflow (in a child process, so its peak memory is measured alone); also
    returns the peak RSS of that process alone (the driver's, with ``stage_processes``) and,
    with ``stage_processes``, the peak of what the driver allocated (tracemalloc: Python and
    NumPy; plus the Arrow pool's peak)."""
    import tracemalloc

    from curator.dedup import DeduplicationWorkflow, ExactDeduplicationWorkflow
    from curator.run.stats import process_peak_rss_mb
    from curator_text.dedup import FuzzyDeduplicationWorkflow

    cls = ExactDeduplicationWorkflow if name == "exact" else FuzzyDeduplicationWorkflow
    wf = cls(inp, out, perform_removal=name == "exact")  # exact: identify + remove
    if stage_processes:
        wf.run_stage = lambda stage, tasks: DeduplicationWorkflow.run_stage(
            wf, stage.with_(worker_mode="process"), tasks)
        tracemalloc.start()  # only the driver allocates in this process (NumPy and Python)
    t = time.perf_counter()
    res = wf.run()
    dt = time.perf_counter() - t
    # VmHWM, not ru_maxrss: this process was forked from the benchmark's, and ru_maxrss would
    # count the benchmark's own memory at the fork
    peak = int(process_peak_rss_mb() * 2**20)
    held = (tracemalloc.get_traced_memory()[1] + pa.default_memory_pool().max_memory()
            if stage_processes else 0)
    return dt, res.duplicates_path, res.timings, (peak, held)


def hash_set_floor(paths: list[str], out_dir: str) -> int:
    """The exact-dedup floor: read each file's texts, keep a text when its (64-bit SipHash)
    ``hash`` is new, write the kept rows; returns how many were kept."""
    os.makedirs(out_dir, exist_ok=True)
    seen: set[int] = set()
    kept = 0
    for path in paths:
        table = pq.read_table(path)
        mask = []
        for text in table.column("text").to_pylist():
            h = hash(text)
            mask.append(h not in seen)
            seen.add(h)
        table = table.filter(pa.array(mask))
        kept += table.num_rows
        pq.write_table(table, os.path.join(out_dir, os.path.basename(path)))
    return kept


def _exact_roots(inp: str, root: np.ndarray) -> np.ndarray:
    """Planted groups restricted to identical texts (near copies are their own group)."""
    t = pa.concat_tables(pq.read_table(p) for p in sorted(glob.glob(os.path.join(inp, "*.parquet"))))
    ids = t.column("id").to_numpy()
    texts = t.column("text").to_pylist()
    first: dict[str, int] = {}
    out = root.copy()
    for i, txt in zip(ids.tolist(), texts, strict=False):
        out[i] = first.setdefault(txt, i)
    return out


if __name__ == "__main__":
    raise SystemExit(main())
