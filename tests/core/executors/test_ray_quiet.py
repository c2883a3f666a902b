"""Ray's known harmless driver-side notices are dropped, nothing else (issue 36)."""

from __future__ import annotations

import logging
import subprocess
import sys

from curator.executors.ray_quiet import KNOWN_HARMLESS, quiet_known_ray_lines


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
