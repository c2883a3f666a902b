"""The HTML run report (issue 20): one offline page (inline SVG/CSS, nothing fetched), rendered
in a real headless Chromium: it loads with no console errors and every plot has drawn."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from curator import Pipeline
from curator.cli import main
from curator.report import svg_histogram

from tests.core.report.stages import DropByReason, FailOn, Parts

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install -y chromium; "
                             ".ci/run can install it)")


def _assert_offline(page: str) -> None:
    """Nothing on the page can make a request: no scripts, links, images, imports or URLs
    other than the SVG namespace."""
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\(|src=|href=", page, re.I)
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) <= {"http://www.w3.org/2000/svg"}


def _chromium(path, tmp_path) -> tuple[str, str]:
    """Load ``path`` in headless Chromium with every host unresolvable (so a page needing the
    network would break); returns (the DOM after load, the browser's console log)."""
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--host-resolver-rules=MAP * ~NOTFOUND",
         "--enable-logging=stderr", "--v=0", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    pipeline = Pipeline("html-test", stages=[Parts(n=4), DropByReason(), FailOn("part001")])
    pipeline.run(max_retries=0, summary=False, progress=False, report=str(tmp / "run.json"),
                 raise_on_failure=False)
    pipeline.run(max_retries=0, summary=False, progress=False, report=str(tmp / "run.html"),
                 raise_on_failure=False)
    return tmp


def test_page_is_offline_and_has_every_section(reports):
    page = (reports / "run.html").read_text()
    _assert_offline(page)
    assert page.count('<svg class="plot') == 4  # throughput, kept/removed, reasons, scores
    for heading in ("Throughput over time", "Kept and removed, per stage",
                    "Rejected records by reason", "Score histograms", "Failed tasks",
                    "Environment"):
        assert f"<h2>{heading}</h2>" in page
    assert "DropByReason: odd" in page and "NOT OK: 1 failed task(s)" in page


def test_curator_report_renders_the_json_report(reports, capsys):
    out = reports / "again.html"
    assert main(["report", str(reports / "run.json"), "-o", str(out)]) == 0
    page = out.read_text()
    assert page.count('<svg class="plot') == 4 and "html-test" in page
    bad = reports / "bad.json"
    bad.write_text(json.dumps({"schema_version": 99}))
    assert main(["report", str(bad), "-o", str(out)]) == 2
    assert "schema_version 99" in capsys.readouterr().err


def test_histogram_marks_thresholds():
    svg = svg_histogram([1, 4, 2], [0.0, 1.0, 2.0, 3.0], "score", thresholds=[1.5, 99])
    assert svg.count('class="bar"') == 3 and svg.count('class="threshold"') == 1


@needs_chromium
def test_chromium_draws_every_plot_without_console_errors(reports, tmp_path):
    dom, log = _chromium(reports / "run.html", tmp_path)
    assert dom.count('<svg class="plot') == 4
    assert dom.count('class="threshold"') == 1  # DropByReason's score threshold, marked
    assert len(re.findall(r'<rect class="(?:kept|removed)"', dom)) >= 4
    assert "<polyline" in dom and "DropByReason: round" in dom
    assert "CONSOLE" not in log and "Uncaught" not in log
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox",
                    f"--user-data-dir={tmp_path / 'profile2'}",
                    "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1000,1400",
                    f"--screenshot={shot}", (reports / "run.html").as_uri()],
                   capture_output=True, timeout=120, check=True)
    from PIL import Image

    img = Image.open(shot).convert("RGB")
    colours = img.getcolors(maxcolors=1 << 20) or []
    kept_green = (0x59, 0xA1, 0x4F)
    assert any(c == kept_green for _, c in colours), "the kept bars were not drawn"


def test_analyze_writes_histograms_with_thresholds(tmp_path):
    pytest.importorskip("curator_text")
    from curator_text.analyze import analyze, render_html
    from curator_text.filters import WordCountFilter

    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps({"text": "word " * n}) + "\n" for n in (1, 5, 10, 60)))
    stats = analyze([str(path)], [WordCountFilter(min_words=5, max_words=50)], bins=4)
    assert stats["WordCountFilter"]["thresholds"] == [5.0, 50.0]
    page = render_html(stats)
    _assert_offline(page)
    assert page.count('class="bar"') == 4 and page.count('class="threshold"') == 2
    if CHROMIUM:
        out = tmp_path / "analyze.html"
        out.write_text(page)
        dom, log = _chromium(out, tmp_path)
        assert dom.count('class="threshold"') == 2 and "CONSOLE" not in log


# ---- what the plots say (issue 36) -----------------------------------------------------------
from curator.run.stats import RunStats, reason_cause  # noqa: E402
from curator.stages.file_partitioning import FilePartitioningStage  # noqa: E402

from tests.core.report.stages import ReadNumbers, WriteNumbers  # noqa: E402

# Measures every text of every plot after layout, in the browser: the page itself has no script
# (it must open offline and inert); the test adds this one to a copy of it.
_MEASURE = """<script>
window.addEventListener('load', () => {
  const out = [];
  document.querySelectorAll('svg.plot').forEach((svg, i) => {
    const w = svg.width.baseVal.value, h = svg.height.baseVal.value;
    svg.querySelectorAll('text').forEach(t => {
      const b = t.getBBox(), m = t.getCTM();
      const x = b.x * m.a + b.y * m.c + m.e, y = b.x * m.b + b.y * m.d + m.f;
      const bw = Math.abs(b.width * m.a + b.height * m.c);
      const bh = Math.abs(b.width * m.b + b.height * m.d);
      if (x < -0.5 || y < -0.5 || x + bw > w + 0.5 || y + bh > h + 0.5)
        out.push({plot: i, text: t.textContent, x, y, bw, bh, w, h});
    });
  });
  const pre = document.createElement('pre');
  pre.id = 'clipped';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


@pytest.fixture(scope="module")
def file_report(tmp_path_factory):
    """A run over real files: 3 inputs with 3 malformed lines each (one cause, nine places),
    a filter, and a writer that writes one file per partition."""
    tmp = tmp_path_factory.mktemp("files")
    src, out = tmp / "in", tmp / "out"
    src.mkdir()
    out.mkdir()
    for f in range(3):
        (src / f"part{f}.txt").write_text(
            "".join(f"{i}\n" for i in range(40)) + "one\ntwo\nthree\n")
    pipeline = Pipeline("files", stages=[FilePartitioningStage(str(src)), ReadNumbers(),
                                         DropByReason(), WriteNumbers(str(out))])
    result = pipeline.run(summary=False, progress=False, report=str(tmp / "run.html"))
    return tmp / "run.html", result


def test_reasons_are_counted_by_cause(file_report):
    _, result = file_report
    reasons = result.stats.stages[1].rejected_by_reason
    assert reasons == {"malformed line": 9}  # not nine reasons of one count each
    page = file_report[0].read_text()
    assert "ReadNumbersFromTextFilesWithAVeryLongStageName: malformed line" in page
    assert ">9<" in page  # its count beside the bar
    assert reason_cause("malformed JSON at …/stories_000.jsonl:1252") == "malformed JSON"


def test_writer_is_not_drawn_as_removing_what_it_wrote(file_report):
    page = file_report[0].read_text()
    funnel = page.split("<h2>Kept and removed, per stage</h2>", 1)[1].split("</section>", 1)[0]
    row = funnel.split("WriteNumbers (wrote 3 files)", 1)[1].split("</text>", 3)
    assert '<rect class="removed"' in "".join(row[:2]) and "removed: 0<" in "".join(row[:2])
    kept = re.search(r'WriteNumbers \(wrote 3 files\)</text><rect class="kept"[^>]*>'
                     r'<title>kept: ([\d,]+)</title>', funnel)
    assert kept and int(kept.group(1).replace(",", "")) > 3  # the records it wrote


def test_throughput_is_a_rate_spread_over_each_batch():
    stats = RunStats.for_stages(["A"])
    stats.started_at -= 10  # a batch of 400 items that took 4 s and ended 10 s into the run
    stats.record(0, tasks_in=1, items_in=400, busy_s=4.0)
    timeline = stats.stages[0].timeline
    assert set(timeline) <= set(range(5, 12)) and len(timeline) >= 4
    assert sum(timeline.values()) == pytest.approx(400)
    assert max(timeline.values()) <= 100.5  # 100 items/s, not 400 at the second it finished


def test_plots_have_ticks_and_axis_titles(file_report):
    page = file_report[0].read_text()
    for kind in ("lines", "histogram"):
        svg = page.split(f'<svg class="plot {kind}"', 1)[1].split("</svg>", 1)[0]
        assert svg.count('class="xtick"') > 1 and svg.count('class="ytick"') > 1, kind
        assert svg.count('class="axis-title"') == 2, kind
    assert "seconds since the start" in page and "items per second" in page
    assert "threshold 10</text>" in page  # the threshold's value, on the plot


@needs_chromium
def test_chromium_shows_every_label_whole(file_report, tmp_path):
    page = file_report[0].read_text()
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("</body>", _MEASURE + "</body>"))
    dom, log = _chromium(probe, tmp_path)
    clipped = json.loads(re.search(r'<pre id="clipped">(.*?)</pre>', dom, re.S).group(1)
                         .replace("&quot;", '"').replace("&amp;", "&"))
    assert clipped == []
    # legend names whole, not cut at 24 characters
    assert ">ReadNumbersFromTextFilesWithAVeryLongStageName</text>" in dom
    assert "Uncaught" not in log
