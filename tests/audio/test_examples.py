"""The YAML example builds from registered names and runs (on small generated data)."""

import json
from pathlib import Path

import pytest
from curator.errors import ConfigError
from curator.spec import load_spec, pipeline_from_spec
from curator_audio import testing as T

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "audio"


def test_yaml_example_runs(tmp_path, monkeypatch, tiny_model):
    import shutil

    monkeypatch.chdir(tmp_path)
    spec = load_spec(EXAMPLES / "pipeline.yaml")
    with pytest.raises(ConfigError, match="ASRStage.*model_dir"):   # checked before any data
        pipeline_from_spec(spec)
    data = tmp_path / "examples" / "audio" / "data"
    shutil.copytree(tiny_model, data / "tiny_wav2vec2")
    T.write_audio(str(data / "a.wav"), T.speech_like(1.0))
    (data / "manifest.jsonl").write_text(json.dumps({"audio_filepath": "a.wav", "text": "hi"}))
    pipeline = pipeline_from_spec(spec)
    names = [type(s).__name__ for s in pipeline.stages]
    assert names[0] == "ManifestReader" and names[-1] == "ManifestWriterStage"
    pipeline.run()
    [out] = list((data / "output_yaml").glob("*.jsonl"))
    rec = json.loads(out.read_text().splitlines()[0])
    assert {"pred_text", "wer", "cer", "snr_db", "offset"} <= set(rec)


def test_alm_build_example_runs(tmp_path, capsys):
    import importlib.util
    import os

    from curator_audio import testing as T

    if not T.espeak_available():
        import pytest

        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "audio", "alm_build.py")
    spec = importlib.util.spec_from_file_location("alm_build_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--out", str(tmp_path), "--conversations", "1"])
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("conversation0.wav:") and "lost to bandwidth: 1 segment(s)" in line
