"""Discovery of REAL plugin distributions (tests/fixtures) installed into a temporary virtual
environment, checked through the ``curator`` command in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"
DISTS = ["curator_demo_plugin", "curator_clash_plugin", "curator_broken_plugin"]


def _uv() -> str | None:
    return os.environ.get("UV") or shutil.which("uv")


@pytest.fixture(scope="session")
def plugin_venv(tmp_path_factory):
    """A fresh virtual environment holding curator-core (non-editable) and the three fixture
    plugin distributions. Tries an offline install from uv's cache first, then PyPI."""
    uv = _uv()
    if uv is None:
        pytest.skip("uv is not installed")
    venv = tmp_path_factory.mktemp("plugin-venv") / "venv"
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    env.pop("PYTHONPATH", None)
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, env=env)
    pkgs = [str(ROOT / "packages" / "core")] + [str(FIXTURES / d) for d in DISTS]
    errors = []
    for extra in (["--offline"], []):
        proc = subprocess.run([uv, "pip", "install", "-q", *extra, *pkgs], env=env,
                              capture_output=True, text=True, timeout=300)
        if proc.returncode == 0:
            break
        errors.append(proc.stderr[-2000:])
    else:
        pytest.fail("could not install curator-core and the fixture plugins:\n" + "\n".join(errors))
    yield venv
    shutil.rmtree(venv, ignore_errors=True)


def curator(venv: Path, *args: str, disable: str | None = "clash",
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CURATOR_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["CURATOR_SUMMARY"] = "0"
    if disable:
        env["CURATOR_DISABLE_PLUGINS"] = disable
    return subprocess.run([str(venv / "bin" / "curator"), *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def test_plugins_json_lists_the_demo_plugin_with_version_and_reports_the_broken_one(plugin_venv):
    proc = curator(plugin_venv, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    plugins = {p["name"]: p for p in data["plugins"]}
    assert plugins["demo"]["distribution"] == "curator-demo-plugin"
    assert plugins["demo"]["version"] == "0.3.1"
    assert plugins["demo"]["registered"] == 4
    assert plugins["core"]["distribution"] == "curator-core"
    assert "clash" not in plugins  # disabled by CURATOR_DISABLE_PLUGINS
    broken = {b["name"]: b for b in data["broken"]}
    assert set(broken) == {"broken"}
    assert broken["broken"]["distribution"] == "curator-broken-plugin"
    assert "curator_this_module_does_not_exist" in broken["broken"]["error"]


def test_plugins_table_reports_broken_plugin_but_still_lists_the_others(plugin_venv):
    proc = curator(plugin_venv, "plugins")
    assert proc.returncode == 0, proc.stderr
    assert "curator-demo-plugin" in proc.stdout and "0.3.1" in proc.stdout
    assert "BROKEN plugin 'broken'" in proc.stdout
    assert "curator_this_module_does_not_exist" in proc.stdout


def test_stages_lists_the_plugin_stages_with_provenance(plugin_venv):
    proc = curator(plugin_venv, "stages", "--json")
    assert proc.returncode == 0, proc.stderr
    entries = {e["name"]: e for e in json.loads(proc.stdout)}
    assert entries["DemoUpperCaseStage"]["distribution"] == "curator-demo-plugin"
    assert entries["DemoUpperCaseStage"]["modality"] == "text"
    assert entries["DemoMinLengthFilter"]["kind"] == "filter"
    table = curator(plugin_venv, "stages", "--kind", "filter").stdout
    assert "DemoMinLengthFilter" in table and "DemoUpperCaseStage" not in table
    described = curator(plugin_venv, "describe", "DemoUpperCaseStage")
    assert described.returncode == 0, described.stderr
    assert "Upper-case the text field" in described.stdout  # CLI text shows no RST markup
    assert "curator-demo-plugin 0.3.1" in described.stdout


def test_yaml_spec_using_the_plugin_runs(plugin_venv, tmp_path):
    out = tmp_path / "out"
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"""
name: demo-run
stages:
  - stage: DemoLinesSource
    num_tasks: 3
    lines_per_task: 3
  - stage: DemoUpperCaseStage
  - stage: DemoMinLengthFilter
    min_length: 9
  - stage: DemoJsonlWriter
    path: {out}
""")
    proc = curator(plugin_venv, "run", str(spec), "--set", "stages.DemoLinesSource.num_tasks=2")
    assert proc.returncode == 0, proc.stderr
    files = sorted(p.name for p in out.iterdir())
    assert files == ["demo_0.jsonl", "demo_1.jsonl"]
    lines = [json.loads(x) for x in (out / "demo_1.jsonl").read_text().splitlines()]
    assert lines == [{"text": "LINE 1.1!"}, {"text": "LINE 1.2!!"}]


def test_python_pipeline_using_the_plugin_runs(plugin_venv, tmp_path):
    script = tmp_path / "run.py"
    script.write_text("""
from curator import Pipeline
from curator.plugins import get_registry
reg = get_registry()
stages = [reg.get("DemoLinesSource").obj(num_tasks=2), reg.get("DemoUpperCaseStage").obj()]
result = Pipeline("p", stages=stages).run(summary=False)
print(sorted(r["text"] for t in result for r in t.data))
""")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CURATOR_")}
    env["CURATOR_DISABLE_PLUGINS"] = "clash"
    proc = subprocess.run([str(plugin_venv / "bin" / "python"), str(script)], capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['LINE 0.0', 'LINE 0.1!', 'LINE 1.0', 'LINE 1.1!']"


def test_name_clash_refuses_only_that_name_and_qualified_names_pick_one(plugin_venv, tmp_path):
    proc = curator(plugin_venv, "plugins", "--json", disable=None)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {"clash", "demo", "core"} <= {p["name"] for p in data["plugins"]}
    assert {b["name"] for b in data["broken"]} == {"broken"}  # nobody is broken by a clash
    notes = " ".join(data["clashes"])
    assert "curator-clash-plugin 9.9.0" in notes and "curator-demo-plugin 0.3.1" in notes
    stages = json.loads(curator(plugin_venv, "stages", "--json", disable=None).stdout)
    names = {e["name"]: e["distribution"] for e in stages}
    assert names["FilePartitioningStage"] == "curator-core"  # built-in wins, core complete
    assert names["clash:FilePartitioningStage"] == "curator-clash-plugin"
    assert "DemoUpperCaseStage" not in names  # refused between two third parties
    assert names["demo:DemoUpperCaseStage"] == "curator-demo-plugin"
    assert names["DemoMinLengthFilter"] == names["DemoLinesSource"] == "curator-demo-plugin"
    assert names["ClashOnlyStage"] == "curator-clash-plugin"
    spec = tmp_path / "spec.yaml"
    spec.write_text("stages:\n  - stage: DemoLinesSource\n  - stage: DemoUpperCaseStage\n")
    proc = curator(plugin_venv, "run", str(spec), "--dry-run", disable=None)
    assert proc.returncode == 2
    assert "'demo:DemoUpperCaseStage' or 'clash:DemoUpperCaseStage'" in proc.stderr or (
        "'clash:DemoUpperCaseStage' or 'demo:DemoUpperCaseStage'" in proc.stderr), proc.stderr
    spec.write_text("stages:\n  - stage: DemoLinesSource\n  - stage: demo:DemoUpperCaseStage\n")
    proc = curator(plugin_venv, "run", str(spec), "--dry-run", disable=None)
    assert proc.returncode == 0, proc.stderr


def test_load_plugins_env_selects_plugins(plugin_venv):
    env_proc = subprocess.run(
        [str(plugin_venv / "bin" / "curator"), "plugins", "--json"], capture_output=True,
        text=True, timeout=120,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("CURATOR_")},
             "CURATOR_LOAD_PLUGINS": "curator-demo-plugin"})
    data = json.loads(env_proc.stdout)
    assert {p["name"] for p in data["plugins"]} == {"core", "demo"}
    assert data["broken"] == []
