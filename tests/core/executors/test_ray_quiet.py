"""Ray's known harmless driver-side notices are dropped, nothing else (issue 36)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from curator.executors.ray_quiet import (
    ACTOR_RESTART_NOTICE,
    KNOWN_HARMLESS,
    _stderr_without,
    quiet_known_ray_lines,
)

ROOT = Path(__file__).resolve().parents[3]


def test_only_the_known_messages_are_dropped(caplog):
    quiet_known_ray_lines()
    quiet_known_ray_lines()  # idempotent
    auth = logging.getLogger("ray._private.authentication.authentication_token_setup")
    progress = logging.getLogger("ray.data._internal.progress")
    with caplog.at_level(logging.INFO):
        auth.warning("Token authentication is enabled for this Ray cluster. Set RAY_AUTH_MODE…")
        progress.warning("Progress bars disabled. To enable, set …")
        auth.warning("Token authentication is disabled for this Ray cluster. Anyone with …")
        progress.warning("something else")
    kept = [r.getMessage() for r in caplog.records]
    assert kept == ["Token authentication is disabled for this Ray cluster. Anyone with …",
                    "something else"]
    assert len(auth.filters) == 1 and set(KNOWN_HARMLESS) >= {auth.name, progress.name}


def test_hugging_face_progress_bars_are_off_after_import_curator():
    code = ("import curator\nfrom transformers.utils import logging\n"
            "print(logging.is_progress_bar_enabled())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False", out.stderr[-500:]
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120, env={"PATH": "/usr/bin:/bin",
                                             "HF_HUB_DISABLE_PROGRESS_BARS": "0"})
    assert again.stdout.strip() == "True"  # a user who wants them back sets the variable


def test_stderr_is_written_back_without_the_notice_line(capfd):
    with _stderr_without(ACTOR_RESTART_NOTICE):
        os.write(2, b"kept before\n[E core_worker.cc] Actor 'X' " + ACTOR_RESTART_NOTICE
                 + b". If the arguments ...\n")
        os.write(2, b"kept after\n")
    assert capfd.readouterr().err == "kept before\nkept after\n"


@pytest.mark.ray
def test_ray_data_run_prints_no_actor_restart_notice(ray_cluster):
    """A driver joining the suite's cluster runs an actor pool (a stage with setup) on Ray Data:
    Ray's ERROR line is not on its stderr or stdout, and is still in its Ray driver log file."""
    import ray

    code = textwrap.dedent(f"""
        from curator import Pipeline, RayDataExecutor
        from tests.core.executors.stages import Numbers, SplitInTwo

        result = Pipeline("quiet", stages=[Numbers(n=2), SplitInTwo()]).run(
            RayDataExecutor(address={ray_cluster.address!r}))
        print("ok", result.ok, sum(len(t.data) for t in result))
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    assert "ok True 6" in out
    assert ACTOR_RESTART_NOTICE.decode() not in out + err
    logs = Path(ray._private.worker.global_worker.node.get_logs_dir_path())
    driver_log = "".join(p.read_text(errors="replace")
                         for p in logs.glob(f"python-core-driver-*_{proc.pid}.log"))
    assert ACTOR_RESTART_NOTICE.decode() in driver_log  # kept in Ray's own log, not lost
