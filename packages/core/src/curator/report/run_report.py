"""The JSON run report: a versioned, machine-readable record of what a run did.

Built from the run's own bookkeeping (:class:`~curator.run.stats.RunStats` and the
rejected sink of the :class:`~curator.run.result.RunResult`); the schema is
``schema.json`` beside this module and is documented in ``docs/run-report.md``.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curator.run.result import RunResult
    from curator.stages.base import ProcessingStage

__all__ = ["SCHEMA_VERSION", "build_report", "write_report", "load_report", "report_schema",
           "spec_of_stages", "installed_plugins", "stage_schema", "stage_fields_markdown"]

SCHEMA_VERSION = 2
"""Bumped when a field changes meaning or is removed, or a required field is added (2: per-stage
``counters`` and ``peak_rss_mb``)."""

def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-safe data (other objects become their ``repr``)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if depth > 6:
        return repr(value)
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, Path):
        return str(value)
    return repr(value)


def _histograms(stats: Any, bins: int = 30) -> list[dict[str, Any]]:
    """The score histograms the stages published (e.g. every ScoreFilter's scores)."""
    out = []
    for s in stats.stages:
        for name, sketch in s.histograms.items():
            counts, edges = sketch.histogram(bins)
            out.append({"stage": s.name, "name": name, "count": sketch.count,
                        "non_finite": sketch.nan, "min": sketch.min if sketch.count else None,
                        "max": sketch.max if sketch.count else None, "counts": counts,
                        "edges": edges, "thresholds": list(sketch.thresholds)})
    return out


def spec_of_stages(name: str, description: str, stages: list[ProcessingStage]) -> dict[str, Any]:
    """A spec-like description of built stages (class, name and constructor parameters), for
    runs that did not start from a spec file."""
    out = []
    for s in stages:
        params = {p.name: _plain(getattr(s, p.name)) for p in type(s).parameters()
                  if p.name != "name" and hasattr(s, p.name)}
        out.append({"stage": type(s).__name__, "name": s.name, **params})
    return {"name": name, "description": description, "stages": out}


def installed_plugins() -> list[dict[str, Any]]:
    """Every plugin the registry loaded (name, distribution, version), broken ones flagged."""
    from curator.plugins import get_registry

    reg = get_registry()
    ok = [{"name": p.name, "distribution": p.distribution, "version": p.version,
           "module": p.module, "broken": False} for p in reg.plugins]
    bad = [{"name": b.name, "distribution": b.distribution, "version": b.version, "module": "",
            "broken": True} for b in reg.broken]
    return ok + bad


def build_report(result: RunResult, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """The run report of ``result`` as a dict (see ``docs/run-report.md``).

    Parameters:
        result: what ``Pipeline.run`` returned.
        spec: the spec the run was built from (default: ``result.spec``, which ``Pipeline.run``
            fills in from the built stages).
    """
    spec = spec if spec is not None else result.spec or {}
    stats = result.stats
    sink = result.rejected
    failed = result.failed
    stages = [s.report_entry() for s in stats.stages]
    started = _dt.datetime.fromtimestamp(stats.started_at, _dt.UTC)
    return {
        "schema_version": SCHEMA_VERSION,
        "pipeline": str(spec.get("name") or ""),
        "ok": result.ok,
        "executor": stats.executor,
        "started_at": started.isoformat(timespec="seconds"),
        "wall_s": round(stats.wall_s, 4),
        "peak_rss_mb": round(stats.peak_rss_mb, 1),
        "output_tasks": len(result),
        "rejected_dir": sink.path,
        "rejected_total": sink.total - len(failed),
        "failed_total": len(failed),
        "stages": stages,
        "histograms": _histograms(stats),
        "failed_tasks": [{"stage": f.stage, "task_id": f.task_id, "partition": f.partition,
                          "error": str(f).split(": ", 1)[-1], "entry": f.entry}
                         for f in failed],
        "spec": _plain(spec),
        "environment": {"python": platform.python_version(), "platform": platform.platform(),
                        "plugins": installed_plugins()},
    }


def stage_schema() -> dict[str, Any]:
    """The JSON Schema of one ``stages[]`` entry, generated from the per-stage statistics
    (:func:`curator.run.stats.report_fields`); ``schema.json`` holds a copy, checked by a test."""
    from curator.run.stats import report_fields

    found = report_fields()
    return {"type": "object", "required": [f.name for f in found if not f.optional],
            "properties": {f.name: f.schema for f in found}}


def stage_fields_markdown() -> str:
    """The ``stages[]`` fields as the Markdown table of ``docs/run-report.md`` (checked by a
    test)."""
    from curator.run.stats import report_fields

    rows = ["| field | meaning |", "|---|---|"]
    rows += [f"| `{f.name}` | {f.doc}{' (optional: older reports lack it)' if f.optional else ''} |"
             for f in report_fields()]
    return "\n".join(rows)


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) every report validates against."""
    from importlib import resources

    text = resources.files("curator.report").joinpath("schema.json").read_text("utf-8")
    return json.loads(text)


def write_report(result: RunResult | dict[str, Any], path: str | Path,
                 spec: dict[str, Any] | None = None) -> Path:
    """Write the report of ``result`` (a run result, or a report dict) to ``path``: JSON for
    ``.json``, the offline HTML page for ``.html``/``.htm``; returns the path."""
    from curator.report.html import render_html

    path = Path(path)
    kind = path.suffix.lower()
    if kind not in (".json", ".html", ".htm"):
        raise ValueError(f"report {str(path)!r}: unsupported file type {kind!r}; use a .json "
                         f"or .html path")
    data = result if isinstance(result, dict) else build_report(result, spec)
    text = (json.dumps(data, indent=2, ensure_ascii=False) + "\n" if kind == ".json"
            else render_html(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, "utf-8")
    tmp.replace(path)
    return path


def load_report(path: str | Path) -> dict[str, Any]:
    """Read a report written by :func:`write_report`; refuses a newer schema version."""
    data = json.loads(Path(path).read_text("utf-8"))
    version = data.get("schema_version") if isinstance(data, dict) else None
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ValueError(f"{path}: not a run report this Curator can read (schema_version "
                         f"{version!r}, supported up to {SCHEMA_VERSION})")
    return data
