"""Ray runs export per-stage metrics through ``ray.util.metrics`` (issue 20), read back from the
node's Prometheus endpoint on the session cluster; score histograms come back from workers."""

from __future__ import annotations

import time
import urllib.request

import pytest
from curator import Pipeline
from curator.executors.ray_data import RayDataExecutor

from tests.core.report.stages import DropByReason, Parts


def _metric(body: str, name: str, pipeline: str, stage: str) -> float | None:
    for line in body.splitlines():
        if (line.startswith(f"ray_{name}{{") and f'pipeline="{pipeline}"' in line
                and f'stage="{stage}"' in line):
            return float(line.rsplit(" ", 1)[1])
    return None


@pytest.mark.ray
def test_ray_run_exports_stage_counters(ray_cluster):
    import ray

    result = Pipeline("metrics-test", stages=[Parts(n=3), DropByReason()]).run(
        RayDataExecutor(), summary=False, progress=False)
    (hist,) = result.report()["histograms"]  # scores published in Ray workers reach the report
    assert hist["count"] == 12 and sum(hist["counts"]) == 12
    port = next(n["MetricsExportPort"] for n in ray.nodes() if n["Alive"])
    url = f"http://127.0.0.1:{port}/metrics"
    # 3 partitions of 4 numbers (0..11): 6 odd + 0 and 10 rejected, 4 kept
    want = {("curator_stage_rejected_total", "DropByReason"): 8.0,
            ("curator_stage_items_in_total", "DropByReason"): 12.0,
            ("curator_stage_items_out_total", "DropByReason"): 4.0,
            ("curator_stage_tasks_out_total", "Parts"): 3.0}
    deadline = time.monotonic() + 90  # Ray pushes metrics to the agent every few seconds, and
    while True:                       # a scrape may see an earlier flush of the counters
        body = urllib.request.urlopen(url, timeout=10).read().decode()
        got = {k: _metric(body, k[0], "metrics-test", k[1]) for k in want}
        if got == want or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert got == want, "the stage counters did not reach Ray's Prometheus endpoint"
