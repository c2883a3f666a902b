"""The HTML run report: one self-contained page (inline SVG and CSS, no scripts, no external
resources) that opens offline. ``curator analyze`` draws its histograms with the same helpers."""

from __future__ import annotations

import math
from html import escape
from typing import Any

from curator.run.stats import DEDUP_GROUP_SIZES, INPUT_BYTES_COUNTER, reason_cause

__all__ = ["render_html", "render_page", "svg_histogram", "svg_hbars", "svg_lines", "svg_bars",
           "group_size_bars"]

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;display:block;overflow-x:auto;max-width:100%}td,th{padding:3px 10px;border-bottom:1px solid #eee;
text-align:right}td:first-child,th:first-child{text-align:left}
.bad{color:#b00020;font-weight:600}.ok{color:#0a7d27;font-weight:600}
svg.plot{display:block;margin:8px 0 16px}svg text{font:11px sans-serif;fill:#333}
.bar{fill:#4e79a7}.kept{fill:#59a14f}.removed{fill:#e15759}.axis{stroke:#999}
.threshold{stroke:#e15759;stroke-width:2;stroke-dasharray:4 3}.threshold-label{fill:#b00020}
.tick{stroke:#999}.grid{stroke:#eee}.axis-title{fill:#555}svg text.title{font-weight:600}
.series{fill:none;stroke-width:2}
"""
_PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
            "#ff9da7", "#9c755f", "#bab0ac"]


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 or x == int(x) else f"{x:.3g}"


_CHAR_W = 6.6
"""Width of one character of the 11 px plot font, generously rounded up, for laying out labels
so none is clipped."""


def _text_w(text: str) -> float:
    return len(text) * _CHAR_W


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About ``n`` round tick values covering ``[lo, hi]`` (steps of 1, 2 or 5 × 10^k)."""
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out, v = [], first
    while v <= hi + step * 1e-9:
        out.append(round(v, 12))
        v += step
    return out


def _axes(x0: float, y0: float, w: float, h: float, xr: tuple[float, float],
          yr: tuple[float, float], x_title: str, y_title: str, x_unit: str = "",
          x_ticks: bool = True) -> list[str]:
    """Both axes of a plot box (top-left ``x0, y0``), ticks with values (on x only when
    ``x_ticks``: categories label themselves), and axis titles."""
    parts = [f'<line class="axis" x1="{x0}" y1="{y0 + h}" x2="{x0 + w}" y2="{y0 + h}"/>',
             f'<line class="axis" x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 + h}"/>']
    xspan, yspan = (xr[1] - xr[0]) or 1.0, (yr[1] - yr[0]) or 1.0
    for t in _ticks(*xr) if x_ticks else []:
        x = x0 + (t - xr[0]) / xspan * w
        parts.append(f'<line class="tick" x1="{x:.1f}" y1="{y0 + h}" x2="{x:.1f}" '
                     f'y2="{y0 + h + 4}"/><text class="xtick" x="{x:.1f}" y="{y0 + h + 15}" '
                     f'text-anchor="middle">{_num(t)}{x_unit}</text>')
    for t in _ticks(*yr, n=4):
        y = y0 + h - (t - yr[0]) / yspan * h
        parts.append(f'<line class="tick" x1="{x0 - 4}" y1="{y:.1f}" x2="{x0}" y2="{y:.1f}"/>'
                     f'<line class="grid" x1="{x0}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}"/>'
                     f'<text class="ytick" x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">'
                     f'{_num(t)}</text>')
    parts.append(f'<text class="axis-title" x="{x0 + w / 2:.1f}" y="{y0 + h + 32}" '
                 f'text-anchor="middle">{escape(x_title)}</text>')
    parts.append(f'<text class="axis-title" transform="translate(12 {y0 + h / 2:.1f}) '
                 f'rotate(-90)" text-anchor="middle">{escape(y_title)}</text>')
    return parts


def _y_pad(top: float) -> float:
    """Room left of the y axis for its tick labels and title."""
    return 26 + max(_text_w(_num(t)) for t in _ticks(0.0, top, n=4))


def svg_histogram(counts: list[int], edges: list[float], title: str = "",
                  thresholds: list[float] | None = None, width: int = 560,
                  height: int = 220, x_label: str = "score",
                  y_label: str = "count") -> str:
    """A histogram (``len(edges) == len(counts) + 1``) with axis titles, ticks, and a dashed
    line labelled with its value at each of ``thresholds``."""
    top = float(max(counts)) if counts and max(counts) > 0 else 1.0
    pad_l, pad_b, pad_t = _y_pad(top), 40, 34
    w, h = width - pad_l - 16, height - pad_b - pad_t
    lo, hi = (edges[0], edges[-1]) if edges else (0.0, 1.0)
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return pad_l + (v - lo) / span * w

    parts = [f'<svg class="plot histogram" width="{width}" height="{height}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}">',
             f'<text class="title" x="{pad_l}" y="13">{escape(title)}</text>']
    for c, a, b in zip(counts, edges, edges[1:], strict=False):
        bh = c / top * h
        parts.append(f'<rect class="bar" x="{x(a):.1f}" y="{pad_t + h - bh:.1f}" '
                     f'width="{max(x(b) - x(a) - 1, 1):.1f}" height="{bh:.1f}">'
                     f'<title>[{_num(a)}, {_num(b)}): {c}</title></rect>')
    parts += _axes(pad_l, pad_t, w, h, (lo, hi), (0.0, top), x_label, y_label)
    for t in thresholds or []:
        if lo <= t <= hi:
            label = f"threshold {_num(t)}"
            anchor = "end" if x(t) + _text_w(label) > width - 4 else "start"
            parts.append(f'<line class="threshold" x1="{x(t):.1f}" y1="{pad_t - 6}" '
                         f'x2="{x(t):.1f}" y2="{pad_t + h}"><title>{label}</title></line>'
                         f'<text class="threshold-label" x="{x(t) + (3 if anchor == "start" else -3):.1f}" '
                         f'y="{pad_t - 8}" text-anchor="{anchor}">{label}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_hbars(rows: list[tuple[str, list[tuple[float, str]]]], title: str = "",
              width: int = 760) -> str:
    """Horizontal stacked bars: ``rows`` of ``(label, [(value, css_class), ...])``; labels are
    shown whole (the plot widens for long ones)."""
    bar_h, gap, pad_t = 18, 6, 22
    pad_l = 12 + max((_text_w(label) for label, _ in rows), default=0)
    values = [" / ".join(_num(v) for v, _ in segs) for _, segs in rows]
    pad_r = 12 + max((_text_w(v) for v in values), default=0)
    bar_w = max(width - pad_l - pad_r, 240)
    width = int(pad_l + bar_w + pad_r)
    height = pad_t + len(rows) * (bar_h + gap) + 6
    top = max((sum(v for v, _ in segs) for _, segs in rows), default=0) or 1
    parts = [f'<svg class="plot hbars" width="{width}" height="{height}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}">',
             f'<text class="title" x="4" y="13">{escape(title)}</text>']
    for i, ((label, segs), shown) in enumerate(zip(rows, values, strict=True)):
        y = pad_t + i * (bar_h + gap)
        parts.append(f'<text x="{pad_l - 6:.1f}" y="{y + 13}" text-anchor="end">'
                     f'{escape(label)}</text>')
        x = float(pad_l)
        for value, cls in segs:
            bw = value / top * bar_w
            parts.append(f'<rect class="{cls}" x="{x:.1f}" y="{y}" width="{bw:.1f}" '
                         f'height="{bar_h}"><title>{escape(cls)}: {_num(value)}</title></rect>')
            x += bw
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 13}">{shown}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_bars(rows: list[tuple[str, float]], title: str = "", width: int = 720,
             height: int = 220, x_label: str = "", y_label: str = "count") -> str:
    """Vertical bars of ``(label, value)`` (at most 60 px wide) with the labels under them,
    value ticks, and axis titles."""
    top = max((v for _, v in rows), default=0) or 1
    pad_l, pad_b, pad_t = _y_pad(top), 40, 22
    w, h = width - pad_l - 10, height - pad_b - pad_t
    step = min(w / max(len(rows), 1), 60.0)
    parts = [f'<svg class="plot bars" width="{width}" height="{height}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}">',
             f'<text class="title" x="{pad_l}" y="13">{escape(title)}</text>']
    for i, (label, value) in enumerate(rows):
        bh = value / top * h
        x = pad_l + i * step
        parts.append(f'<rect class="bar" x="{x + 1:.1f}" y="{pad_t + h - bh:.1f}" '
                     f'width="{max(step - 2, 1):.1f}" height="{bh:.1f}">'
                     f'<title>{escape(label)}: {_num(value)}</title></rect>')
        parts.append(f'<text x="{x + step / 2:.1f}" y="{pad_t + h + 14}" '
                     f'text-anchor="middle">{escape(label)}</text>')
    parts += _axes(pad_l, pad_t, w, h, (0.0, 1.0), (0.0, float(top)), x_label, y_label,
                   x_ticks=False)
    parts.append("</svg>")
    return "".join(parts)


def group_size_bars(sizes: dict[str, int], most: int = 24) -> list[tuple[str, float]]:
    """``(size label, groups)`` bars of a duplicate-group-size counter (size -> groups): one bar
    per size, or power-of-two ranges (``"5-8"``) when there are more than ``most`` sizes."""
    pairs = sorted((int(k), n) for k, n in sizes.items())
    if len(pairs) <= most:
        return [(str(k), float(n)) for k, n in pairs]
    buckets: dict[int, int] = {}
    for k, n in pairs:
        b = max(k - 1, 1).bit_length()  # 2 -> 1, 3-4 -> 2, 5-8 -> 3, …
        buckets[b] = buckets.get(b, 0) + n
    return [(str(2 ** b) if b == 1 else f"{2 ** (b - 1) + 1}-{2 ** b}", float(n))
            for b, n in sorted(buckets.items())]


def svg_lines(series: list[tuple[str, list[list[float]]]], title: str = "",
              width: int = 760, height: int = 240, x_label: str = "seconds since the start",
              y_label: str = "items per second") -> str:
    """Lines of ``(name, [[x, y], ...])`` on shared axes with ticks and titles; the legend
    (names whole) goes under the plot."""
    xs = [p[0] for _, pts in series for p in pts] or [0.0]
    ys = [p[1] for _, pts in series for p in pts] or [0.0]
    x_hi, y_hi = (max(xs) or 1.0), (max(ys) or 1.0)
    pad_l, pad_b, pad_t = _y_pad(y_hi), 44, 22
    w, h = width - pad_l - 16, height - pad_b - pad_t
    per_row = max(1, int((width - 20) // max((28 + _text_w(n) for n, _ in series), default=1)))
    legend_h = 18 * -(-len(series) // per_row)
    parts = [f'<svg class="plot lines" width="{width}" height="{height + legend_h}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}">',
             f'<text class="title" x="{pad_l}" y="13">{escape(title)}</text>']
    parts += _axes(pad_l, pad_t, w, h, (0.0, x_hi), (0.0, y_hi), x_label, y_label, " s")
    col_w = (width - 20) / per_row
    for i, (name, pts) in enumerate(series):
        color = _PALETTE[i % len(_PALETTE)]
        coords = " ".join(f"{pad_l + px / x_hi * w:.1f},{pad_t + h - py / y_hi * h:.1f}"
                          for px, py in pts)
        if len(pts) == 1:  # a single point: a short flat segment so it shows
            coords += f" {pad_l + w:.1f},{pad_t + h - pts[0][1] / y_hi * h:.1f}"
        parts.append(f'<polyline class="series" stroke="{color}" points="{coords}">'
                     f'<title>{escape(name)}</title></polyline>')
        lx = 10 + (i % per_row) * col_w
        ly = height + 18 * (i // per_row) + 4
        parts.append(f'<rect x="{lx:.1f}" y="{ly - 9}" width="10" height="10" fill="{color}"/>'
                     f'<text class="legend" x="{lx + 14:.1f}" y="{ly}">{escape(name)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_page(title: str, sections: list[tuple[str, str]]) -> str:
    """A complete offline HTML page: ``sections`` of ``(heading, html body)``."""
    body = "".join(f"<section><h2>{escape(h)}</h2>{b}</section>" for h, b in sections)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{escape(title)}</title><style>{_CSS}</style></head>"
            f"<body><h1>{escape(title)}</h1>{body}</body></html>\n")


def _table(head: list[str], rows: list[list[Any]]) -> str:
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    trs = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>"
                  for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"


def _workers(stage: dict[str, Any]) -> str:
    """A stage's workers, with how an autoscaling pool grew and shrank (``4 (+3 −1)``)."""
    added, retired = stage.get("workers_added", 0), stage.get("workers_retired", 0)
    workers = str(stage["workers"])
    return f"{workers} (+{added} −{retired})" if added or retired else workers


def _by_cause(reasons: dict[str, int]) -> dict[str, int]:
    """Reason counts grouped by cause (reports written before causes were counted kept the
    file and line in each reason)."""
    out: dict[str, int] = {}
    for reason, n in reasons.items():
        out[reason_cause(reason)] = out.get(reason_cause(reason), 0) + n
    return out


def _kept_removed(stage: dict[str, Any]) -> tuple[str, list[tuple[float, str]]] | None:
    """One row of the kept/removed plot, or None when the stage removed nothing comparable.
    A stage whose outputs are files (a writer: one item out per task out, fewer than went in)
    removed only what it rejected; it is not drawn as removing everything it wrote."""
    items_in, items_out = stage["items_in"], stage["items_out"]
    if not items_in:
        return None
    rejected = sum(stage.get("rejected_by_reason", {}).values())
    if stage["tasks_out"] and items_out == stage["tasks_out"] and items_out < items_in:
        return (f"{stage['name']} (wrote {items_out:,} files)",
                [(items_in - rejected, "kept"), (rejected, "removed")])
    if items_out > items_in:
        return None
    return stage["name"], [(items_out, "kept"), (items_in - items_out, "removed")]


def render_html(report: dict[str, Any]) -> str:
    """The HTML page of a run report (the dict of :func:`curator.report.build_report`)."""
    stages = report["stages"]
    status = ('<span class="ok">ok</span>' if report["ok"] else
              f'<span class="bad">NOT OK: {report["failed_total"]} failed task(s)</span>')
    overview = (f"<p>{status} · executor {escape(report['executor'])} · started "
                f"{escape(report['started_at'])} · wall {report['wall_s']:.2f} s · peak memory "
                f"{report['peak_rss_mb']:.0f} MiB · {report['output_tasks']} output tasks · "
                f"{report['rejected_total']} rejected records</p>")
    overview += _table(
        ["stage", "workers", "tasks in", "tasks out", "items in", "items out", "busy s",
         "items/s", "rejected", "failed", "retries", "peak MiB"],
        [[s["name"], _workers(s), s["tasks_in"], s["tasks_out"], s["items_in"], s["items_out"],
          f"{s['busy_s']:.2f}", _num(s["throughput_items_per_s"]), s["rejected"],
          s["failed_tasks"], s["retries"], _num(s.get("peak_rss_mb", 0.0))] for s in stages])
    sections = [("Overview", overview)]
    series = [(s["name"], s["timeline"]) for s in stages if s.get("timeline")]
    sections.append(("Throughput over time", svg_lines(
        series, "items in per second, by stage (each batch spread over the time it took)")
        if series else "<p>no items were processed</p>"))
    funnel = [row for s in stages[1:] if (row := _kept_removed(s))]
    sections.append(("Kept and removed, per stage", svg_hbars(
        funnel, "items kept / removed (a stage whose outputs are files, like a writer, keeps "
                "what it wrote)")
        if funnel else "<p>no stage removed items</p>"))
    reasons = [(f"{s['name']}: {r}", [(n, "removed")]) for s in stages
               for r, n in sorted(_by_cause(s["rejected_by_reason"]).items(),
                                  key=lambda kv: (-kv[1], kv[0]))]
    sections.append(("Rejected records by reason", svg_hbars(
        reasons, "records rejected, by cause (the file and line of each are in the rejected "
                 "records)")
        if reasons else "<p>no records were rejected</p>"))
    hists = report.get("histograms") or []
    if hists:
        sections.append(("Score histograms", "".join(
            svg_histogram(h["counts"], h["edges"],
                          f"{h['stage']}: {h['name']} ({h['count']:,} scores)" if "stage" in h
                          else h.get("name", ""), h.get("thresholds"),
                          x_label=h.get("name", "score"), y_label="items")
            for h in hists)))
    groups = [(s["name"], s["counters"][DEDUP_GROUP_SIZES]) for s in stages
              if (s.get("counters") or {}).get(DEDUP_GROUP_SIZES)]
    if groups:
        sections.append(("Duplicate group sizes", "".join(
            svg_bars(group_size_bars(sizes), f"{name}: duplicate groups by size "
                     f"({sum(sizes.values()):,} groups)",
                     x_label="group size (records, the kept one included)")
            for name, sizes in groups)))
    counters = [(s["name"], name, counts) for s in stages
                for name, counts in (s.get("counters") or {}).items()
                if name not in (DEDUP_GROUP_SIZES, INPUT_BYTES_COUNTER)]
    if counters:
        sections.append(("Stage counters", "".join(
            f"<h3>{escape(stage)}: {escape(name)}</h3>" + _table(
                ["key", "count"], [[k, f"{v:,}"] for k, v in
                                   sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))])
            for stage, name, counts in counters)))
    if report["failed_tasks"]:
        sections.append(("Failed tasks", _table(
            ["stage", "task", "partition", "error", "entry"],
            [[f["stage"], f["task_id"], f["partition"] or "", f["error"], f["entry"] or ""]
             for f in report["failed_tasks"]])))
    plugins = report["environment"]["plugins"]
    sections.append(("Environment", f"<p>Python {escape(report['environment']['python'])} on "
                     f"{escape(report['environment']['platform'])}</p>" + _table(
                         ["plugin", "distribution", "version", "broken"],
                         [[p["name"], p["distribution"], p["version"], "yes" if p["broken"] else ""]
                          for p in plugins])))
    return render_page(f"Curator run report: {report['pipeline'] or 'pipeline'}", sections)
