"""The HTML run report: one self-contained page (inline SVG and CSS, no scripts, no external
resources) that opens offline. ``curator analyze`` draws its histograms with the same helpers."""

from __future__ import annotations

from html import escape
from typing import Any

from curator.executors.stats import DEDUP_GROUP_SIZES

__all__ = ["render_html", "render_page", "svg_histogram", "svg_hbars", "svg_lines", "svg_bars",
           "group_size_bars"]

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #eee;
text-align:right}td:first-child,th:first-child{text-align:left}
.bad{color:#b00020;font-weight:600}.ok{color:#0a7d27;font-weight:600}
svg.plot{display:block;margin:8px 0 16px}svg text{font:11px sans-serif;fill:#333}
.bar{fill:#4e79a7}.kept{fill:#59a14f}.removed{fill:#e15759}.axis{stroke:#999}
.threshold{stroke:#e15759;stroke-width:2;stroke-dasharray:4 3}
.series{fill:none;stroke-width:2}
"""
_PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
            "#ff9da7", "#9c755f", "#bab0ac"]


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 or x == int(x) else f"{x:.3g}"


def svg_histogram(counts: list[int], edges: list[float], title: str = "",
                  thresholds: list[float] | None = None, width: int = 520,
                  height: int = 180) -> str:
    """A histogram (``len(edges) == len(counts) + 1``) with dashed lines at ``thresholds``."""
    pad_l, pad_b, pad_t = 50, 28, 18
    w, h = width - pad_l - 10, height - pad_b - pad_t
    top = max(counts) if counts and max(counts) > 0 else 1
    lo, hi = (edges[0], edges[-1]) if edges else (0.0, 1.0)
    span = (hi - lo) or 1.0

    def x(v: float) -> float:
        return pad_l + (v - lo) / span * w

    parts = [f'<svg class="plot histogram" width="{width}" height="{height}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}">',
             f'<text x="{pad_l}" y="12">{escape(title)}</text>']
    for c, a, b in zip(counts, edges, edges[1:], strict=False):
        bh = c / top * h
        parts.append(f'<rect class="bar" x="{x(a):.1f}" y="{pad_t + h - bh:.1f}" '
                     f'width="{max(x(b) - x(a) - 1, 1):.1f}" height="{bh:.1f}">'
                     f'<title>[{_num(a)}, {_num(b)}): {c}</title></rect>')
    parts += [f'<line class="axis" x1="{pad_l}" y1="{pad_t + h}" x2="{pad_l + w}" '
              f'y2="{pad_t + h}"/>',
              f'<text x="{pad_l}" y="{height - 8}">{_num(lo)}</text>',
              f'<text x="{pad_l + w}" y="{height - 8}" text-anchor="end">{_num(hi)}</text>',
              f'<text x="{pad_l - 4}" y="{pad_t + 8}" text-anchor="end">{top}</text>']
    for t in thresholds or []:
        if lo <= t <= hi:
            parts.append(f'<line class="threshold" x1="{x(t):.1f}" y1="{pad_t}" x2="{x(t):.1f}" '
                         f'y2="{pad_t + h}"><title>threshold {_num(t)}</title></line>')
    parts.append("</svg>")
    return "".join(parts)


def svg_hbars(rows: list[tuple[str, list[tuple[float, str]]]], title: str = "",
              width: int = 720) -> str:
    """Horizontal stacked bars: ``rows`` of ``(label, [(value, css_class), ...])``."""
    bar_h, gap, pad_l, pad_t = 18, 6, 190, 20
    height = pad_t + len(rows) * (bar_h + gap) + 6
    top = max((sum(v for v, _ in segs) for _, segs in rows), default=0) or 1
    w = width - pad_l - 90
    parts = [f'<svg class="plot hbars" width="{width}" height="{height}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}">',
             f'<text x="4" y="13">{escape(title)}</text>']
    for i, (label, segs) in enumerate(rows):
        y = pad_t + i * (bar_h + gap)
        parts.append(f'<text x="{pad_l - 6}" y="{y + 13}" text-anchor="end">'
                     f'{escape(label[:30])}</text>')
        x = float(pad_l)
        for value, cls in segs:
            bw = value / top * w
            parts.append(f'<rect class="{cls}" x="{x:.1f}" y="{y}" width="{bw:.1f}" '
                         f'height="{bar_h}"><title>{escape(cls)}: {_num(value)}</title></rect>')
            x += bw
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 13}">'
                     f'{" / ".join(_num(v) for v, _ in segs)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_bars(rows: list[tuple[str, float]], title: str = "", width: int = 720,
             height: int = 200, x_label: str = "") -> str:
    """Vertical bars of ``(label, value)`` (at most 60 px wide) with the labels under them and
    ``x_label`` below."""
    pad_l, pad_b, pad_t = 50, 44, 20
    w, h = width - pad_l - 10, height - pad_b - pad_t
    top = max((v for _, v in rows), default=0) or 1
    step = min(w / max(len(rows), 1), 60.0)
    parts = [f'<svg class="plot bars" width="{width}" height="{height}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}">',
             f'<text x="{pad_l}" y="13">{escape(title)}</text>',
             f'<line class="axis" x1="{pad_l}" y1="{pad_t + h}" x2="{pad_l + w}" '
             f'y2="{pad_t + h}"/>',
             f'<text x="{pad_l - 4}" y="{pad_t + 8}" text-anchor="end">{_num(top)}</text>']
    for i, (label, value) in enumerate(rows):
        bh = value / top * h
        x = pad_l + i * step
        parts.append(f'<rect class="bar" x="{x + 1:.1f}" y="{pad_t + h - bh:.1f}" '
                     f'width="{max(step - 2, 1):.1f}" height="{bh:.1f}">'
                     f'<title>{escape(label)}: {_num(value)}</title></rect>')
        parts.append(f'<text x="{x + step / 2:.1f}" y="{pad_t + h + 14}" '
                     f'text-anchor="middle">{escape(label[:8])}</text>')
    if x_label:
        parts.append(f'<text x="{pad_l}" y="{height - 6}">{escape(x_label)}</text>')
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
              width: int = 720, height: int = 220) -> str:
    """Lines of ``(name, [[x, y], ...])`` on shared axes, with a legend."""
    pad_l, pad_b, pad_t, legend = 60, 28, 20, 170
    w, h = width - pad_l - legend, height - pad_b - pad_t
    xs = [p[0] for _, pts in series for p in pts] or [0.0]
    ys = [p[1] for _, pts in series for p in pts] or [0.0]
    x_hi, y_hi = (max(xs) or 1.0), (max(ys) or 1.0)
    parts = [f'<svg class="plot lines" width="{width}" height="{height}" '
             f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{escape(title)}">',
             f'<text x="{pad_l}" y="13">{escape(title)}</text>',
             f'<line class="axis" x1="{pad_l}" y1="{pad_t + h}" x2="{pad_l + w}" '
             f'y2="{pad_t + h}"/>',
             f'<line class="axis" x1="{pad_l}" y1="{pad_t}" x2="{pad_l}" y2="{pad_t + h}"/>',
             f'<text x="{pad_l - 4}" y="{pad_t + 8}" text-anchor="end">{_num(y_hi)}</text>',
             f'<text x="{pad_l + w}" y="{height - 8}" text-anchor="end">{_num(x_hi)} s</text>']
    for i, (name, pts) in enumerate(series):
        color = _PALETTE[i % len(_PALETTE)]
        coords = " ".join(f"{pad_l + px / x_hi * w:.1f},{pad_t + h - py / y_hi * h:.1f}"
                          for px, py in pts)
        if len(pts) == 1:  # a single point: a short flat segment so it shows
            coords += f" {pad_l + w:.1f},{pad_t + h - pts[0][1] / y_hi * h:.1f}"
        parts.append(f'<polyline class="series" stroke="{color}" points="{coords}">'
                     f'<title>{escape(name)}</title></polyline>')
        ly = pad_t + 14 * i + 8
        parts.append(f'<rect x="{pad_l + w + 12}" y="{ly - 8}" width="10" height="10" '
                     f'fill="{color}"/><text x="{pad_l + w + 26}" y="{ly + 1}">'
                     f'{escape(name[:24])}</text>')
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
        [[s["name"], s["workers"], s["tasks_in"], s["tasks_out"], s["items_in"], s["items_out"],
          f"{s['busy_s']:.2f}", _num(s["throughput_items_per_s"]), s["rejected"],
          s["failed_tasks"], s["retries"], _num(s.get("peak_rss_mb", 0.0))] for s in stages])
    sections = [("Overview", overview)]
    series = [(s["name"], s["timeline"]) for s in stages if s.get("timeline")]
    sections.append(("Throughput over time", svg_lines(series, "items in per second, by stage")
                     if series else "<p>no items were processed</p>"))
    funnel = [(s["name"], [(s["items_out"], "kept"), (s["items_in"] - s["items_out"], "removed")])
              for s in stages[1:] if s["items_in"] and s["items_out"] <= s["items_in"]]
    sections.append(("Kept and removed, per stage", svg_hbars(funnel, "items kept / removed")
                     if funnel else "<p>no stage removed items</p>"))
    reasons = [(f"{s['name']}: {r}", [(n, "removed")]) for s in stages
               for r, n in sorted(s["rejected_by_reason"].items(), key=lambda kv: -kv[1])]
    sections.append(("Rejected records by reason", svg_hbars(reasons, "records rejected")
                     if reasons else "<p>no records were rejected</p>"))
    hists = report.get("histograms") or []
    if hists:
        sections.append(("Score histograms", "".join(
            svg_histogram(h["counts"], h["edges"],
                          f"{h['stage']}: {h['name']} ({h['count']:,} scores)" if "stage" in h
                          else h.get("name", ""), h.get("thresholds"))
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
                if name != DEDUP_GROUP_SIZES]
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
