"""Stage counters (``publish_counts``) and per-stage peak memory (issue 20): summed / maxed over
workers on every executor, shown in the summary table and the JSON and HTML reports."""

from __future__ import annotations

import jsonschema
import pytest
from curator import LocalExecutor, Pipeline
from curator.report import render_html, report_schema

from tests.core.report.stages import Cheap, CountParity, Hog, Parts

# Parts(n=5): 0..19 -> 10 even, 10 odd
PARITY = {"even": 10, "odd": 10}


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_counters_sum_over_workers_and_retries_do_not_count_twice(mode):
    stage = CountParity(fail_first=True).with_(worker_mode=mode)
    result = Pipeline("counters", stages=[Parts(n=5), stage]).run(
        LocalExecutor(num_workers=2), max_retries=1, summary=False, progress=False)
    assert result.ok
    s = result.stats.stages[1]
    assert s.retries == 5 and s.counters == {"parity": PARITY}
    assert "CountParity parity: even=10, odd=10" in result.summary()
    report = result.report()
    jsonschema.validate(report, report_schema())
    assert report["stages"][1]["counters"] == {"parity": PARITY}
    assert report["stages"][0]["counters"] == {}
    page = render_html(report)
    assert "<h2>Stage counters</h2>" in page and "<h3>CountParity: parity</h3>" in page
    assert "<td>even</td><td>10</td>" in page


def test_a_failed_task_publishes_nothing():
    stage = CountParity(fail_first=True)
    result = Pipeline("counters", stages=[Parts(n=2), stage]).run(
        max_retries=0, summary=False, progress=False, raise_on_failure=False)
    assert not result.ok and len(result.failed) == 2
    assert result.stats.stages[1].counters == {}


def test_peak_memory_per_stage_in_local_worker_processes():
    # unfused, so each stage has its own worker process (fused, they would share one peak)
    result = Pipeline("memory", stages=[Parts(n=2), Hog(mb=256), Cheap()]).run(
        LocalExecutor(num_workers=1, fuse_stages=False), summary=False, progress=False)
    assert result.ok
    source, hog, cheap = result.stats.stages
    assert hog.peak_rss_mb >= 256, hog
    assert 0 < cheap.peak_rss_mb < hog.peak_rss_mb - 150, (cheap, hog)
    assert source.peak_rss_mb > 0  # the source ran in a thread: the driver's peak
    report = result.report()
    assert report["stages"][1]["peak_rss_mb"] >= 256
    assert report["peak_rss_mb"] >= report["stages"][1]["peak_rss_mb"] - 1  # run level: children
    assert "peak MiB" in result.summary()


@pytest.mark.ray
@pytest.mark.parametrize("kind", ["ray_data", "ray_actor_pool"])
def test_counters_and_peak_memory_on_ray(ray_cluster, kind):
    from curator.executors.ray_actor_pool import RayActorPoolExecutor
    from curator.executors.ray_data import RayDataExecutor

    cls = RayDataExecutor if kind == "ray_data" else RayActorPoolExecutor
    executor = cls(fuse_stages=False, num_workers=1)
    result = Pipeline("ray-memory", stages=[Parts(n=4), CountParity(fail_first=True),
                                            Hog(mb=256), Cheap()]).run(
        executor, max_retries=1, summary=False, progress=False)
    assert result.ok
    _, count, hog, cheap = result.stats.stages
    assert count.counters == {"parity": {"even": 8, "odd": 8}} and count.retries == 4
    assert hog.peak_rss_mb >= 256, hog
    assert 0 < cheap.peak_rss_mb < hog.peak_rss_mb - 150, (cheap, hog)
    jsonschema.validate(result.report(), report_schema())
