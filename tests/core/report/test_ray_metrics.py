"""Ray runs export per-stage metrics through ``ray.util.metrics`` (issue 20): read back from the
node's Prometheus endpoint on the session cluster."""

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

    Pipeline("metrics-test", stages=[Parts(n=3), DropByReason()]).run(
        RayDataExecutor(), summary=False, progress=False)
    port = next(n["MetricsExportPort"] for n in ray.nodes() if n["Alive"])
    url = f"http://127.0.0.1:{port}/metrics"
    deadline = time.monotonic() + 90  # Ray pushes metrics to the agent every few seconds
    while True:
        body = urllib.request.urlopen(url, timeout=10).read().decode()
        rejected = _metric(body, "curator_stage_rejected_total", "metrics-test", "DropByReason")
        if rejected is not None or time.monotonic() > deadline:
            break
        time.sleep(1)
    # 3 partitions of 4 numbers (0..11): 6 odd + 0 and 10 rejected, 4 kept
    assert rejected == 8, "no curator_stage_rejected metric reached the Prometheus endpoint"
    assert _metric(body, "curator_stage_items_in_total", "metrics-test", "DropByReason") == 12
    assert _metric(body, "curator_stage_items_out_total", "metrics-test", "DropByReason") == 4
    assert _metric(body, "curator_stage_tasks_out_total", "metrics-test", "Parts") == 3
