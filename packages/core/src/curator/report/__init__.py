"""Run reports: the versioned JSON report of a run and its offline HTML page (see
``docs/run-report.md``)."""

from curator.report.html import (
    group_size_bars,
    render_html,
    render_page,
    svg_bars,
    svg_hbars,
    svg_histogram,
    svg_lines,
)
from curator.report.run_report import (
    SCHEMA_VERSION,
    build_report,
    installed_plugins,
    load_report,
    report_schema,
    spec_of_stages,
    stage_fields_markdown,
    stage_schema,
    write_report,
)

__all__ = ["SCHEMA_VERSION", "build_report", "write_report", "load_report", "report_schema",
           "spec_of_stages", "installed_plugins", "stage_schema", "stage_fields_markdown",
           "render_html", "render_page", "svg_histogram", "svg_hbars", "svg_lines", "svg_bars",
           "group_size_bars"]
