"""The TinyStories example runs end to end, and its YAML spec builds the same pipeline."""

from __future__ import annotations

import glob
import importlib.util
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "text", "tinystories_pipeline.py")


def _load_example():
    spec = importlib.util.spec_from_file_location("tinystories_pipeline", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_python_example_runs(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    mod = _load_example()
    assert mod.main(["--docs", "400", "--workdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "kept" in out
    assert "rejected: 2 by JsonlReader.read" in out and "{" not in out  # words, not a dict repr
    rows = [json.loads(x) for f in glob.glob(str(tmp_path / "curated" / "*.jsonl"))
            for x in open(f)]
    assert rows and all(len(r["text"].split()) >= 80 for r in rows)
    assert not any("â€" in r["text"] for r in rows)  # mojibake fixed by ftfy
    rejected = glob.glob(str(tmp_path / "rejected" / "*"))
    assert rejected, "malformed lines must reach the rejected sink"


def test_yaml_spec_builds() -> None:
    spec_mod = pytest.importorskip("curator.spec")
    spec = spec_mod.load_spec(os.path.join(ROOT, "examples", "text", "tinystories.yaml"))
    names = [s.name for s in spec_mod.pipeline_from_spec(spec).build()]
    assert names[:2] == ["JsonlReader.partition", "JsonlReader.read"]
    assert "ScoreFilter[WordCountFilter]" in names and names[-1] == "JsonlWriter"
