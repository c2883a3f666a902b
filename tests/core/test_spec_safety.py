"""Hostile and mistyped specs fail before any data is read: YAML alias bombs and recursive
anchors are a ConfigError, and parameter values are checked against the annotated types."""

from __future__ import annotations

import subprocess
import sys

import pytest
from curator import ConfigError, ProcessingStage, Task
from curator.spec import apply_overrides, load_spec, pipeline_from_spec

# Nine levels of nine aliases: about 4e9 nodes once expanded, 32 written.
BILLION_LAUGHS = "lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"lol{i}: &lol{i} [{', '.join([f'*lol{i - 1}'] * 9)}]\n" for i in range(1, 10)
) + "stages:\n  - stage: Count\n    count: 1\n"


class Count(ProcessingStage):
    """Emit ``count`` tasks, each holding ``value`` ``factor`` times."""

    def __init__(self, count: int = 1, factor: float = 1.0, label: str = "n",
                 rule: Minimum | None = None) -> None:
        self.count, self.factor, self.label, self.rule = count, factor, label, rule

    def outputs(self):
        return ["data"], []

    def process(self, task):
        return [Task(f"t{i}", "ds", [i * self.factor]) for i in range(self.count)]


class Minimum:
    """A filter object with a typed parameter."""

    def __init__(self, minimum: int = 0) -> None:
        self.minimum = minimum


class NotAMinimum:
    """A component of the wrong class for ``Count.rule``."""


@pytest.fixture
def registry(curator_registry):
    curator_registry.register(Count)
    curator_registry.register(Minimum, kind="filter")
    curator_registry.register(NotAMinimum, kind="filter")
    return curator_registry


@pytest.mark.timeout(10)
def test_billion_laughs_is_a_config_error(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BILLION_LAUGHS)
    with pytest.raises(ConfigError, match="alias bomb") as err:
        load_spec(path)
    assert str(path) in str(err.value)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("text", ["a: &a [1, *a]\nstages: []\n", "a: &a {b: *a}\nstages: []\n"])
def test_recursive_anchor_is_a_config_error(tmp_path, text):
    path = tmp_path / "loop.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="recursive YAML anchor.*line 1"):
        load_spec(path)


def test_ordinary_aliases_and_merge_keys_still_load(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("common: &c {count: 2}\nstages:\n  - {stage: Count, <<: *c}\n"
                    "  - {stage: Count, count: 3}\n")
    spec = load_spec(path)
    assert spec["stages"][0] == {"stage": "Count", "count": 2}


@pytest.mark.timeout(10)
def test_set_value_with_an_alias_bomb_is_refused():
    bomb = "[" + ", ".join(["&a [x, x, x, x, x, x, x, x, x, x]"] + ["*a"] * 3) + "]"
    nested = "&b [" + ", ".join(["*a"] * 10) + "]"
    value = f"[{bomb}, {nested}, [{', '.join(['*b'] * 10)}]]"
    assert apply_overrides({"stages": []}, [f"x={value}"])["x"]  # small expansion: fine
    deep = "&l0 [x, x, x, x, x, x, x, x, x, x]"
    for i in range(1, 8):
        deep = f"[{deep}, &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]]"
    with pytest.raises(ConfigError, match="--set x: .*alias bomb"):
        apply_overrides({"stages": []}, [f"x={deep}"])


def test_mistyped_value_names_stage_parameter_type_and_value(registry):
    with pytest.raises(ConfigError) as err:
        pipeline_from_spec({"stages": [{"stage": "Count", "count": "eighty"}]})
    msg = str(err.value)
    assert "stages[0] (Count)" in msg and "'count'" in msg and "expects int" in msg
    assert "'eighty'" in msg


def test_nested_filter_object_is_checked(registry):
    spec = {"stages": [{"stage": "Count", "rule": {"filter": "Minimum", "minimum": "ten"}}]}
    with pytest.raises(ConfigError, match=r"stages\[0\] \(Count\)\.rule \(Minimum\): parameter "
                                          r"'minimum' expects int, got 'ten'"):
        pipeline_from_spec(spec)
    spec = {"stages": [{"stage": "Count", "rule": {"filter": "NotAMinimum"}}]}
    with pytest.raises(ConfigError, match="parameter 'rule' expects .*Minimum | None"):
        pipeline_from_spec(spec)


def test_numeric_strings_become_numbers_where_annotated(registry):
    spec = apply_overrides({"stages": [{"stage": "Count", "rule": {"filter": "Minimum"}}]},
                           ['stages.Count.count="4"', "stages.0.factor=2",
                            'stages.0.rule.minimum="7"', "stages.0.label=2024"])
    stage = pipeline_from_spec(spec).build()[0]
    assert stage.count == 4 and isinstance(stage.count, int)
    assert stage.factor == 2.0 and isinstance(stage.factor, float)
    assert stage.rule.minimum == 7 and stage.label == "2024"
    with pytest.raises(ConfigError, match="'factor' expects float, got 'abc'"):
        pipeline_from_spec(apply_overrides(spec, ["stages.0.factor=abc"]))


def _curator(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "curator", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=120)


@pytest.mark.timeout(120)
def test_cli_dry_run_refuses_a_mistyped_spec(tmp_path):
    (tmp_path / "in.jsonl").write_text('{"text": "a b c"}\n')
    spec = tmp_path / "typed.yaml"
    spec.write_text("stages:\n  - stage: JsonlReader\n    file_paths: in.jsonl\n"
                    "  - stage: ScoreFilter\n"
                    "    filter_obj: {filter: WordCountFilter, min_words: eighty}\n")
    proc = _curator("run", str(spec), "--dry-run", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "configuration error" in proc.stderr
    assert "(WordCountFilter): parameter 'min_words' expects int, got 'eighty'" in proc.stderr
    proc = _curator("run", str(spec), "--dry-run", "--set", "stages.1.filter_obj.min_words=5",
                    cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.timeout(120)
def test_cli_refuses_a_billion_laughs_spec(tmp_path):
    spec = tmp_path / "bomb.yaml"
    spec.write_text(BILLION_LAUGHS)
    proc = _curator("run", str(spec), "--dry-run", cwd=tmp_path)
    assert proc.returncode == 2 and "alias bomb" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_set_addresses_a_qualified_stage_by_its_plain_name(registry):
    spec = {"stages": [{"stage": "test:Count", "count": 1}]}
    spec = apply_overrides(spec, ["stages.Count.count=3"])
    assert pipeline_from_spec(spec).build()[0].count == 3
