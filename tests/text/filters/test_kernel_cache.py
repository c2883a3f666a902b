"""The numba text kernels (the FineWeb filters'; the default path's are C, built at install
time) from a read-only install: compiled once into the user cache directory
(one INFO line while compiling), then loaded from it by the next process (no compile, no line).
Runs the real interpreter as an unprivileged user, to whom the package directory is read-only
and who has no home directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

NOBODY = 65534
SCRIPT = """
import numpy as np
from curator_text.filters.fineweb._kernels import text_hashes
hashes = text_hashes(np.frombuffer(b"abab", np.uint8), np.array([0, 2, 4], np.int64))
print(bool(hashes[0] == hashes[1]))
"""
NOTICE = "compiling the FineWeb filters' kernels"


def _as_nobody(cache: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "CURATOR_CACHE_DIR": cache}
    return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                           sys.executable, "-c", SCRIPT], env=env, cwd=cache,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run as an unprivileged user")
def test_read_only_install_caches_in_the_user_cache_dir() -> None:
    cache = tempfile.mkdtemp(prefix="curator-kernel-cache-")  # not under root's 0700 tmp_path
    try:
        os.chmod(cache, 0o777)
        first = _as_nobody(cache)
        assert first.returncode == 0, first.stderr
        assert first.stdout.strip() == "True"
        assert first.stderr.count(NOTICE) == 1  # one line while compiling
        cached = [f for _, _, files in os.walk(os.path.join(cache, "numba")) for f in files]
        assert any(f.endswith(".nbi") for f in cached)
        second = _as_nobody(cache)
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == "True"
        assert NOTICE not in second.stderr  # loaded from the cache: nothing compiled
    finally:
        shutil.rmtree(cache, ignore_errors=True)
