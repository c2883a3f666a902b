"""The JSON run report (issue 20): built from the run's statistics, valid against its schema,
written by ``Pipeline.run(report=...)`` and ``curator run --report``."""

from __future__ import annotations

import json

import jsonschema
import pytest
from curator import Pipeline
from curator.report import SCHEMA_VERSION, build_report, load_report, report_schema

from tests.core.report.stages import DropByReason, FailOn, Parts


def _pipeline(victim: str = "part002") -> Pipeline:
    return Pipeline("report-test", "numbers in, evens out",
                    [Parts(n=5), DropByReason(), FailOn(victim=victim)])


def test_report_counts_per_stage_reasons_and_failures(tmp_path):
    path = tmp_path / "out" / "run.json"
    result = _pipeline().run(rejected_dir=str(tmp_path / "rej"), max_retries=0,
                             summary=False, progress=False, report=str(path),
                             raise_on_failure=False)
    data = json.loads(path.read_text())
    jsonschema.validate(data, report_schema())
    assert data == json.loads(json.dumps(result.report()))
    assert data["schema_version"] == SCHEMA_VERSION and data["ok"] is False
    stages = {s["name"]: s for s in data["stages"]}
    # 5 partitions of 4: 0..19; odd: 10, multiples of 10 that are even: 0, 10 -> 2
    assert stages["Parts"]["items_out"] == 20
    drop = stages["DropByReason"]
    assert (drop["items_in"], drop["items_out"]) == (20, 8)
    assert drop["rejected_by_reason"] == {"odd": 10, "round": 2} and drop["rejected"] == 12
    fail = stages["FailOn"]
    assert fail["failed_tasks"] == 1 and fail["tasks_in"] == 5 and fail["tasks_out"] == 4
    assert data["failed_total"] == 1 and data["rejected_total"] == 12
    (failed,) = data["failed_tasks"]
    assert failed["stage"] == "FailOn" and failed["task_id"] == "part002"
    assert "disk on fire" in failed["error"] and failed["entry"].endswith(".failed.jsonl")
    (hist,) = data["histograms"]  # DropByReason published the numbers it saw (0..19)
    assert (hist["stage"], hist["name"], hist["count"]) == ("DropByReason", "value", 20)
    assert sum(hist["counts"]) == 20 and (hist["min"], hist["max"]) == (0, 19)
    assert hist["thresholds"] == [10.0] and len(hist["edges"]) == len(hist["counts"]) + 1
    assert data["output_tasks"] == 4 and data["rejected_dir"] == str(tmp_path / "rej")
    assert data["peak_rss_mb"] > 0 and data["wall_s"] > 0
    # the spec of a Python run: each stage's class, name and parameters
    assert data["spec"]["stages"][2] == {"stage": "FailOn", "name": "FailOn",
                                         "victim": "part002"}
    plugins = {p["name"]: p for p in data["environment"]["plugins"]}
    assert plugins["core"]["distribution"] == "curator-core" and plugins["core"]["version"]


def test_ok_run_report_and_schema_rejects_a_broken_report(tmp_path):
    result = _pipeline(victim="none").run(summary=False, progress=False)
    data = result.report()
    assert data["ok"] is True and data["failed_tasks"] == [] and data["rejected_dir"] is None
    assert data["histograms"][0]["count"] == 20
    jsonschema.validate(data, report_schema())
    del data["stages"][0]["items_in"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, report_schema())


def test_write_report_refuses_unknown_suffix_and_newer_schema(tmp_path):
    result = _pipeline(victim="none").run(summary=False, progress=False)
    from curator.report import write_report

    with pytest.raises(ValueError, match=r"\.txt.*\.html"):
        write_report(result, tmp_path / "run.txt")
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({**build_report(result), "schema_version": SCHEMA_VERSION + 1}))
    with pytest.raises(ValueError, match="schema_version"):
        load_report(newer)
    assert load_report(write_report(result, tmp_path / "ok.json"))["pipeline"] == "report-test"


def test_score_sketch_merges_exactly_and_bins_close_to_numpy():
    import numpy as np
    from curator.run.stats import ScoreSketch

    rng = np.random.default_rng(0)
    a, b = rng.normal(3, 2, 5000), rng.normal(-1, 0.5, 3000)
    merged = ScoreSketch([1.0]).add(a).merge(ScoreSketch([2.0]).add(np.r_[b, np.nan, 0.0]))
    assert merged.count == 8001 and merged.nan == 1 and merged.thresholds == [1.0, 2.0]
    counts, edges = merged.histogram(bins=20)
    exact, _ = np.histogram(np.r_[a, b, 0.0], bins=np.asarray(edges))
    assert sum(counts) == 8001
    # log buckets are 2% wide: a value moves at most to a neighbouring bin
    assert np.abs(np.asarray(counts) - exact).sum() < 0.05 * 8001
