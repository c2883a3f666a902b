"""Actor pools that change size by measured throughput (``RayActorPoolExecutor``, issue 23).

A two-group pipeline whose second group is the bottleneck (``--fast-ms`` and ``--slow-ms`` per
task) runs on a local Ray cluster of ``--cpus`` logical CPUs, each group asking one CPU per
actor: first with fixed pools (the planned even split of the CPUs), then with
``autoscale=True`` (the ``PoolController`` moves actors to the bottleneck). The stages wait
instead of computing, as I/O- or GPU-bound stages do, so the figures show the scheduling and
not this machine's core count. The ceiling is the best split of the CPUs between the groups,
``cpus / (fast + slow)`` tasks per second (computed, not measured).

    uv run python benchmarks/autoscale.py [--tasks 2000] [--fast-ms 5] [--slow-ms 20] [--cpus 4]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass, field

from _rss import PeakRSS
from curator import Pipeline, ProcessingStage, Resources, Task


@dataclass
class Wait(ProcessingStage):
    """Waits ``ms`` per task and stamps the actor's process id."""

    ms: float = 5.0
    name: str = "Wait"
    resources: Resources = field(default_factory=lambda: Resources(cpus=1.0))

    def setup(self, worker_metadata=None) -> None:
        self.pid = os.getpid()

    def process(self, task: Task) -> Task:
        time.sleep(self.ms / 1000)
        return task.derive({**task.data, self.name: self.pid})


def run(args: argparse.Namespace, **config) -> dict:
    from curator.executors.ray_actor_pool import RayActorPoolExecutor

    stages = [Wait(ms=args.fast_ms, name="Fast"), Wait(ms=args.slow_ms, name="Slow")]
    tasks = [Task(f"t{i:05d}", "autoscale", {"n": i}) for i in range(args.tasks)]
    executor = RayActorPoolExecutor({"fuse_stages": False, "scale_interval_s": 0.5, **config})
    with PeakRSS() as rss:
        start = time.perf_counter()
        result = Pipeline("autoscale", stages=stages).run(executor, initial_tasks=tasks,
                                                          summary=False)
        wall = time.perf_counter() - start
    assert result.ok and sorted(t.data["n"] for t in result) == list(range(args.tasks))
    return {"config": config or "fixed", "wall_s": round(wall, 2),
            "tasks_per_s": round(args.tasks / wall, 1), "peak_rss_mb": round(rss.peak / 2**20),
            "actors": {s.name: {"most": s.workers, "added": s.workers_added,
                                "retired": s.workers_retired,
                                "processes": len({t.data[s.name] for t in result})}
                       for s in result.stats.stages}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--fast-ms", type=float, default=5.0)
    ap.add_argument("--slow-ms", type=float, default=20.0)
    ap.add_argument("--cpus", type=int, default=4, help="logical CPUs of the Ray cluster")
    args = ap.parse_args()

    from curator.cluster.ray_client import RayClient

    ceiling = args.cpus / ((args.fast_ms + args.slow_ms) / 1000)
    print(f"{args.tasks} tasks, fast {args.fast_ms} ms, slow {args.slow_ms} ms, {args.cpus} "
          f"CPUs: ceiling (best split) {ceiling:.1f} tasks/s", flush=True)
    with RayClient(num_cpus=args.cpus, object_store_memory=256 * 2**20):
        run(args)  # actors' first start-up (imports) not counted
        for config in ({}, {"autoscale": True}):
            row = run(args, **config)
            row["of_ceiling"] = round(row["tasks_per_s"] / ceiling, 2)
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
