"""The ``curator`` command, called in-process (test_discovery.py runs it in a subprocess)."""

from __future__ import annotations

import json

import pytest
from curator.cli import main

from tests.core.test_spec import KeepAbove, Numbers, Threshold


@pytest.fixture
def reg(curator_registry):
    curator_registry.register(Numbers, "stage", modality="text")
    curator_registry.register(KeepAbove, "filter")
    curator_registry.register(Threshold, "filter")
    return curator_registry


def test_stages_lists_and_filters(reg, capsys):
    assert main(["stages", "--json"]) == 0
    entries = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    assert entries["Numbers"]["distribution"] == "curator-test-fixture"
    assert entries["local"]["kind"] == "executor"
    assert main(["stages", "--kind", "filter", "--json"]) == 0
    names = {e["name"] for e in json.loads(capsys.readouterr().out)}
    assert "KeepAbove" in names and "Numbers" not in names
    assert main(["stages", "--modality", "image", "--kind", "stage", "--json"]) == 0
    assert "Numbers" not in {e["name"] for e in json.loads(capsys.readouterr().out)}
    assert main(["stages", "--modality", "text", "--kind", "stage"]) == 0
    assert "\nNumbers " in capsys.readouterr().out


def test_plugins_lists_core(reg, capsys):
    assert main(["plugins", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "core" in {p["name"] for p in data["plugins"]}


def test_describe_shows_doc_parameters_and_provenance(reg, capsys):
    assert main(["describe", "Numbers"]) == 0
    out = capsys.readouterr().out
    assert "Emit ``count`` tasks" in out and "count: int = 3" in out
    assert "curator-test-fixture" in out and "writes: ['n']" in out


def test_describe_unknown_name_suggests(reg, capsys):
    assert main(["describe", "Numbres"]) == 2
    assert "Did you mean 'Numbers'" in capsys.readouterr().err


def test_run_spec_with_overrides(reg, tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text("""
name: nums
run: {summary: false}
stages:
  - stage: Numbers
    count: 4
  - filter: KeepAbove
    filter_obj: {filter: Threshold, minimum: 2}
""")
    assert main(["run", str(spec), "--set", "stages.Numbers.count=6",
                 "--rejected-dir", str(tmp_path / "rej")]) == 0
    assert "nums: 4 output tasks, 0 rejected" in capsys.readouterr().err
    assert main(["run", str(spec), "--dry-run"]) == 0
    assert "2 stages" in capsys.readouterr().err


def test_run_bad_parameter_is_a_configuration_error(reg, tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text("stages:\n  - stage: Numbers\n    cuont: 2\n")
    assert main(["run", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "configuration error" in err and "cuont" in err
    assert main(["run", str(tmp_path / "missing.yaml")]) == 2


def test_run_prints_summary_unless_curator_summary_is_off(reg, tmp_path, capsys, monkeypatch):
    spec = tmp_path / "spec.yaml"
    spec.write_text("stages:\n  - stage: Numbers\n    count: 2\n")
    monkeypatch.delenv("CURATOR_SUMMARY", raising=False)
    assert main(["run", str(spec)]) == 0
    assert "wall time" in capsys.readouterr().err
    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    assert main(["run", str(spec)]) == 0
    assert "wall time" not in capsys.readouterr().err


def test_run_writes_json_report_with_the_spec(reg, tmp_path, capsys):
    import jsonschema
    from curator.report import report_schema

    spec = tmp_path / "spec.yaml"
    spec.write_text("name: nums\nstages:\n  - stage: Numbers\n    count: 3\n"
                    "  - filter: KeepAbove\n    filter_obj: {filter: Threshold, minimum: 1}\n")
    report = tmp_path / "reports" / "run.json"
    assert main(["run", str(spec), "--quiet", "--report", str(report)]) == 0
    err = capsys.readouterr().err
    assert "wall time" not in err and "2 stages" not in err  # --quiet
    assert f"report written to {report}" in err
    data = json.loads(report.read_text())
    jsonschema.validate(data, report_schema())
    assert data["pipeline"] == "nums" and data["ok"] is True
    assert data["spec"]["stages"][1]["filter_obj"] == {"filter": "Threshold", "minimum": 1}
    assert [s["name"] for s in data["stages"]] == ["Numbers", "KeepAbove"]
    assert data["stages"][1]["tasks_in"] == 3


def test_summary_hint_names_the_flag_and_missing_input_is_one_line(reg, tmp_path, capsys,
                                                                   monkeypatch):
    from tests.core.report.stages import DropByReason, Parts

    reg.register(Parts, "stage")
    reg.register(DropByReason, "stage")
    monkeypatch.delenv("CURATOR_SUMMARY", raising=False)
    monkeypatch.delenv("CURATOR_TRACEBACK", raising=False)
    spec = tmp_path / "spec.yaml"
    spec.write_text("stages:\n  - stage: Parts\n    n: 2\n  - stage: DropByReason\n")
    assert main(["run", str(spec)]) == 0
    err = capsys.readouterr().err
    assert "wall time" in err and "pass --rejected-dir to write them" in err
    assert "rejected_dir=" not in err
    missing = tmp_path / "spec2.yaml"
    missing.write_text(f"stages:\n  - stage: FilePartitioningStage\n"
                       f"    file_paths: {tmp_path / 'nothing' / '*.jsonl'}\n")
    assert main(["run", str(missing), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("curator: source stage") and "no input files found" in err


def test_json_output_into_a_closed_pipe_exits_quietly():
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "curator", "stages", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # like `| head` exiting before curator writes
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
