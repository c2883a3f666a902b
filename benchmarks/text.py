"""Text pipeline benchmark: docs/s, MB/s and peak RSS (all processes) for read → WordCount →
NonAlphaNumeric → Urls → RepeatingTopNGrams → BoilerPlateString → write, against the I/O floor
measured in the same run (orjson parse + word count + write by ``--floor-procs`` processes, a
big file split in line-aligned byte ranges so that every process works, one file included) and
the pipeline's own read → write.

    uv run python benchmarks/text.py [--corpus realistic|simple] [--docs 100000] [--files 8]
                                     [--executor local] [--repeat 2] [--workdir …]
                                     [--fuse-stages default|off|thread|process]
    uv run python benchmarks/text.py --docs 20000 --per-filter 10000   # each filter, one core
    uv run python benchmarks/text.py --stage-cpu 50000   # CPU per document of each stage, one thread
    uv run python benchmarks/text.py --plain --layout 1x259MB --repeat 3   # the user's plain code
    uv run python benchmarks/text.py --first-run --layout 8x32MB --repeat 3  # a machine's first run
    uv run python benchmarks/text.py --plain --input DIR --repeat 3   # your own JSONL files
    uv run python benchmarks/text.py --plain --scale 1000000 --repeat 3 --data-dir /data/curator
    uv run python benchmarks/text.py --scale 1000000 --dedup --data-dir /data/curator

``--plain`` calls the reader as NeMo Curator's docs show (``JsonlReader(path)``: no blocksize,
no executor flags) and runs each pipeline run in a fresh process, so its peak (that process and
its children) is what a user's script uses. ``--layout`` picks the files: 1x1GB, 1x259MB, 8x32MB,
80x3MB (the realistic corpus; 1x259MB is its 100k documents in one file). ``--scale N``
generates N documents once as zstd-compressed JSONL shards of 4,000 documents (~10 MB raw; a
compressed file smaller than the 4 MiB block is one task; a bigger one is read in blocks of its
decompressed bytes) under ``--data-dir`` (outside the repository; 1M documents take
0.9 GB there, 10M 8.9 GB, plus the uncompressed output of one run, 2.1 / 21 GB, deleted after
it; generated in parallel chunks of 1M, see benchmarks/scale.py) and runs on them. ``--dedup``
runs fuzzy dedup on them instead (peak per phase, and what its cache holds on disk).

``--corpus realistic`` (default) is benchmarks/corpus.py: real English spans, log-normal lengths
(median 350 words), normal/short/boilerplate/URL/repetitive/duplicate documents. ``--corpus
simple`` is the old ~100-word-vocabulary corpus. Corpora are seeded and generated once.
On a Ray executor one filter run first starts the workers (its time is printed, not counted).
``--repeat 2`` runs the filter pipeline twice (the fastest run counts) and checks the kept set is
identical; the floor is the fastest of ``--floor-repeat`` (3) runs, alternating with the pipeline's runs.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import random
import shutil
import time

import psutil
from _rss import PeakRSS
from corpus import generate as generate_realistic
from corpus import io_floor
from scale import generate_scale, run_dedup
from text_filters import per_filter

WORDS = ("the of and to in is was for that on with as by at from his her it an were are which "
         "this be or has had not but have also its one after first new two their who been "
         "they she he more during other into time only all over later most city year world "
         "school music river house people water state history system season family team war "
         "government research development company market village language church public").split()


def _paragraph(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    out, i = [], 0
    while i < len(words):
        k = rng.randint(8, 20)
        s = " ".join(words[i:i + k])
        out.append(s[:1].upper() + s[1:] + rng.choice([".", ".", ".", "?", "!"]))
        i += k
    return " ".join(out)


def make_doc(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.6:  # normal article
        return "\n\n".join(_paragraph(rng, rng.randint(40, 120)) for _ in range(rng.randint(3, 7)))
    if kind < 0.7:  # short
        return _paragraph(rng, rng.randint(3, 30))
    if kind < 0.8:  # boilerplate footer
        body = "\n\n".join(_paragraph(rng, rng.randint(40, 100)) for _ in range(3))
        return body + "\n\nBy using this site you agree to our privacy policy and terms of use."
    if kind < 0.9:  # URL heavy
        urls = " ".join(f"https://www.example{rng.randint(0, 999)}.com/page/{rng.randint(0, 10**6)}"
                        f"?ref=link{rng.randint(0, 99)}" for _ in range(rng.randint(15, 40)))
        return _paragraph(rng, rng.randint(20, 60)) + "\n" + urls
    phrase = _paragraph(rng, rng.randint(4, 8))  # repetitive spam
    return " ".join([phrase] * rng.randint(10, 40))


def generate(raw_dir: str, docs: int, files: int, seed: int = 1234) -> None:
    rng = random.Random(seed)
    os.makedirs(raw_dir, exist_ok=True)
    per = docs // files
    for f in range(files):
        with open(os.path.join(raw_dir, f"part_{f:04d}.jsonl"), "w") as fh:
            for i in range(per):
                fh.write(json.dumps({"id": f"{f}-{i}", "text": make_doc(rng),
                                     "url": f"https://site{i % 97}.org/{f}/{i}"}) + "\n")


def _generate_corpus(corpus: str, raw_dir: str, docs: int, files: int) -> None:
    """Write the corpus (run in a child process; returns nothing, so nothing comes back)."""
    if corpus == "simple":
        generate(raw_dir, docs, files)
    else:
        generate_realistic(raw_dir, docs, files)


def build(raw_dir: str, out_dir: str, filters: bool, blocksize: str | None, workers: int = 0):
    """The pipeline; ``workers``: per stage (the top-n-gram stage twice as many), 0: the
    executor sizes every stage (a fused group: one worker per core)."""
    from curator import Pipeline
    from curator_text import (
        BoilerPlateStringFilter,
        JsonlReader,
        JsonlWriter,
        NonAlphaNumericFilter,
        RepeatingTopNGramsFilter,
        ScoreFilter,
        UrlsFilter,
        WordCountFilter,
    )

    stages = [JsonlReader(file_paths=raw_dir, blocksize=blocksize)]  # big files: byte ranges
    if filters:
        stages += [ScoreFilter(WordCountFilter(min_words=50, max_words=100000)),
                   ScoreFilter(NonAlphaNumericFilter()), ScoreFilter(UrlsFilter()),
                   ScoreFilter(RepeatingTopNGramsFilter(n=2, max_repeating_ngram_ratio=0.2)),
                   ScoreFilter(BoilerPlateStringFilter())]
    stages.append(JsonlWriter(path=out_dir))
    if workers:  # the heaviest stage gets twice as many (its kernel releases the GIL)
        stages = [s.with_(num_workers=workers * (2 if "TopN" in s.name else 1)) for s in stages]
    return Pipeline("text-bench" if filters else "text-floor", stages=stages)


def kept_digest(out_dir: str) -> tuple[int, str]:
    ids = []
    for path in sorted(glob.glob(os.path.join(out_dir, "*.jsonl"))):
        with open(path) as fh:
            ids += [json.loads(line)["id"] for line in fh]
    return len(ids), hashlib.sha256("\n".join(sorted(map(str, ids))).encode()).hexdigest()[:16]


def _count_lines(path: str) -> int:
    with open(path, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))


LAYOUTS = {"1x1GB": (410_000, 1), "1x259MB": (100_000, 1), "8x32MB": (100_000, 8),
           "80x3MB": (100_000, 80)}


def _plain_child(raw_dir: str, out_dir: str, filters: bool, conn) -> None:
    """One plain run in a fresh process: the pipeline as a user writes it, no flags."""
    pipe = build(raw_dir, out_dir, filters, None)
    start = time.perf_counter()
    pipe.run(summary=False)
    conn.send((pipe.name, time.perf_counter() - start))


def run_plain(raw_dir: str, out_dir: str, filters: bool, docs: int, mb: float) -> dict:
    """A plain run in a fresh process; peak = that process and its children."""
    from multiprocessing import get_context

    shutil.rmtree(out_dir, ignore_errors=True)
    ctx = get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_plain_child, args=(raw_dir, out_dir, filters, send))
    proc.start()

    def tree() -> list[int]:
        try:
            return [proc.pid, *(c.pid for c in psutil.Process(proc.pid).children(recursive=True))]
        except psutil.Error:
            return []

    with PeakRSS(processes=tree) as rss:
        while not recv.poll(0.5):  # a child that died (an import error…) must not hang us
            if not proc.is_alive():
                raise RuntimeError(f"the pipeline process exited with {proc.exitcode}")
        name, wall = recv.recv()
    proc.join()
    kept, digest = kept_digest(out_dir)
    if out_dir.endswith("_scale"):
        shutil.rmtree(out_dir, ignore_errors=True)
    return {"pipeline": f"{name} (plain)", "wall_s": round(wall, 2),
            "docs_per_s": round(docs / wall), "mb_per_s": round(mb / wall, 1),
            "peak_rss_mb": round(rss.peak / 2**20), "kept": kept, "kept_digest": digest}


def run_one(raw_dir: str, out_dir: str, filters: bool, args: argparse.Namespace,
            docs: int, mb: float) -> dict:
    if args.plain:
        return run_plain(raw_dir, out_dir, filters, docs, mb)
    shutil.rmtree(out_dir, ignore_errors=True)
    pipe = build(raw_dir, out_dir, filters, args.blocksize, args.num_workers)
    with PeakRSS() as rss:
        start = time.perf_counter()
        local = args.executor == "local"
        config = {"queue_size": args.queue_size} if args.queue_size and local else {}
        if local and args.fuse_stages != "default":
            config["fuse_stages"] = False if args.fuse_stages == "off" else args.fuse_stages
        pipe.run(args.executor, summary=False, **config)
        wall = time.perf_counter() - start
    kept, digest = kept_digest(out_dir)
    return {"pipeline": pipe.name, "wall_s": round(wall, 2), "docs_per_s": round(docs / wall),
            "mb_per_s": round(mb / wall, 1), "peak_rss_mb": round(rss.peak / 2**20),
            "kept": kept, "kept_digest": digest}


def first_run(raw: str, workdir: str, docs: int, mb: float, repeat: int) -> None:
    """The plain pipeline on a machine that never ran it (a fresh, empty ``NUMBA_CACHE_DIR``:
    any numba kernel a stage uses compiles; the default text path's kernels are C built at
    install, so nothing does) against the run after it, each in a fresh process, ``repeat``
    pairs; prints each ratio and the median."""
    import tempfile

    ratios, before = [], os.environ.get("NUMBA_CACHE_DIR")
    out = os.path.join(workdir, "out_first_run")
    try:
        for _ in range(repeat):
            cache = tempfile.mkdtemp(prefix="numba-first-run-")
            os.environ["NUMBA_CACHE_DIR"] = cache  # inherited by the spawned child
            first = run_plain(raw, out, True, docs, mb)
            second = run_plain(raw, out, True, docs, mb)
            shutil.rmtree(cache, ignore_errors=True)
            ratios.append(first["wall_s"] / second["wall_s"])
            print(json.dumps({"first_s": first["wall_s"], "second_s": second["wall_s"],
                              "ratio": round(ratios[-1], 2), "load": os.getloadavg()[0]}),
                  flush=True)
    finally:
        if before is None:
            os.environ.pop("NUMBA_CACHE_DIR", None)
        else:
            os.environ["NUMBA_CACHE_DIR"] = before
        shutil.rmtree(out, ignore_errors=True)
    print(f"first run / second run: median {sorted(ratios)[len(ratios) // 2]:.2f} "
          f"({' '.join(f'{r:.2f}' for r in ratios)}); load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")


def stage_cpu(raw: str, docs: int, repeat: int = 5) -> None:
    """CPU time per document of every stage of the pipeline, run one after another in this
    thread (Arrow on one thread) on the first partitions holding ``docs`` documents; the
    fastest of ``repeat`` rounds per stage. The sum is what one core pays per document."""
    import pyarrow as pa
    from curator.executors.base import invoke_stage
    from curator.tasks import EmptyTask

    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)
    out = os.path.join(os.path.dirname(raw), "out_stage_cpu")
    shutil.rmtree(out, ignore_errors=True)
    stages = build(raw, out, True, None).build()
    parts, n = [], 0
    for part in invoke_stage(stages[0], [EmptyTask()], "bench").outputs:
        parts.append(part)
        n += sum(t.num_items for t in invoke_stage(stages[1], [part], "bench").outputs)
        if n >= docs:
            break
    best = {s.name: float("inf") for s in stages[1:]}
    for round_ in range(repeat + 1):
        spent = dict.fromkeys(best, 0.0)
        for part in parts:
            tasks = [part]
            for stage in stages[1:]:
                start = time.process_time()
                tasks = invoke_stage(stage, tasks, "bench").outputs
                spent[stage.name] += time.process_time() - start
        if round_:  # the first round loads the kernels: not counted
            best = {k: min(best[k], spent[k]) for k in best}
    print(f"CPU per document, one thread, {n} documents, fastest of {repeat}:")
    for name, sec in best.items():
        print(f"  {name:<40}{sec / n * 1e6:7.2f} µs")
    print(f"  {'total':<40}{sum(best.values()) / n * 1e6:7.2f} µs")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--corpus", default="realistic", choices=["realistic", "simple"])
    ap.add_argument("--floor-procs", type=int, default=psutil.cpu_count(),
                    help="processes of the orjson I/O floor (default: all cores)")
    ap.add_argument("--files", type=int, default=8,
                    help="input files; partitions are one file each, so this sets the memory per task")
    ap.add_argument("--executor", default="local")
    ap.add_argument("--blocksize", default="4MB",
                    type=lambda x: None if x.lower() == "none" else x,
                    help="reader blocksize: small files grouped up to it, bigger ones read in "
                         "byte ranges of it ('none': one task per file)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--floor-repeat", type=int, default=3,
                    help="runs of the orjson floor; the fastest counts")
    ap.add_argument("--num-workers", type=int, default=0,
                    help="workers per stage, the top-n-gram stage twice as many (default 0: "
                         "the executor sizes them)")
    ap.add_argument("--queue-size", type=int, default=1,
                    help="tasks buffered between stages (local executor; 0: its default)")
    ap.add_argument("--fuse-stages", default="default",
                    choices=["default", "off", "thread", "process"],
                    help="the local executor's fuse_stages (default: its own default)")
    ap.add_argument("--workdir", default=os.path.join("benchmarks", "results", "text"))
    ap.add_argument("--plain", action="store_true",
                    help="the reader as NeMo's docs call it (no blocksize, no executor flags), "
                         "each run in a fresh process")
    ap.add_argument("--input", metavar="DIR",
                    help="run on the (uncompressed) JSONL files in DIR, e.g. your own corpus, instead of a "
                         "generated one; --docs is counted from them")
    ap.add_argument("--layout", choices=sorted(LAYOUTS),
                    help="files of the realistic corpus (sets --docs and --files)")
    ap.add_argument("--scale", type=int, default=0, metavar="DOCS",
                    help="DOCS documents as zstd JSONL shards under --data-dir (implies --plain)")
    ap.add_argument("--data-dir", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                       "curator-bench"),
                    help="where --scale data is generated once (outside the repository)")
    ap.add_argument("--dedup", action="store_true",
                    help="with --scale: run fuzzy dedup (FuzzyDeduplicationWorkflow, defaults, "
                         "local executor) on the corpus instead of the filters")
    ap.add_argument("--per-filter", type=int, default=0, metavar="DOCS",
                    help="only time each filter alone on one core on DOCS documents (e.g. 10000)")
    ap.add_argument("--first-run", action="store_true",
                    help="only the plain pipeline with an empty numba cache (a machine's first "
                         "run) against the next run, --repeat pairs")
    ap.add_argument("--stage-cpu", type=int, default=0, metavar="DOCS",
                    help="only the CPU per document of each stage in one thread, on DOCS "
                         "documents (e.g. 50000)")
    args = ap.parse_args()
    if args.layout:
        args.docs, args.files = LAYOUTS[args.layout]
    if args.scale:
        args.plain, args.docs = True, args.scale
    if args.plain:
        args.blocksize = None
    raw = os.path.join(args.workdir, f"raw_{args.corpus}_{args.docs}_{args.files}")
    if args.scale:
        raw = generate_scale(args.data_dir, args.scale)
        if args.dedup:
            print(f"fuzzy dedup, {args.scale} docs; load average "
                  f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
            print(json.dumps(run_dedup(raw, args.workdir)), flush=True)
            print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
            return 0
    elif args.input:
        raw = args.input
        args.docs = sum(_count_lines(p) for p in glob.glob(os.path.join(raw, "*.jsonl")))
        args.files = len(glob.glob(os.path.join(raw, "*.jsonl*")))
    elif not os.path.isdir(raw):
        print(f"generating {args.docs} docs in {raw} …", flush=True)
        # in a child process: the generator's memory must not count in the peaks measured here
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import get_context

        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            pool.submit(_generate_corpus, args.corpus, raw, args.docs, args.files).result()
    if args.per_filter:
        per_filter(raw, args.per_filter)
        return 0
    if args.stage_cpu:
        stage_cpu(raw, args.stage_cpu)
        return 0
    inputs = sorted(glob.glob(os.path.join(raw, "*.jsonl*")))
    mb = sum(os.path.getsize(p) for p in inputs) / 1e6
    if args.first_run:
        first_run(raw, args.workdir, args.docs, mb, args.repeat)
        return 0
    print(f"corpus: {args.input or args.corpus}, {args.docs} docs, {mb:.0f} MB, {args.files} files; executor "
          f"{args.executor}; {psutil.cpu_count()} cpus; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    cluster = None
    if args.executor != "local":  # start Ray once, outside the timed runs
        from curator import RayClient

        cluster = RayClient()
        cluster.start()
        time.sleep(2)
        print(f"idle Ray cluster (counted in every peak below): "
              f"{PeakRSS().sample() / 2**20:.0f} MB", flush=True)
        # start-up, reported and excluded: Ray's worker processes start and import the stages
        warm = run_one(raw, os.path.join(args.workdir, "out_filters"), True, args, args.docs, mb)
        print(json.dumps({"pipeline": "start-up run (not counted)", "wall_s": warm["wall_s"]}),
              flush=True)
    sfx = "_scale" if args.scale else ""
    floor = run_one(raw, os.path.join(args.workdir, "out_floor" + sfx), False, args, args.docs, mb)
    print(json.dumps(floor), flush=True)
    out_io = os.path.join(args.workdir, "out_io_floor")
    floors, runs, pairs = [], [], []
    # floor and pipeline runs alternate, so both see the same spells of a noisy machine
    for i in range(max(args.repeat, args.floor_repeat)):
        if i < args.floor_repeat:
            shutil.rmtree(out_io, ignore_errors=True)
            n, wall, peak = io_floor(inputs, out_io, args.floor_procs)
            floors.append({"pipeline": f"orjson floor ({args.floor_procs} processes)",
                           "wall_s": round(wall, 2), "docs_per_s": round(n / wall),
                           "mb_per_s": round(mb / wall, 1), "peak_rss_mb": round(peak / 2**20)})
            print(json.dumps(floors[-1]), flush=True)
        if i < args.repeat:
            runs.append(run_one(raw, os.path.join(args.workdir, "out_filters" + sfx), True, args,
                                args.docs, mb))
            print(json.dumps(runs[-1]), flush=True)
        if i < min(args.repeat, args.floor_repeat):
            pairs.append(runs[-1]["docs_per_s"] / floors[-1]["docs_per_s"])
    io = max(floors, key=lambda r: r["docs_per_s"])
    if cluster is not None:
        cluster.stop()
    best = max(runs, key=lambda r: r["docs_per_s"])
    print(f"\nfilters: {best['docs_per_s']:,} docs/s, {best['mb_per_s']} MB/s, peak "
          f"{best['peak_rss_mb']} MB; orjson floor: {io['docs_per_s']:,} docs/s, peak "
          f"{io['peak_rss_mb']} MB; pipeline read→write: {floor['docs_per_s']:,} docs/s, peak "
          f"{floor['peak_rss_mb']} MB; ratio filters/floor "
          f"{best['docs_per_s'] / io['docs_per_s']:.2f} (fastest over fastest; each pair run "
          f"back to back: {' '.join(f'{p:.2f}' for p in pairs)}); load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if pairs:
        print(f"median of the back-to-back ratios: {sorted(pairs)[len(pairs) // 2]:.2f}")
    if len(runs) > 1:
        same = len({r["kept_digest"] for r in runs}) == 1
        print(f"kept set identical across {len(runs)} runs: {same}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
