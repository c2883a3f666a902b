import importlib.util
import os
import sys

import pytest
from curator.spec import apply_overrides, load_spec, pipeline_from_spec

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "image")


def _load(name):
    sys.path.insert(0, EXAMPLES)
    try:
        spec = importlib.util.spec_from_file_location(f"image_example_{name}",
                                                      os.path.join(EXAMPLES, f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(EXAMPLES)


@pytest.fixture
def small_data(tmp_path, monkeypatch):
    prep = _load("prepare_data")
    return prep.prepare(str(tmp_path / "data"), n_shards=2, per_shard=6)


def test_python_example_removes_planted_duplicates(small_data, tmp_path):
    result = _load("pipeline").main(str(tmp_path / "data"), str(tmp_path / "out"))
    assert result.n_images == 12
    assert sum(1 for r in result.removed.values() if r == "exact") == 4
    assert os.path.isfile(os.path.join(tmp_path, "out", "work", "duplicates.parquet"))
    assert any(f.endswith(".tar") for f in result.output_files)


def test_yaml_example_builds_and_runs(small_data, tmp_path):
    spec = load_spec(os.path.join(EXAMPLES, "pipeline.yaml"))
    spec = apply_overrides(spec, [
        f"stages.0.file_paths={small_data['shards']}",
        f"stages.1.model_dir={small_data['clip']}",
        f"stages.2.model_dir={small_data['aesthetic']}",
        f"stages.3.model_dir={small_data['nsfw']}",
        f"stages.4.output_dir={tmp_path / 'yaml_out'}"])
    result = pipeline_from_spec(spec).run()
    assert sum(len(t.data) for t in result) == 4  # 2 shards -> tar + parquet each
    assert sorted(n for n in os.listdir(tmp_path / "yaml_out")
                  if not n.startswith("."))[0].endswith(".parquet")
