"""``curator analyze``: score documents with filters without dropping any, and print each
filter's score quantiles, histogram and the share its default threshold would keep."""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np
from curator.errors import ConfigError

__all__ = ["add_arguments", "run", "analyze", "render_html"]

DEFAULT_FILTERS = ["WordCountFilter", "NonAlphaNumericFilter", "UrlsFilter",
                   "RepeatingTopNGramsFilter", "BoilerPlateStringFilter", "MeanWordLengthFilter"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", help="JSONL or Parquet files, globs or directories")
    parser.add_argument("--filter", action="append", dest="filters", metavar="NAME[:JSON]",
                        help='a filter, optionally with JSON arguments, e.g. '
                             'WordCountFilter:\'{"min_words": 80}\' (repeatable)')
    parser.add_argument("--text-field", default="text")
    parser.add_argument("--bins", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print the statistics as JSON")
    parser.add_argument("--html", metavar="PATH", help="also write the histograms (thresholds "
                        "marked) as an HTML page that opens offline, drawn as in run reports")


def _make_filter(spec: str) -> Any:
    from curator_text import filters as F

    name, _, raw = spec.partition(":")
    classes = {c.__name__: c for c in F.HEURISTIC_FILTERS}
    if name not in classes:
        raise ConfigError(f"curator analyze: unknown filter {name!r}; choose from "
                          f"{sorted(classes)}")
    return classes[name](**(json.loads(raw) if raw else {}))


def analyze(paths: list[str], filters: list[Any], text_field: str = "text",
            bins: int = 10) -> dict[str, dict[str, Any]]:
    """Score every document with every filter; return per-filter statistics."""
    import pyarrow as pa
    from curator import Pipeline

    from curator_text.filters import Score
    from curator_text.io import JsonlReader, ParquetReader

    parquet = all(str(p).endswith(".parquet") for p in paths)
    reader = (ParquetReader if parquet else JsonlReader)(file_paths=list(paths),
                                                         fields=[text_field])
    stages = [reader] + [Score(filter_obj=f, text_field=text_field, score_field=f"score_{i}")
                         for i, f in enumerate(filters)]
    result = Pipeline("analyze", stages=stages).run(summary=False)
    out: dict[str, dict[str, Any]] = {}
    for i, f in enumerate(filters):
        col = f"score_{i}"
        parts = [t.to_pyarrow()[col] for t in result if t.num_items]
        chunks = [c.cast(pa.float64()) for p in parts for c in p.chunks]
        scores = np.concatenate([c.to_numpy(zero_copy_only=False) for c in chunks]) \
            if chunks else np.zeros(0)
        keep = np.asarray(f.keep_batch(pa.array(scores)), dtype=bool) if len(scores) else \
            np.zeros(0, bool)
        stats: dict[str, Any] = {"count": int(len(scores)),
                                 "kept_fraction": float(keep.mean()) if len(keep) else 0.0}
        if len(scores):
            qs = [0.0, 0.05, 0.25, 0.5, 0.75, 0.95, 1.0]
            stats["quantiles"] = {str(q): float(np.quantile(scores, q)) for q in qs}
            counts, edges = np.histogram(scores, bins=bins)
            stats["histogram"] = {"counts": counts.tolist(), "edges": edges.tolist()}
        stats["thresholds"] = _thresholds(f)
        out[f"{f.name}#{i}" if any(g.name == f.name for g in filters[:i]) else f.name] = stats
    return out


def _thresholds(f: Any) -> list[float]:
    """The filter's numeric bounds (attributes named like ``min``, ``max``, ``threshold``,
    ``cutoff``), to mark on its histogram."""
    keys = ("min", "max", "threshold", "cutoff")
    return sorted({float(v) for k, v in vars(f).items()
                   if any(w in k.lower() for w in keys) and isinstance(v, int | float)
                   and not isinstance(v, bool) and np.isfinite(v)})


def render_html(stats: dict[str, dict[str, Any]]) -> str:
    """The histograms of :func:`analyze` as one offline HTML page (run-report style)."""
    from curator.report import render_page, svg_histogram

    sections = []
    for name, s in stats.items():
        if not s["count"]:
            sections.append((name, "<p>no documents</p>"))
            continue
        h = s["histogram"]
        sections.append((name, f"<p>{s['count']} documents; the default threshold keeps "
                               f"{s['kept_fraction']:.1%}</p>" + svg_histogram(
                                   h["counts"], h["edges"], f"{name} score",
                                   s.get("thresholds"))))
    return render_page("curator analyze: score histograms", sections)


def _print(stats: dict[str, dict[str, Any]]) -> None:
    for name, s in stats.items():
        print(f"{name}: {s['count']} documents, default threshold keeps "
              f"{s['kept_fraction']:.1%}")
        if not s["count"]:
            continue
        print("  quantiles: " + "  ".join(f"p{float(q) * 100:g}={v:.4g}"
                                          for q, v in s["quantiles"].items()))
        counts, edges = s["histogram"]["counts"], s["histogram"]["edges"]
        top = max(counts) or 1
        for c, lo, hi in zip(counts, edges, edges[1:], strict=False):
            print(f"  [{lo:>10.4g}, {hi:>10.4g})  {'#' * round(40 * c / top):<40} {c}")


def run(args: argparse.Namespace) -> int:
    filters = [_make_filter(s) for s in (args.filters or DEFAULT_FILTERS)]
    stats = analyze(args.paths, filters, args.text_field, args.bins)
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        _print(stats)
    if args.html:
        from pathlib import Path

        Path(args.html).write_text(render_html(stats), "utf-8")
        print(f"histograms written to {args.html}")
    return 0
