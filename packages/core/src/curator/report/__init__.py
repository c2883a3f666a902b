"""Run reports: the versioned JSON report of a run and its offline HTML page (see
``docs/run-report.md``). Names are imported on first use."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("group_size_bars", "render_html", "render_page", "svg_bars", "svg_hbars",
                     "svg_histogram", "svg_lines"), "curator.report.html"),
    **dict.fromkeys(("SCHEMA_VERSION", "build_report", "installed_plugins", "load_report",
                     "report_schema", "spec_of_stages", "stage_fields_markdown", "stage_schema",
                     "write_report"), "curator.report.run_report"),
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'curator.report' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
