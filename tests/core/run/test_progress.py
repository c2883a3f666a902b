"""Live progress (issue 20): rich bars with totals on a terminal, short plain lines otherwise,
and a real run under a pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import textwrap

from curator.run.progress import ProgressReporter
from curator.run.stats import INPUT_BYTES_COUNTER, RunStats
from curator.stages.file_partitioning import FilePartitioningStage
from rich.console import Console


def _stats(listing_done: bool = True) -> RunStats:
    """A run in flight: the source listed 5 partitions (1,000,000 bytes); stage B did 2 of them
    (400,000 bytes read) and produced 2 tasks; C did none."""
    stats = RunStats.for_stages(["Source", "B" * 80, "C"], executor="local")
    stats.merge_counters(0, {INPUT_BYTES_COUNTER: {"listed": 1_000_000,
                                                   "listing_done": int(listing_done)}})
    stats.record(0, tasks_in=1, tasks_out=5, items_out=5000)
    stats.record(1, tasks_in=2, tasks_out=2, items_in=2000, items_out=1500, busy_s=1.0)
    stats.merge_counters(1, {INPUT_BYTES_COUNTER: {"read": 400_000}})
    return stats


def test_plain_lines_are_short_and_carry_only_final_totals():
    reporter = ProgressReporter(_stats(), stream=io.StringIO())
    assert not reporter.bars
    lines = reporter.lines()
    assert len(lines) == 4 and all(len(line) < 120 for line in lines)
    assert "overall: input read 400.0 kB of 1.0 MB  40%" in lines[0] and "ETA" in lines[0]
    assert "Source: 1/1 tasks 100%" in lines[1]
    assert ": 2/5 tasks  40%, 2,000 items" in lines[2] and "ETA" in lines[2]
    assert "B" * 20 + "…" + "B" * 20 in lines[2]  # a long name: shortened in the middle
    # C's total is not known while B is still running: no "0/2 ... ETA 0s" from a fake total
    assert "C: 0/? tasks, 0 items" in lines[3] and "ETA" not in lines[3]
    # nothing moved: the overall line and one heartbeat line for the first unfinished stage
    beat = reporter.lines()
    assert len(beat) == 2 and ": 2/5 tasks" in beat[1]


def test_totals_wait_for_the_listing_and_upstream_stages():
    reporter = ProgressReporter(_stats(listing_done=False), stream=io.StringIO())
    overall, *stages = reporter.lines()
    assert "listed so far" in overall and overall.endswith("ETA ?")
    assert ": 2/? tasks" in stages[1]  # B: the source is still listing
    stats = _stats()
    stats.record(1, tasks_in=3, tasks_out=3, items_in=3000, items_out=2000, busy_s=1.0)
    stats.merge_counters(1, {INPUT_BYTES_COUNTER: {"read": 600_000}})
    figs = ProgressReporter(stats, stream=io.StringIO()).figures()
    assert (figs[1].done, figs[1].total) == (5, 5)
    assert (figs[2].done, figs[2].total) == (0, 5)  # B finished: C's total is now final


def test_bars_show_overall_bytes_and_final_totals():
    console = Console(record=True, force_terminal=True, width=160, file=io.StringIO())
    stats = _stats()
    with ProgressReporter(stats, console=console) as reporter:
        assert reporter.bars
        stats.record(1, tasks_in=1, tasks_out=1, items_in=1000, items_out=900, busy_s=0.5)
        stats.merge_counters(1, {INPUT_BYTES_COUNTER: {"read": 200_000}})
        reporter.refresh()
    text = console.export_text()
    assert "overall (input read)" in text and "600.0 kB of 1.0 MB" in text
    assert "B" * 80 in text  # names are not cut
    assert "Source" in text and "1/1 tasks" in text
    assert "3/5 tasks" in text and "3,000 items" in text  # B: 3 of the 5 listed partitions
    assert "0/? tasks" in text  # C: B is not finished, so C has no total yet
    assert "ETA" in text


def test_a_file_run_reports_bytes_listed_and_read(tmp_path):
    from curator import Pipeline

    from tests.core.report.stages import FileLines

    for i in range(3):
        (tmp_path / f"f{i}.txt").write_text("x\n" * (10 + i))
    result = Pipeline("p", stages=[FilePartitioningStage(str(tmp_path)), FileLines()]).run(
        summary=False, progress=False)
    counts = [s.counters.get(INPUT_BYTES_COUNTER, {}) for s in result.stats.stages]
    size = sum(p.stat().st_size for p in tmp_path.iterdir())
    assert counts[0] == {"listed": size, "listing_done": 1} and counts[1] == {"read": size}


def test_run_draws_bars_under_a_pseudo_terminal_and_no_escapes_on_a_pipe(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent("""
        from curator import Pipeline
        from tests.core.report.stages import DropByReason, Parts
        Pipeline("p", stages=[Parts(n=3), DropByReason()]).run(summary=False)
    """))
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120", "PYTHONPATH": os.getcwd()}
    env.pop("CURATOR_PROGRESS", None)
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, str(script)], stdin=secondary, stdout=secondary,
                            stderr=secondary, env=env, cwd=os.getcwd())
    os.close(secondary)
    chunks = []
    while True:
        try:
            data = os.read(primary, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=120) == 0
    os.close(primary)
    out = b"".join(chunks).decode("utf-8", "replace")
    assert "DropByReason" in out and "3/3" in out and "items" in out  # the final bars
    # without a terminal, asked for progress: never terminal escapes
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           env={**env, "CURATOR_PROGRESS": "1"}, timeout=120, check=True)
    assert "\x1b[" not in plain.stderr

