"""Executor benchmark: per-task overhead and throughput of a CPU-bound stage, 1 vs 2 workers,
with peak memory (RSS summed over this process and all its children, Ray's included) and the
driver's own memory growth per task (this process only: what the driver holds per task).

    uv run python benchmarks/executors.py [--tasks 40] [--items 200] [--rounds 300]
    # driver cost per task for many tiny partitions, outputs collected vs not (issue 23):
    uv run python benchmarks/executors.py --tasks 3000 --noop-only --workers 2 --collect both
    # driver cost as the task count grows 10x (marginal ms and KB per task between the sizes):
    uv run python benchmarks/executors.py --scale 10000,100000 --workers 2 --collect off
    # the same on Xenna (one worker on 2 cores: Xenna keeps 95% of the CPUs, rounded down)
    uv run python benchmarks/executors.py --scale 1000,10000 --workers 1 --collect off --executors xenna
    # the partitions listed by a lazy source, run window by window (source_window; 0: one window):
    uv run python benchmarks/executors.py --scale 10000,100000 --workers 2 --collect off --source-window 10000
    # streaming: time to the first output of a 3-group pipeline (Hash, Hash, Stamp; unfused):
    uv run python benchmarks/executors.py --first-output --executors ray_data,ray_actor_pool

Ray runs share one local cluster (RayClient, all cores) started before the first Ray run. With a
CUDA GPU, ``--gpu-demo`` also shows ``Resources(gpus=0.25)`` packing four actors on one GPU.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
from dataclasses import dataclass

from _rss import PeakRSS
from curator import LocalExecutor, Pipeline, ProcessingStage, Resources, Task


@dataclass
class Hash(ProcessingStage):
    """CPU-bound: ``rounds`` chained sha256 per item."""

    rounds: int = 300
    name: str = "Hash"
    worker_mode: str = "process"

    def process(self, task: Task) -> Task:
        out = []
        for x in task.data:
            h = str(x).encode()
            for _ in range(self.rounds):
                h = hashlib.sha256(h).digest()
            out.append(h[0])
        return task.derive(out)


@dataclass
class Noop(ProcessingStage):
    """Does no work (a new, tiny output task per input): its wall time per task is the
    executor's overhead, and what the driver keeps of the outputs shows in its memory."""

    name: str = "Noop"

    def process(self, task: Task) -> Task:
        return task.derive(list(task.data))


@dataclass
class Listing(ProcessingStage):
    """A source that lists ``n`` tiny partitions lazily (``process_stream``, chunks of 1024), as
    ``FilePartitioningStage`` does for files: the driver holds only what it has not yet run."""

    n: int = 1000
    name: str = "Listing"

    def process(self, task: Task) -> list[Task]:
        return [t for chunk in self.process_stream(task) for t in chunk]

    def process_stream(self, task: Task):
        for start in range(0, self.n, 1024):
            yield tasks(min(1024, self.n - start), 1, start)


@dataclass
class Stamp(ProcessingStage):
    """The last stage of the streaming benchmark: notes when each output was made."""

    name: str = "Stamp"

    def process(self, task: Task) -> Task:
        return task.derive({"t": time.time()})


def first_output(kinds: list[str], n: int, items: int, rounds: int) -> None:
    """Hash -> Hash -> Stamp, one group each (``fuse_stages=False``): wall time and the time
    until the first output was made (a streaming executor makes it long before the end)."""
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    classes = {"ray_data": RayDataExecutor, "ray_actor_pool": RayActorPoolExecutor}
    print(f"{'executor':<16}{'tasks':>7}{'wall s':>9}{'first output s':>16}{'first/wall':>12}")
    for kind in kinds:
        stages = [Hash(rounds=rounds), Hash(rounds=rounds, name="Hash2"), Stamp()]
        start = time.time()
        result = Pipeline("stream", stages=stages).run(
            classes[kind](fuse_stages=False), initial_tasks=tasks(n, items), summary=False)
        wall = time.time() - start
        assert result.ok and len(result) == n
        first = min(t.data["t"] for t in result) - start
        print(f"{kind:<16}{n:>7}{wall:>9.2f}{first:>16.2f}{first / wall:>12.2f}", flush=True)


class DriverRSS(PeakRSS):
    """Peak RSS of this process alone (the driver), sampled like :class:`PeakRSS`."""

    def sample(self) -> int:
        import psutil

        return psutil.Process().memory_info().rss


def make(kind: str, workers: int, stage: str, collect: bool = True, window: int = 0):
    if kind == "local":
        return LocalExecutor(num_workers=workers, collect_outputs=collect)
    extra = {"source_window": window} if window else {}
    if kind == "xenna":
        from curator.executors.xenna import XennaExecutor

        return XennaExecutor(num_workers={stage: workers}, collect_outputs=collect, **extra)
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    cls = RayDataExecutor if kind == "ray_data" else RayActorPoolExecutor
    return cls(num_workers={stage: workers}, collect_outputs=collect, **extra)


def tasks(n: int, items: int, first: int = 0) -> list[Task]:
    return [Task(f"t{i:07d}", "bench", list(range(i * items, (i + 1) * items)))
            for i in range(first, first + n)]


def run_one(kind: str, workers: int, stage: ProcessingStage, n: int, items: int,
            collect: bool = True, window: int | None = None) -> dict:
    """``stage`` over ``n`` partitions: given as a list (``window=None``), or listed by a lazy
    source (``Listing``) and run ``window`` at a time (0: the executor's default)."""
    import gc

    gc.collect()
    initial = tasks(n, items) if window is None else None
    stages = [stage] if window is None else [Listing(n), stage]
    with PeakRSS() as mem, DriverRSS() as driver:
        base = driver.peak
        start = time.perf_counter()
        result = Pipeline("bench", stages=stages).run(
            make(kind, workers, stage.name, collect, window or 0), initial_tasks=initial,
            summary=False)
        wall = time.perf_counter() - start
    assert result.num_outputs == n and len(result) == (n if collect else 0)
    return {"wall": wall, "per_task_ms": 1000 * wall / n, "items_s": n * items / wall,
            "peak_mb": mem.peak / 2**20, "driver_kb_task": (driver.peak - base) / 1024 / n}


def scale(kinds: list[str], workers: int, small: int, big: int, collect: bool,
          window: int | None = None) -> None:
    """Noop at ``small`` and ``big`` tasks: what each task beyond ``small`` costs the driver
    (the fixed start-up of an engine drops out of the difference); ``window``: see
    :func:`run_one`."""
    for kind in kinds:
        a = run_one(kind, workers, Noop(), small, 1, collect, window)
        b = run_one(kind, workers, Noop(), big, 1, collect, window)
        ms = 1000 * (b["wall"] - a["wall"]) / (big - small)
        kb = (b["driver_kb_task"] * big - a["driver_kb_task"] * small) / (big - small)
        print(f"{kind:<16}{'Noop':<6}{'on' if collect else 'off':>8}{workers:>8}"
              f"  {small}: {a['per_task_ms']:.2f} ms/task {a['driver_kb_task']:.2f} KB/task; "
              f"{big}: {b['per_task_ms']:.2f} ms/task {b['driver_kb_task']:.2f} KB/task; "
              f"marginal {ms:.2f} ms/task {kb:.2f} KB/task; peak RSS {b['peak_mb']:.0f} MB",
              flush=True)


def gpu_demo() -> None:
    """Four actors of a Resources(gpus=0.25) stage on one GPU (needs CUDA; not run without)."""
    import ray

    @dataclass
    class WhereAmI(ProcessingStage):
        name: str = "WhereAmI"
        resources: Resources = Resources(cpus=0.25, gpus=0.25)

        def setup(self, worker_metadata=None) -> None:
            self.gpu_ids = ray.get_gpu_ids()

        def process(self, task: Task) -> Task:
            time.sleep(1.0)
            return task.derive({"gpu": self.gpu_ids, "pid": os.getpid()})

    from curator.executors.ray_actor_pool import RayActorPoolExecutor

    out = Pipeline("gpu", stages=[WhereAmI()]).run(
        RayActorPoolExecutor(num_workers=4), initial_tasks=tasks(8, 1), summary=False)
    pids = {t.data["pid"] for t in out}
    gpus = {tuple(t.data["gpu"]) for t in out}
    print(f"gpu demo: {len(pids)} actors on GPU(s) {sorted(gpus)} (Resources(gpus=0.25))")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--items", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--executors", default="local,ray_data,ray_actor_pool")
    ap.add_argument("--workers", default="1,2", help="worker counts to run, e.g. 2")
    ap.add_argument("--noop-only", action="store_true", help="only the overhead (Noop) stage")
    ap.add_argument("--collect", choices=["on", "off", "both"], default="on",
                    help="collect_outputs on the executors (both: one row each)")
    ap.add_argument("--gpu-demo", action="store_true")
    ap.add_argument("--scale", default="",
                    help="two task counts, e.g. 10000,100000: the Noop stage at both, and the "
                         "marginal driver time and memory per task between them")
    ap.add_argument("--source-window", type=int, default=None,
                    help="with --scale: partitions listed by a lazy source and run this many "
                         "at a time (source_window; 0: the executor's default), not a list")
    ap.add_argument("--first-output", action="store_true",
                    help="streaming: time to the first output of a 3-group pipeline (Ray)")
    args = ap.parse_args()
    os.environ.setdefault("CURATOR_SUMMARY", "0")
    kinds = args.executors.split(",")
    client = None
    if any(k.startswith("ray") for k in kinds):
        from curator.cluster.ray_client import RayClient

        t0 = time.perf_counter()
        client = RayClient(num_cpus=os.cpu_count(), object_store_memory=300 * 2**20).start()
        print(f"ray cluster started in {time.perf_counter() - t0:.1f}s")
    if not args.first_output:
        print(f"{'executor':<16}{'stage':<6}{'collect':>8}{'workers':>8}{'wall s':>9}{'ms/task':>9}"
              f"{'items/s':>10}{'peak RSS MB':>13}{'driver KB/task':>16}")
    stages = [(Noop(), 1)] + ([] if args.noop_only else [(Hash(rounds=args.rounds), args.items)])
    collects = {"on": [True], "off": [False], "both": [True, False]}[args.collect]
    try:
        if args.first_output:
            first_output([k for k in kinds if k.startswith("ray")], args.tasks, args.items,
                         args.rounds)
            return
        if args.scale:
            scale(kinds, int(args.workers.split(",")[-1]), *map(int, args.scale.split(",")),
                  collect=args.collect == "on", window=args.source_window)
            return
        for kind in kinds:
            for workers in map(int, args.workers.split(",")):
                for (stage, items), collect in ((s, c) for s in stages for c in collects):
                    r = run_one(kind, workers, stage, args.tasks, items, collect)
                    print(f"{kind:<16}{stage.name:<6}{'on' if collect else 'off':>8}{workers:>8}"
                          f"{r['wall']:>9.2f}{r['per_task_ms']:>9.1f}{r['items_s']:>10.0f}"
                          f"{r['peak_mb']:>13.0f}{r['driver_kb_task']:>16.2f}", flush=True)
        if args.gpu_demo:
            from curator.executors.local import available_gpus

            if available_gpus():
                gpu_demo()
            else:
                print("gpu demo skipped: no CUDA GPU on this machine")
    finally:
        if client is not None:
            client.stop()


if __name__ == "__main__":
    main()
