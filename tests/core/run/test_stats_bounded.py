"""The run's statistics stay the same size however long the run: a stage's timeline keeps at
most MAX_TIMELINE_SLOTS slots, and the report's points add up to the same items."""

from __future__ import annotations

import time

import pytest
from curator.run.stats import MAX_TIMELINE_SLOTS, RunStats, timeline_points


def test_a_long_runs_timeline_stays_bounded_and_adds_up() -> None:
    stats = RunStats.for_stages(["A"])
    seconds = 5 * MAX_TIMELINE_SLOTS  # a batch of 10 items ending every second of a long run
    for t in range(seconds):
        stats.started_at = time.time() - (t + 0.5)  # this batch ends t + 0.5 s into the run
        stats.record(0, items_in=10, busy_s=0.0)
    timeline = stats.stages[0].timeline
    assert len(timeline) <= MAX_TIMELINE_SLOTS and timeline.step > 1
    assert sum(timeline.values()) == pytest.approx(10 * seconds)
    points = timeline_points(timeline)
    assert len(points) <= 120
    width = points[1][0] - points[0][0]
    assert sum(rate * width for _, rate in points) == pytest.approx(10 * seconds, rel=1e-3)
    assert all(rate == pytest.approx(10) for _, rate in points[:-1])  # 10 items/s throughout


def test_a_short_runs_timeline_is_per_second() -> None:
    stats = RunStats.for_stages(["A"])
    stats.started_at -= 10
    stats.record(0, tasks_in=1, items_in=400, busy_s=4.0)
    timeline = stats.stages[0].timeline
    assert timeline.step == 1 and set(timeline) <= set(range(5, 12))
    assert timeline_points({0: 10.0, 2: 20.0}) == [[0, 10.0], [1, 0.0], [2, 20.0]]
