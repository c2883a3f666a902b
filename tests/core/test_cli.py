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
    assert "Emit count tasks" in out and "count: int = 3" in out  # RST backticks dropped
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
    err = capsys.readouterr().err
    assert "nums: 4 output tasks, 0 rejected" in err
    # a run names its stages on one line; the full description is --dry-run's
    assert "running 'nums': Numbers -> KeepAbove" in err and "Stage 1:" not in err
    assert main(["run", str(spec), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "Stages: 2" in err and "Stage 1: Numbers" in err  # Pipeline.describe(), NeMo's layout


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


# ---- day one for a new user (issue 36) ------------------------------------------------------
import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _curator(*args: str, cwd: Path = ROOT, env: dict | None = None) -> subprocess.CompletedProcess:
    """The real ``curator`` command in a fresh interpreter (what a user types)."""
    return subprocess.run([sys.executable, "-m", "curator", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300,
                          env={**os.environ, "CURATOR_PROGRESS": "0", **(env or {})})


def _readme_run_lines() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return [line.strip() for line in text.splitlines()
            if re.match(r"uv run curator run (-\S+ )*examples/", line.strip())]


def test_readme_curator_run_lines_build_on_the_shipped_specs(capsys):
    """Every `curator run` line of the README on a shipped spec, with its --set overrides,
    builds and validates (the first one used to set filter_obj on the Modify stage)."""
    lines = _readme_run_lines()
    assert any("--set" in line for line in lines)
    for line in lines:
        argv = line.split()[3:]  # after "uv run curator"
        assert main([*argv, "--dry-run"]) == 0, (line, capsys.readouterr().err)
    assert "stages[" not in capsys.readouterr().err


def test_run_help_example_matches_a_shipped_spec(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    (example,) = re.findall(r"e\.g\.\s+(\S+=\S+)\s+for\s+(\S+)", " ".join(out.split()))
    assignment, spec = example
    assert main(["run", spec, "--set", assignment, "--dry-run"]) == 0
    for flag in ("--rejected-dir", "--checkpoint-dir", "--max-retries"):  # each has help
        block = out.split(flag, 1)[1].split("\n  -", 1)[0]
        assert len(block.split()) > 4, flag
    assert "docs/" not in out  # --report's help names no repository path


def test_version(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert f"curator {version('curator-core')}" in capsys.readouterr().out


def test_example_spec_before_its_data_names_the_prepare_step(tmp_path):
    """A shipped example run before its prepare step: one line, naming the exact command."""
    spec = (ROOT / "examples/image/pipeline.yaml").read_text()
    (tmp_path / "spec.yaml").write_text(spec)  # relative paths: nothing there under tmp_path
    proc = _curator("run", "-q", "spec.yaml", cwd=tmp_path)
    assert proc.returncode != 0
    err = proc.stderr.strip().splitlines()
    assert "Traceback" not in proc.stderr and len(err) <= 2, proc.stderr
    assert "run `uv run python examples/image/prepare_data.py` first" in err[-1]
    debug = _curator("run", "-q", "spec.yaml", "--debug", cwd=tmp_path)
    assert "Traceback (most recent call last)" in debug.stderr  # --debug keeps it


def test_missing_optional_package_is_one_line_with_the_install_command(tmp_path):
    pytest.importorskip("curator_text")
    # an install without cosmos-xenna: its import fails exactly as a missing package's does
    (tmp_path / "cosmos_xenna.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'cosmos_xenna'\", name='cosmos_xenna')\n")
    proc = _curator("run", "-q", "examples/text/tinystories.yaml", "--executor", "xenna",
                    env={"PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"})
    assert "Traceback" not in proc.stderr and proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()[-1:]
    assert "cosmos-xenna" in line and "pip install 'curator-core[xenna]'" in line


def test_unexpected_error_is_one_line_and_debug_shows_the_traceback(reg, tmp_path, capsys,
                                                                    monkeypatch):
    spec = tmp_path / "s.yaml"
    spec.write_text("name: x\nstages:\n  - stage: Numbers\n    n: 2\n")
    import curator.cli as cli

    def boom(args, registry):
        raise RuntimeError("first line\nthe last line says what broke")

    monkeypatch.setattr(cli, "cmd_run", boom)
    parser_run = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda r=None: _with_run(parser_run(r), boom))
    assert main(["run", str(spec)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "RuntimeError: the last line says what broke" in err
    assert "--debug" in err
    with pytest.raises(RuntimeError):
        main(["--debug", "run", str(spec)])
    monkeypatch.setenv("CURATOR_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main(["run", str(spec)])


def _with_run(parser, func):
    sub = next(a for a in parser._actions if a.dest == "command")
    sub.choices["run"].set_defaults(func=func)
    return parser


def test_missing_name_says_which_package_provides_it(monkeypatch):
    from curator.plugins import Registry, providers

    with pytest.raises(Exception) as err:
        Registry().get("NoSuchStageAnywhere")
    assert "no stage or component named 'NoSuchStageAnywhere'" in str(err.value)
    # a core-only install: the distribution that provides the name is not installed
    monkeypatch.setitem(providers.BUILTIN_PROVIDERS, "JsonlReader", "curator-not-installed")
    with pytest.raises(Exception) as err:
        Registry().get("JsonlReader")
    assert ("'JsonlReader' is provided by the package curator-not-installed, which is not "
            "installed: pip install curator-not-installed") in str(err.value)


def test_provider_table_names_only_what_those_packages_register():
    from curator.plugins import get_registry
    from curator.plugins.providers import BUILTIN_PROVIDERS

    registry = get_registry()
    loaded = {p.distribution for p in registry.plugins}
    checked = 0
    for name, dist in BUILTIN_PROVIDERS.items():
        if dist in loaded:
            assert registry.get(name).plugin.distribution == dist, name
            checked += 1
    assert checked or not loaded - {"curator-core"}


def test_stages_wraps_descriptions_and_describe_shows_no_rst(capsys, monkeypatch):
    pytest.importorskip("curator_text")
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["stages", "--modality", "text", "--kind", "filter"]) == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":class:" not in out
    lines = out.splitlines()
    assert all(len(line) <= 100 for line in lines)
    # a description that does not fit goes on to the next line, cut at a word boundary
    indent = lines[0].index("description")
    assert any(line[:indent].strip() == "" and line.strip() for line in lines[2:])
    assert main(["describe", "WordCountFilter"]) == 0
    text = capsys.readouterr().out
    assert "_Words" not in text and "``" not in text and "min_words" in text
