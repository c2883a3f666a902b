"""Live progress (issue 20): rich bars with totals on a terminal, short plain lines otherwise,
and a real run under a pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import textwrap

from curator.executors.stats import ProgressReporter, RunStats
from rich.console import Console


def _stats() -> RunStats:
    """A run in flight: the source listed 5 partitions; stage B did 2 of them."""
    stats = RunStats.for_stages(["Source", "B" * 80, "C"], executor="local")
    stats.record(0, tasks_in=1, tasks_out=5, items_out=5000)
    stats.record(1, tasks_in=2, tasks_out=2, items_in=2000, items_out=1500, busy_s=1.0)
    return stats


def test_plain_lines_are_short_and_carry_totals():
    reporter = ProgressReporter(_stats(), stream=io.StringIO())
    assert not reporter.bars
    lines = reporter.lines()
    assert len(lines) == 3 and all(len(line) < 120 for line in lines)
    assert "Source: 1/1 tasks 100%" in lines[0]
    assert "B" * 32 + ": 2/5 tasks  40%, 2,000 items" in lines[1] and "ETA" in lines[1]
    assert "C: 0/2 tasks   0%, 0 items" in lines[2] and lines[2].endswith("ETA ?")
    # nothing moved: one heartbeat line for the first unfinished stage
    (beat,) = reporter.lines()
    assert ": 2/5 tasks" in beat


def test_bars_show_done_over_known_total():
    console = Console(record=True, force_terminal=True, width=150, file=io.StringIO())
    stats = _stats()
    with ProgressReporter(stats, console=console) as reporter:
        assert reporter.bars
        stats.record(1, tasks_in=1, tasks_out=1, items_in=1000, items_out=900, busy_s=0.5)
        reporter.refresh()
    text = console.export_text()
    assert "Source" in text and "1/1" in text
    assert "3/5" in text and "3,000 items" in text  # B: 3 of the 5 listed partitions
    assert "0/3" in text  # C: the tasks B produced so far
    assert "ETA" in text


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

