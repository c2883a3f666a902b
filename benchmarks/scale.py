"""Scale corpora for ``benchmarks/text.py --scale N``: N realistic documents as zstd JSONL
shards, generated once, in parallel, outside the repository.

The corpus is made of chunks of ``CHUNK_DOCS`` documents; chunk ``k`` is
``corpus.generate(seed=1234 + k)`` numbered from ``k * CHUNK_DOCS`` (ids) and
``k * CHUNK_DOCS / SHARD_DOCS`` (files), so chunk 0 of every N >= 1M is the 1M corpus itself
(its shards are hard-linked when that corpus exists) and chunks are made by separate processes.
Duplicates (exact and near copies) are drawn within a chunk. Ground-truth labels go to
``scale_N.labels/`` beside the data (not among the files a reader picks up).

    uv run python benchmarks/scale.py DATA_DIR 10000000 [--procs 2]     # generate only
    uv run python benchmarks/scale.py DATA_DIR 10000000 --compare 1000000 --workdir W  # filters
    uv run python benchmarks/scale.py DATA_DIR 1000000 --dedup --workdir W             # fuzzy dedup

Disk: the 10M corpus takes 8.9 GB (26 GB as plain JSONL; the 1M corpus is its first chunk,
hard-linked); the filters' output (plain JSONL: 2.1 GB at 1M, ~21 GB at 10M) and the dedup
cache are deleted after each run. Measured on 2 cores at 10M documents: fuzzy dedup with its defaults took 752 s at a peak of
538 MB; its cache held 3.8 GB in 1,860 files: the band hashes (1.9 GB, one file per 64 MB group
of input), the candidate documents' texts (1.6 GB), the components' steps (91 MB), pairs, ids,
labels and the removal index (~80 MB); the duplicates list 13 MB.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

__all__ = ["CHUNK_DOCS", "SHARD_DOCS", "generate_scale", "run_dedup", "score_duplicates"]

#: documents per zstd JSONL shard (~10 MB raw, ~3.8 MB compressed)
SHARD_DOCS = 4_000
#: documents per generated chunk (one process each)
CHUNK_DOCS = 1_000_000


def _chunk(out: str, labels: str, k: int, docs: int) -> str:
    """Generate chunk ``k`` (``docs`` documents) into ``out`` as compressed shards."""
    import pyarrow as pa
    from corpus import generate

    raw = os.path.join(out, f".chunk{k:03d}")
    shutil.rmtree(raw, ignore_errors=True)
    generate(raw, docs, max(1, docs // SHARD_DOCS), seed=1234 + k, first_id=k * CHUNK_DOCS,
             first_file=k * (CHUNK_DOCS // SHARD_DOCS))
    for path in sorted(glob.glob(os.path.join(raw, "*.jsonl"))):
        dst = os.path.join(out, os.path.basename(path) + ".zst")
        with open(path, "rb") as src, pa.CompressedOutputStream(dst + ".tmp", "zstd") as fh:
            shutil.copyfileobj(src, fh, 16 << 20)
        os.replace(dst + ".tmp", dst)
        os.remove(path)
    os.replace(os.path.join(raw, "labels.tsv"), os.path.join(labels, f"labels-{k:03d}.tsv"))
    shutil.rmtree(raw, ignore_errors=True)
    open(os.path.join(out, f".chunk{k:03d}.done"), "w").close()
    return f"chunk {k}: {docs} docs"


def _reuse_chunk(data_dir: str, out: str, k: int) -> bool:
    """Hard-link chunk ``k`` from another scale corpus that has it (the same generator call:
    chunk 0 of 10M is the 1M corpus, chunks 0-2 of 10M make the 3M corpus)."""
    first = k * (CHUNK_DOCS // SHARD_DOCS)
    names = [f"part-{first + j:05d}.jsonl.zst" for j in range(CHUNK_DOCS // SHARD_DOCS)]
    for src in sorted(glob.glob(os.path.join(data_dir, "scale_*"))):
        try:
            size = int(src.rsplit("_", 1)[1])
        except ValueError:
            continue
        finished = (os.path.exists(os.path.join(src, "DONE")) and size >= (k + 1) * CHUNK_DOCS
                    or os.path.exists(os.path.join(src, f".chunk{k:03d}.done")))
        if src == out or not finished:
            continue
        for name in names:
            if not os.path.exists(os.path.join(out, name)):
                os.link(os.path.join(src, name), os.path.join(out, name))
        open(os.path.join(out, f".chunk{k:03d}.done"), "w").close()
        return True
    return False


def generate_scale(data_dir: str, docs: int, procs: int = 2) -> str:
    """``docs`` documents under ``data_dir/scale_{docs}`` (made once; a finished chunk of an
    interrupted run is kept); returns the directory."""
    out = os.path.join(data_dir, f"scale_{docs}")
    if os.path.exists(os.path.join(out, "DONE")):
        return out
    labels = out + ".labels"
    os.makedirs(out, exist_ok=True)
    os.makedirs(labels, exist_ok=True)
    chunks = [(k, min(CHUNK_DOCS, docs - k * CHUNK_DOCS))
              for k in range((docs + CHUNK_DOCS - 1) // CHUNK_DOCS)]
    todo = [(k, n) for k, n in chunks
            if not os.path.exists(os.path.join(out, f".chunk{k:03d}.done"))
            and not (n == CHUNK_DOCS and _reuse_chunk(data_dir, out, k))]
    start = time.perf_counter()
    with ProcessPoolExecutor(max(1, min(procs, len(todo) or 1)),
                             mp_context=get_context("spawn")) as pool:
        n = len(todo)
        for msg in pool.map(_chunk, [out] * n, [labels] * n, [k for k, _ in todo],
                            [d for _, d in todo]):
            print(f"{msg} ({time.perf_counter() - start:.0f} s)", flush=True)
    for marker in glob.glob(os.path.join(out, ".chunk*.done")):
        os.remove(marker)
    open(os.path.join(out, "DONE"), "w").close()
    return out


def _dedup_child(raw: str, out: str, conn) -> None:
    """Run the fuzzy workflow as NeMo's docs show it (local executor, defaults); send the phase
    intervals, the result and the wall time back."""
    from curator_text.dedup import FuzzyDeduplicationWorkflow

    wf = FuzzyDeduplicationWorkflow(input_path=raw, output_path=out,
                                    cache_path=os.path.join(out, "cache"), id_field="id")
    phases: list[tuple[str, float, float]] = []
    run_stage = wf.run_stage

    def timed(stage, tasks):
        start = time.time()
        try:
            return run_stage(stage, tasks)
        finally:
            phases.append((stage.name, start, time.time()))

    wf.run_stage = timed  # type: ignore[method-assign]
    start = time.perf_counter()
    result = wf.run()
    conn.send({"wall_s": time.perf_counter() - start, "phases": phases,
               "duplicates": result.num_duplicates, "partitions": wf.shuffle_partitions(
                   wf.input_files()), "group_sizes": result.group_sizes})


def _tree_size(path: str) -> dict[str, tuple[int, int]]:
    """``{phase directory: (files, bytes)}`` under ``path``: the cache by phase (its parameter
    tag and the verification directory's tag left out: ``buckets_36``, ``verify/candidates``,
    ``verify/cc`` …), the rest by top directory."""
    sizes: dict[str, list[int]] = {}
    for root, _, files in os.walk(path):
        rel = os.path.relpath(root, path).split(os.sep)
        if rel[:2] == ["cache", "fuzzy"] and len(rel) > 3 and rel[3].startswith("verify_"):
            key = "/".join(["verify", *rel[4:5]])
        elif rel[:2] == ["cache", "fuzzy"] and len(rel) > 3:
            key = rel[3]
        elif rel[:2] == ["cache", "fuzzy"]:
            key = rel[2] if len(rel) > 2 and rel[2] == "by_file" else "cache"
        else:
            key = rel[0]
        entry = sizes.setdefault(key, [0, 0])
        for f in files:
            entry[0] += 1
            entry[1] += os.path.getsize(os.path.join(root, f))
    return {k: (v[0], v[1]) for k, v in sorted(sizes.items())}


def run_dedup(raw: str, workdir: str, keep: str | None = None) -> dict:
    """Fuzzy dedup of ``raw`` in a fresh process; the peak summed RSS of its process tree
    (overall and per phase), wall time and what the cache holds on disk. The output and the
    cache are deleted afterwards (``keep``: the duplicates list is copied there first, to
    compare two versions' results)."""
    import psutil

    out = os.path.join(workdir, "out_fuzzy_scale")
    shutil.rmtree(out, ignore_errors=True)
    ctx = get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_dedup_child, args=(raw, out, send))
    proc.start()
    samples: list[tuple[float, int]] = []
    while not recv.poll(0.2):
        if not proc.is_alive():
            raise RuntimeError(f"the dedup process exited with {proc.exitcode}")
        total = 0
        try:
            parent = psutil.Process(proc.pid)
            for p in [parent, *parent.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
        except psutil.Error:
            pass
        samples.append((time.time(), total))
    res = recv.recv()
    proc.join()
    per_phase: dict[str, int] = {}
    for name, t0, t1 in res["phases"]:
        peak = max((r for t, r in samples if t0 <= t <= t1), default=0)
        per_phase[name] = max(per_phase.get(name, 0), peak)
    sizes = _tree_size(out)
    found = os.path.join(out, "duplicates", "fuzzy.parquet")
    res.update(zip(("precision", "recall", "false_removals"), score_duplicates(raw, found),
                   strict=True))
    if keep:
        shutil.copyfile(found, keep)
    res.update(peak_rss_mb=round(max(r for _, r in samples) / 2**20),
               phase_peak_mb={k: round(v / 2**20) for k, v in per_phase.items()},
               phase_s={}, disk_mb=round(sum(b for _, b in sizes.values()) / 1e6),
               disk_files=sum(n for n, _ in sizes.values()),
               disk={k: (n, round(b / 1e6, 1)) for k, (n, b) in sizes.items()})
    for name, t0, t1 in res.pop("phases"):
        res["phase_s"][name] = round(res["phase_s"].get(name, 0) + t1 - t0, 1)
    shutil.rmtree(out, ignore_errors=True)
    return res


def score_duplicates(raw: str, duplicates: str) -> tuple[float, float, int]:
    """(precision, recall, false removals) of the duplicates list ``duplicates`` against the
    ground truth generated with ``raw`` (``raw.labels/``: each document's planted group)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pc
    import pyarrow.parquet as pq
    from dedup import score

    labels = pa.concat_tables([
        pc.read_csv(f, parse_options=pc.ParseOptions(delimiter="\t"),
                    convert_options=pc.ConvertOptions(include_columns=["id", "root"]))
        for f in sorted(glob.glob(os.path.join(raw + ".labels", "labels-*.tsv")))])
    ids = labels.column("id").to_numpy()
    root = np.empty(int(ids.max()) + 1, np.int64)
    root[ids] = labels.column("root").to_numpy()
    removed = pq.read_table(duplicates, columns=["id"]).column("id").to_numpy()
    p, r, bad = score(removed.astype(np.int64), root)
    return round(p, 5), round(r, 5), int(bad)


def compare_filters(data_dir: str, sizes: list[int], workdir: str, rounds: int = 1) -> None:
    """The five filters (plain calls, local executor, each run in a fresh process) on each
    corpus of ``sizes`` in turn, ``rounds`` times, back to back; prints docs/s, the peak summed
    RSS and the load average of each run, then each size's throughput and peak over the first's."""
    import json

    from text import run_plain

    runs: dict[int, list[dict]] = {n: [] for n in sizes}
    for _ in range(rounds):
        for n in sizes:
            raw = generate_scale(data_dir, n)
            mb = sum(os.path.getsize(p) for p in glob.glob(os.path.join(raw, "*.jsonl*"))) / 1e6
            before = os.getloadavg()
            r = run_plain(raw, os.path.join(workdir, "out_filters_scale"), True, n, mb)
            r.update(docs=n, load_before=[round(x, 1) for x in before],
                     load_after=[round(x, 1) for x in os.getloadavg()])
            runs[n].append(r)
            print(json.dumps(r), flush=True)
    base = sizes[0]
    for n in sizes[1:]:
        tput = [r["docs_per_s"] / b["docs_per_s"] for r, b in zip(runs[n], runs[base], strict=True)]
        peak = [r["peak_rss_mb"] / b["peak_rss_mb"] for r, b in zip(runs[n], runs[base],
                                                                     strict=True)]
        print(f"{n} vs {base} docs: throughput ratio {' '.join(f'{x:.2f}' for x in tput)}, "
              f"peak ratio {' '.join(f'{x:.2f}' for x in peak)}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_dir")
    ap.add_argument("docs", type=int)
    ap.add_argument("--procs", type=int, default=2)
    ap.add_argument("--dedup", action="store_true",
                    help="then run fuzzy dedup on the corpus (output and cache under --workdir, "
                         "deleted after)")
    ap.add_argument("--compare", type=int, nargs="+", metavar="DOCS",
                    help="then run the five filters on the DOCS-document corpora and this one, "
                         "back to back (e.g. --compare 1000000)")
    ap.add_argument("--workdir", default="/tmp/curator-scale", help="outputs (deleted after)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--keep-duplicates", metavar="PARQUET",
                    help="copy the dedup's duplicates list (id, duplicate_of) here")
    args = ap.parse_args()
    raw = generate_scale(args.data_dir, args.docs, args.procs)
    if args.compare:
        compare_filters(args.data_dir, [*args.compare, args.docs], args.workdir, args.rounds)
    print(raw, flush=True)
    if args.dedup:
        print(f"fuzzy dedup of {args.docs} docs; load average "
              f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
        import json

        print(json.dumps(run_dedup(raw, args.workdir, args.keep_duplicates)), flush=True)
        print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
