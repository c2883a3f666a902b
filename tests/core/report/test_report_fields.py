"""One table, the per-stage figures of ``StageStats``, generates the report's ``stages[]``
entries, their JSON Schema and the table in ``docs/run-report.md`` (issue 35): these tests hold
the copies together, so a new figure is one field and cannot drift again."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import jsonschema
import pytest
from curator.report import report_schema, stage_fields_markdown, stage_schema
from curator.run.stats import StageStats, report_fields

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "run-report.md"


def test_every_stage_stats_field_is_in_the_report_or_says_where_it_goes():
    reported = {f.name for f in report_fields()}
    for f in fields(StageStats):
        assert "doc" in f.metadata, (
            f"StageStats.{f.name} has no report entry: declare it with _figure(doc, ...) in "
            f"curator/run/stats.py (report=False with a doc saying where it goes instead)")
        assert (f.name in reported) == f.metadata["report"], f.name
    # the drift this table fixed: the autoscaling figures were missing from report and schema
    assert {"workers_added", "workers_retired"} <= reported


def test_shipped_schema_holds_the_generated_stage_schema():
    shipped = report_schema()["properties"]["stages"]["items"]
    assert shipped == stage_schema(), (
        "packages/core/src/curator/report/schema.json is out of date: set "
        "properties.stages.items to curator.report.stage_schema()")


def test_docs_table_is_the_generated_one():
    text = DOC.read_text("utf-8")
    found = re.search(r"<!-- stage-fields:[^\n]*-->\n(.*?)\n<!-- /stage-fields -->", text, re.S)
    assert found, "docs/run-report.md lost its stage-fields markers"
    assert found.group(1) == stage_fields_markdown(), (
        "regenerate the stages[] table in docs/run-report.md from "
        "curator.report.stage_fields_markdown()")


def test_entry_has_every_field_valid_and_a_new_figure_reaches_the_report():
    stage = StageStats("grow", workers=2, items_in=30, busy_s=1.5, workers_added=3,
                       workers_retired=1, rejected_by_reason={"odd": 2},
                       counters={"parity": {"even": 4}}, timeline={0: 10.0, 2: 20.0})
    entry = stage.report_entry()
    assert list(entry) == [f.name for f in report_fields()]
    assert (entry["workers_added"], entry["workers_retired"]) == (3, 1)
    assert entry["throughput_items_per_s"] == 20.0
    assert entry["timeline"] == [[0, 10.0], [1, 0.0], [2, 20.0]]
    jsonschema.validate(json.loads(json.dumps(entry)), stage_schema())
    # optional fields are what older reports lack; required ones may not be missing
    old = {k: v for k, v in entry.items() if k not in ("workers_added", "workers_retired")}
    jsonschema.validate(old, stage_schema())
    del old["items_in"]
    with pytest.raises(jsonschema.ValidationError, match="items_in"):
        jsonschema.validate(old, stage_schema())


def test_html_overview_shows_how_a_pool_grew_and_shrank():
    from curator import Pipeline
    from curator.report import render_html

    from tests.core.report.stages import DropByReason, Parts

    result = Pipeline("grow", "", [Parts(n=2), DropByReason()]).run(summary=False,
                                                                   progress=False)
    result.stats.stages[1].workers_added, result.stats.stages[1].workers_retired = 3, 1
    page = render_html(result.report())
    assert f"<td>{result.stats.stages[1].workers} (+3 −1)</td>" in page
    assert f"<td>{result.stats.stages[0].workers}</td>" in page  # a fixed pool: just the count
