"""docs/writing-stages-and-plugins.md, run as a plugin author would (issue 36): its complete
pyproject.toml builds a wheel with the plugin module and entry point, and its filter example
passes the stage contract on the sample DocumentBatch the doc shows how to build."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "writing-stages-and-plugins.md").read_text()


def _blocks(marker: str) -> list[tuple[str, str]]:
    """``(argument, code)`` of every fenced block right after ``<!-- marker[: argument] -->``."""
    pattern = rf"<!-- {marker}(?::\s*(\S+))? -->\n```\w*\n(.*?)```"
    return [(m.group(1) or "", m.group(2)) for m in re.finditer(pattern, DOC, re.S)]


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("my-plugin")
    files = _blocks("plugin-file")
    assert {p for p, _ in files} >= {"pyproject.toml", "src/my_plugin/plugin.py",
                                      "src/my_plugin/filters.py"}
    for path, code in files:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(code)
    (root / "src/my_plugin/__init__.py").write_text("")
    return root


def test_the_documented_pyproject_builds_a_wheel_with_the_entry_point(plugin_dir, tmp_path):
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    proc = subprocess.run([uv, "build", "--offline", "--wheel", "-o", str(tmp_path)],
                          cwd=plugin_dir, capture_output=True, text=True, timeout=300)
    if proc.returncode and "offline" in proc.stderr.lower():
        pytest.skip(f"hatchling is not in uv's cache: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr
    (wheel,) = tmp_path.glob("curator_my_plugin-0.1.0-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        entry = zf.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert {"my_plugin/plugin.py", "my_plugin/filters.py"} <= set(names)
    assert "[curator]\nmy_plugin = my_plugin.plugin" in entry


def test_the_documented_filter_registers_and_passes_the_contract(plugin_dir, monkeypatch):
    pytest.importorskip("curator_text")
    monkeypatch.syspath_prepend(str(plugin_dir / "src"))
    for mod in ("my_plugin", "my_plugin.plugin", "my_plugin.filters"):
        sys.modules.pop(mod, None)
    import my_plugin.plugin as plugin

    registered = []
    plugin.curator_register(lambda obj, **kw: registered.append((obj.__name__, kw)))
    assert registered == [("MaxDigitRatioFilter", {"kind": "filter"})]
    from my_plugin.filters import MaxDigitRatioFilter

    ((_, test_code),) = _blocks("plugin-test")
    exec(compile(test_code, "docs/writing-stages-and-plugins.md", "exec"),
         {"MaxDigitRatioFilter": MaxDigitRatioFilter})
