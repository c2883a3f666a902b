"""Small runs, whole processes: ``python script.py`` timed from the outside (interpreter start,
imports, the run and exit), for

* the user's plain Curator script: read -> WordCount -> NonAlphaNumeric -> Urls ->
  RepeatingTopNGrams -> BoilerPlateString -> write (the README's Python section, five filters,
  no flags);
* a plain orjson script: parse + word count + write, the files shared by 2 processes;
* a Polars script: read + word count + write, file by file;

alternating (one of each per round), median of ``--repeat`` rounds (3), with the peak RSS of
each process tree; ratios are script time / Curator time (>= 1.0: Curator is at least as fast).
Also the time of ``import curator_text`` (median of fresh interpreters, the bare interpreter's
start subtracted).

    uv run python benchmarks/small_run.py [--docs 100000] [--files 8] [--repeat 3] [--workdir …]
                                          [--baseline OTHER/packages/core/src:OTHER/packages/text/src]

Python's bytecode is written and used (``PYTHONDONTWRITEBYTECODE`` is dropped for the timed
processes, and each script runs once untimed first): installed from wheels, every package comes
with its bytecode compiled at install, while a workspace checkout run with that variable set
would compile Curator's own sources at every start, a cost no installed user pays.

The corpus is benchmarks/corpus.py's realistic one (100k documents, 236 MiB in 8 files by
default), generated once under ``--workdir``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import textwrap
import time

import psutil
from _rss import PeakRSS

CURATOR_SCRIPT = '''
import sys

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

if __name__ == "__main__":
    Pipeline(name="small-run", stages=[
        JsonlReader(file_paths=sys.argv[1]),
        ScoreFilter(WordCountFilter(min_words=50, max_words=100000)),
        ScoreFilter(NonAlphaNumericFilter()),
        ScoreFilter(UrlsFilter()),
        ScoreFilter(RepeatingTopNGramsFilter(n=2, max_repeating_ngram_ratio=0.2)),
        ScoreFilter(BoilerPlateStringFilter()),
        JsonlWriter(path=sys.argv[2]),
    ]).run()
'''

ORJSON_SCRIPT = '''
import os
import sys
from multiprocessing import Pool

import orjson


def one(args):
    src, dst = args
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        for line in fin:
            row = orjson.loads(line)
            row["word_count"] = len(row["text"].split())
            fout.write(orjson.dumps(row) + b"\\n")


if __name__ == "__main__":
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    names = sorted(n for n in os.listdir(src) if n.endswith(".jsonl"))
    with Pool(2) as pool:
        pool.map(one, [(os.path.join(src, n), os.path.join(dst, n)) for n in names], chunksize=1)
'''

POLARS_SCRIPT = '''
import os
import sys

import polars as pl

if __name__ == "__main__":
    src, dst = sys.argv[1], sys.argv[2]
    os.makedirs(dst, exist_ok=True)
    for name in sorted(n for n in os.listdir(src) if n.endswith(".jsonl")):
        df = pl.read_ndjson(os.path.join(src, name))
        df = df.with_columns(pl.col("text").str.count_matches(r"\\S+").alias("word_count"))
        df.write_ndjson(os.path.join(dst, name))
'''

SCRIPTS = {"curator": CURATOR_SCRIPT, "orjson (2 processes)": ORJSON_SCRIPT,
           "polars": POLARS_SCRIPT}


def time_process(args: list[str], env: dict[str, str] | None = None
                 ) -> tuple[float, int, float]:
    """Wall seconds, peak RSS (bytes, the process and all its children) and CPU seconds (user +
    system, children included: a figure a busy machine distorts less than the wall time) of
    ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)

    def tree() -> list[int]:
        try:
            return [proc.pid, *(c.pid for c in psutil.Process(proc.pid).children(recursive=True))]
        except psutil.Error:
            return []

    with PeakRSS(processes=tree) as rss:
        _, err = proc.communicate()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{args} exited with {proc.returncode}: {err.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, rss.peak, cpu


def import_time(repeat: int, env: dict[str, str] | None = None) -> float:
    """Median seconds of ``import curator_text`` in a fresh interpreter, minus its bare start."""
    def run(code: str) -> float:
        return time_process([sys.executable, "-c", code], env)[0]

    bare = statistics.median(run("pass") for _ in range(repeat))
    full = statistics.median(run("import curator_text") for _ in range(repeat))
    return full - bare


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", default=os.path.join("benchmarks", "results", "small_run"))
    ap.add_argument("--baseline", metavar="PYTHONPATH",
                    help="also run the Curator script with this PYTHONPATH (another checkout's "
                         "packages/core/src:packages/text/src), alternating with the others")
    args = ap.parse_args()

    raw = os.path.join(os.path.abspath(args.workdir), f"raw_{args.docs}_{args.files}")
    if not os.path.isdir(raw):
        from corpus import generate

        t = time.perf_counter()
        generate(raw + ".tmp", args.docs, args.files)
        os.replace(raw + ".tmp", raw)
        print(f"corpus: {args.docs} documents in {args.files} files "
              f"({time.perf_counter() - t:.0f} s, once)")
    mb = sum(os.path.getsize(os.path.join(raw, n)) for n in os.listdir(raw)
             if n.endswith(".jsonl")) / 2**20
    scripts, envs = {}, {}
    for name, body in SCRIPTS.items():
        path = os.path.join(args.workdir, f"{name.split()[0]}_script.py")
        with open(path, "w") as fh:
            fh.write(textwrap.dedent(body).lstrip())
        scripts[name] = path
    baseline_env = None
    if args.baseline:
        baseline_env = {**os.environ, "PYTHONPATH": args.baseline}
        scripts["curator (baseline)"] = scripts["curator"]
        envs["curator (baseline)"] = baseline_env

    # the fixed cost alone: the same scripts on one file of 200 documents
    tiny = os.path.join(os.path.abspath(args.workdir), "raw_tiny")
    if not os.path.isdir(tiny):
        os.makedirs(tiny + ".tmp", exist_ok=True)
        first = sorted(n for n in os.listdir(raw) if n.endswith(".jsonl"))[0]
        with open(os.path.join(raw, first), "rb") as fin, \
                open(os.path.join(tiny + ".tmp", first), "wb") as fout:
            fout.writelines(line for _, line in zip(range(200), fin, strict=False))
        os.replace(tiny + ".tmp", tiny)

    print(f"uptime load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    for label, src in ((f"{args.docs} documents, {mb:.0f} MB in {args.files} files", raw),
                       ("fixed cost: 200 documents in 1 file", tiny)):
        for name, path in scripts.items():  # untimed: bytecode written, files in the page cache
            out = os.path.join(args.workdir, f"out_{name.split()[0]}")
            shutil.rmtree(out, ignore_errors=True)
            time_process([sys.executable, path, src, out], envs.get(name))
            shutil.rmtree(out, ignore_errors=True)
        times: dict[str, list[float]] = {n: [] for n in scripts}
        cpus: dict[str, list[float]] = {n: [] for n in scripts}
        peaks: dict[str, list[int]] = {n: [] for n in scripts}
        for _ in range(args.repeat):  # alternating: one run of each per round
            for name, path in scripts.items():
                out = os.path.join(args.workdir, f"out_{name.split()[0]}")
                shutil.rmtree(out, ignore_errors=True)
                wall, peak, cpu = time_process([sys.executable, path, src, out], envs.get(name))
                times[name].append(wall)
                cpus[name].append(cpu)
                peaks[name].append(peak)
                shutil.rmtree(out, ignore_errors=True)
        print(f"{label}; whole processes (interpreter start included), median of "
              f"{args.repeat}, alternating")
        median = {n: statistics.median(t) for n, t in times.items()}
        for name in scripts:
            print(f"  {name:22s} {median[name]:6.2f} s   CPU {statistics.median(cpus[name]):6.2f} s"
                  f"   peak RSS {max(peaks[name]) / 2**20:6.0f} MB"
                  f"   runs {', '.join(f'{t:.2f}' for t in times[name])}")
        for name in scripts:
            if name != "curator":
                print(f"  ratio {name} / curator: {median[name] / median['curator']:.2f}x")
    print(f"import curator_text: {import_time(max(args.repeat, 5)):.3f} s")
    if baseline_env:
        print(f"import curator_text (baseline): "
              f"{import_time(max(args.repeat, 5), baseline_env):.3f} s")
    print(f"uptime load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
