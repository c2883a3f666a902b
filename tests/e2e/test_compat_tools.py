"""The out-of-tree checks in ``compat/`` stay runnable: they import Curator by module paths that a
refactor can move, and run nowhere else in CI (NeMo's code is fetched, never committed, so what
is checked here needs none of it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMPAT = ROOT / "compat"


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=ROOT, timeout=300, check=False)


def test_docs_harness_prelude_imports_and_patches_curator(tmp_path) -> None:
    code = f"""
import runpy, json
runpy.run_path({str(COMPAT / 'nemo_docs' / 'prelude.py')!r})
import curator
from curator_text import DocumentBatch
client = curator.RayClient()
assert client.start() is client and client.stop() is None  # no cluster for the page's client
print(json.dumps(type(client).__name__))
"""
    proc = _python(code, HARNESS_SIDE="curator", HARNESS_OUT=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "NoClusterRayClient" in proc.stdout


def test_every_module_of_the_nemo_shim_builds_from_the_installed_packages() -> None:
    code = """
import importlib, nemo_curator
bad = []
for name, sources in sorted(nemo_curator.MODULES.items()):
    try:
        mod = importlib.import_module(name)
    except Exception as exc:
        bad.append(f"{name}: {type(exc).__name__}: {exc}")
        continue
    public = [k for k in vars(mod) if not k.startswith("_")]
    if not public:
        bad.append(f"{name}: exposes nothing (from {sources})")
print(len(nemo_curator.MODULES))
assert not bad, bad
"""
    proc = _python(code, PYTHONPATH=str(COMPAT / "nemo_shim"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout.split()[-1]) >= 20  # core's and text's modules at least


def test_nemo_test_lists_name_nemo_test_files_and_the_runner_parses() -> None:
    lists = sorted((COMPAT / "nemo_tests").glob("*.txt"))
    assert lists, "compat/nemo_tests/*.txt lists the NeMo unit tests run through the shim"
    for path in lists:
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("data:"):
                continue
            assert line.startswith("tests/") and line.endswith(".py"), (path.name, line)
    proc = subprocess.run(["bash", "-n", str(COMPAT / "run_nemo_tests.sh")], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    for script in ("extract.py", "run.py"):
        compile((COMPAT / "nemo_docs" / script).read_text(), script, "exec")
