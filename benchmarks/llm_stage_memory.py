"""Peak memory of a synthetic-data stage on N and 10x N records (issue 44: <= 1.2x).

The pipeline is what a user writes, with the plain calls and the defaults:
``JsonlReader(input_dir)`` -> ``WikipediaParaphrasingStage(client=AsyncOpenAIClient(base_url=...),
model_name=...)`` -> ``JsonlWriter(output_dir)``, run by ``Pipeline.run()`` (the local
executor). The server is an instant echo server (:class:`curator_llm.testing.FaultServer` in its
own process, keeping no per-prompt log), so the model's cost does not dominate and every record
is answered. Inputs are made once under ``--workdir``: JSONL files of 10,000 records each,
``--chars`` (default 1,000) characters of text per record (``--records`` small, 10x that
large). The echo server answers ~300 requests/s on 2 cores, so 100,000 records take ~6 min.

Each run is a fresh process; its peak is the summed RSS of that process and all its children
(the executor's workers), sampled every 50 ms; the echo server's RSS is reported apart (it is
the test's, not the stage's). Small and large alternate (the order flips each repeat),
``--repeat`` times; the medians and their ratio are printed (target <= 1.2), with the load
average. ``--cache`` gives the client a response cache directory (``cache_dir=``), which a
resumable run would use.

    uv run python benchmarks/llm_stage_memory.py [--records 20000] [--chars 1000] [--repeat 3]
        [--cache] [--workdir /tmp/curator-llm-memory] [--json FILE]

Measured (docs/synthetic-data.md): ``--records 10000 --chars 2000 --repeat 3`` (20 MB / 200 MB
of input): median peaks 248 MB / 252 MB, ratio 1.016.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("CURATOR_SUMMARY", "0")

MB = 2**20
PER_FILE = 10_000
WORDS = ("the a of and to in is was for on that with as by at from river city music "
         "history school science water light energy market family garden window season "
         "mountain village language number system people journey morning winter story").split()


def make_input(folder: str, records: int, chars: int) -> str:
    """JSONL files of ``PER_FILE`` records (``id``, ``text`` of ~``chars`` characters), made
    once."""
    done = os.path.join(folder, ".complete")
    if os.path.exists(done):
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    rng = random.Random(records * 7919 + chars)
    for start in range(0, records, PER_FILE):
        with open(os.path.join(folder, f"part-{start // PER_FILE:05d}.jsonl"), "w") as fh:
            for i in range(start, min(records, start + PER_FILE)):
                text = " ".join(rng.choices(WORDS, k=chars // 5))
                fh.write(json.dumps({"id": i, "text": text[:chars]}) + "\n")
    open(done, "w").close()
    return folder


def child(src: str, out: str, base_url: str, cache: str | None) -> None:
    """The user's pipeline (runs in a fresh process)."""
    from curator import Pipeline
    from curator_llm.client import AsyncOpenAIClient
    from curator_llm.synthetic import WikipediaParaphrasingStage
    from curator_text import JsonlReader, JsonlWriter

    client = AsyncOpenAIClient(base_url=base_url, api_key="local", cache_dir=cache)
    result = Pipeline("llm-memory", stages=[
        JsonlReader(src),
        WikipediaParaphrasingStage(client=client, model_name="fault-model"),
        JsonlWriter(out),
    ]).run()
    counts = result.stats.stages  # the stage's request accounting, summed over workers
    llm = next(s.counters["llm_requests"] for s in counts if "llm_requests" in s.counters)
    written = sum(1 for name in os.listdir(out) if name.endswith(".jsonl")
                  for _ in open(os.path.join(out, name)))
    print(json.dumps({"ok": result.ok, "written": written, "sent": llm["sent"],
                      "succeeded": llm["succeeded"], "rejected": sum(
                          result.rejected.counts.values())}))


def tree(pid: int) -> list[int]:
    import psutil

    try:
        p = psutil.Process(pid)
        return [pid, *(c.pid for c in p.children(recursive=True))]
    except psutil.Error:
        return []


def run_once(src: str, out: str, base_url: str, cache: str | None) -> dict:
    from _rss import PeakRSS

    shutil.rmtree(out, ignore_errors=True)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", src, out, base_url,
           cache or ""]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with PeakRSS(processes=lambda: tree(proc.pid)) as rss, \
            PeakRSS(processes=lambda: [proc.pid]) as driver:
        stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the pipeline on {src} failed:\n{stderr[-3000:]}")
    info = json.loads(stdout.strip().splitlines()[-1])
    return {**info, "peak_mb": round(rss.peak / MB), "driver_peak_mb": round(driver.peak / MB),
            "seconds": round(seconds, 1)}


def echo_server() -> tuple[subprocess.Popen, str]:
    code = ("import time; from curator_llm.testing import FaultServer\n"
            "s = FaultServer(keep_log=False).start(); print(s.base_url, flush=True)\n"
            "time.sleep(10**6)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default="/tmp/curator-llm-memory")
    ap.add_argument("--records", type=int, default=20_000, help="small run (large: 10x)")
    ap.add_argument("--chars", type=int, default=1000, help="text characters per record")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cache", action="store_true", help="the client keeps a response cache")
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args()
    import psutil

    sizes = {"small": args.records, "large": 10 * args.records}
    src = {k: make_input(os.path.join(args.workdir, f"in-{n}-{args.chars}"), n, args.chars)
           for k, n in sizes.items()}
    out = os.path.join(args.workdir, "out")
    cache = os.path.join(args.workdir, "cache") if args.cache else None
    server, base_url = echo_server()
    runs: dict[str, list[dict]] = {"small": [], "large": []}
    server_peak = 0
    try:
        for rep in range(args.repeat):
            for size in ("small", "large") if rep % 2 == 0 else ("large", "small"):
                r = run_once(src[size], out, base_url, cache)
                if not r["ok"] or r["written"] != sizes[size] or r["succeeded"] != sizes[size]:
                    raise SystemExit(f"{size}: not every record was answered and written: {r}")
                server_peak = max(server_peak, psutil.Process(server.pid).memory_info().rss)
                runs[size].append(r)
                print(f"repeat {rep} {size:>5} ({sizes[size]:>7} records): peak "
                      f"{r['peak_mb']:5d} MB (driver {r['driver_peak_mb']} MB)  {r['seconds']:6.1f} s  "
                      f"({sizes[size] / r['seconds']:.0f} records/s)  load "
                      f"{os.getloadavg()[0]:.2f}", flush=True)
    finally:
        server.kill()
        server.wait()
    med = {k: statistics.median(r["peak_mb"] for r in v) for k, v in runs.items()}
    ratio = med["large"] / med["small"]
    print(f"median peak: {sizes['small']} records {med['small']:.0f} MB, {sizes['large']} "
          f"records {med['large']:.0f} MB; ratio {ratio:.3f} (target <= 1.2); echo server "
          f"{server_peak / MB:.0f} MB (not counted)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"records": sizes, "chars": args.chars, "cache": args.cache, "median_peak_mb": med,
                       "ratio": round(ratio, 3), "runs": runs,
                       "echo_server_peak_mb": round(server_peak / MB)}, fh, indent=1)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] or None)
    else:
        main()
