"""Local executor benchmark: per-task overhead and peak memory for N and 10×N input tasks.

Usage::

    uv run python benchmarks/executor.py [--n 2000] [--stages 4] [--payload-kb 64]

Each measurement runs in a fresh subprocess (so peaks are independent); peak RSS is the sum over
the process tree (the run and its worker processes), sampled every 10 ms in a thread with psutil.

The pipeline: a source stage emits the tasks (tiny: an index), a stage inflates each to a payload
of ``--payload-kb`` KiB, ``--stages`` no-op stages pass it on, and a last stage drops it (returns
None, so nothing accumulates in the result). With bounded queues only a constant number of
payloads is alive at once, so peak RSS must not grow with the input: the issue's target is
peak(10N) / peak(N) <= 1.5. ``tasks/s`` is input tasks through the whole chain per wall second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

CHILD = "--child"


def _child(n: int, stages: int, payload_kb: int, mode: str, keep: bool) -> dict:
    import psutil
    from curator import LocalExecutor, Pipeline, ProcessingStage, Task

    class Source(ProcessingStage):
        def num_workers(self) -> int:
            return 1

        @property
        def is_source(self) -> bool:
            return True

        def process(self, task):
            return [Task(f"t{i}", "bench", data=i) for i in range(n)]

    class Inflate(ProcessingStage):
        def num_workers(self) -> int:
            return 1

        def process(self, task):
            return task.derive(bytes(payload_kb * 1024))

    class NoOp(ProcessingStage):
        def process(self, task):
            return task

    class Drop(ProcessingStage):
        def num_workers(self) -> int:
            return 1

        def process(self, task):
            return task if keep else None

    chain = [Source(), Inflate().with_(worker_mode=mode)]
    chain += [NoOp().with_(name=f"NoOp{i}", num_workers=1, worker_mode=mode)
              for i in range(stages)]
    chain.append(Drop())

    me = psutil.Process()
    peak = [0]
    stop = threading.Event()

    def tree_rss() -> int:
        total = 0
        for p in [me, *me.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], tree_rss())
            stop.wait(0.01)

    base = tree_rss()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    result = Pipeline("bench", stages=chain).run(LocalExecutor(), summary=False)
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    return {"n": n, "mode": mode, "wall_s": wall, "tasks_per_s": n / wall,
            "peak_rss_mb": peak[0] / 2**20, "base_rss_mb": base / 2**20, "outputs": len(result)}


def _measure(n: int, args: argparse.Namespace, mode: str) -> dict:
    cmd = [sys.executable, __file__, CHILD, str(n), str(args.stages), str(args.payload_kb), mode,
           "1" if args.keep else "0"]
    env = {**os.environ, "CURATOR_SUMMARY": "0", "CURATOR_PROGRESS": "0"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="input tasks of the small run")
    parser.add_argument("--stages", type=int, default=4, help="no-op stages in the chain")
    parser.add_argument("--payload-kb", type=int, default=64, help="payload per task (KiB)")
    parser.add_argument("--modes", default="thread,process", help="worker modes to measure")
    parser.add_argument("--keep", action="store_true",
                        help="the last stage returns its tasks (the result holds them all)")
    args = parser.parse_args()
    rows = []
    for mode in args.modes.split(","):
        for n in (args.n, 10 * args.n):
            rows.append(_measure(n, args, mode))
    print(f"{'mode':<8} {'tasks':>7} {'wall s':>8} {'tasks/s':>9} {'base MB':>8} "
          f"{'peak MB':>8}")
    for r in rows:
        print(f"{r['mode']:<8} {r['n']:>7} {r['wall_s']:>8.2f} {r['tasks_per_s']:>9.0f} "
              f"{r['base_rss_mb']:>8.1f} {r['peak_rss_mb']:>8.1f}")
    ok = True
    for mode in args.modes.split(","):
        small, big = [r for r in rows if r["mode"] == mode]
        ratio = big["peak_rss_mb"] / small["peak_rss_mb"]
        ok &= ratio <= 1.5
        print(f"{mode}: peak({10 * args.n}) / peak({args.n}) = {ratio:.2f}  "
              f"({'OK' if ratio <= 1.5 else 'FAIL'}: target <= 1.5)")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == CHILD:
        n, stages, kb, mode, keep = sys.argv[2:7]
        print(json.dumps(_child(int(n), int(stages), int(kb), mode, keep == "1")))
    else:
        raise SystemExit(main())
