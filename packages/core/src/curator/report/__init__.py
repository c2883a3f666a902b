"""Run reports: the versioned JSON report of a run and its offline HTML page (see
``docs/run-report.md``). Names are imported on first use."""

from __future__ import annotations

from curator._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("group_size_bars", "render_html", "render_page", "svg_bars", "svg_hbars",
                     "svg_histogram", "svg_lines"), "curator.report.html"),
    **dict.fromkeys(("SCHEMA_VERSION", "build_report", "installed_plugins", "load_report",
                     "report_schema", "spec_of_stages", "stage_fields_markdown", "stage_schema",
                     "write_report"), "curator.report.run_report"),
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
