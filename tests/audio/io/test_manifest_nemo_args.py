"""NeMo's ``ManifestReader(manifest_path=...)`` arguments (its docs pass them by name)."""

from __future__ import annotations

import json

import pytest
from curator import Pipeline
from curator.errors import ConfigError
from curator_audio import ManifestReader


def test_nemo_manifest_path_and_extensions(tmp_path) -> None:
    (tmp_path / "a.jsonl").write_text("".join(
        json.dumps({"audio_filepath": f"/x/{i}.wav", "text": "t"}) + "\n" for i in range(3)))
    (tmp_path / "notes.txt").write_text("not a manifest\n")
    result = Pipeline("m", stages=[ManifestReader(manifest_path=str(tmp_path))]).run()
    assert result.ok
    assert sorted(r["audio_filepath"] for t in result for r in t.data) == [
        "/x/0.wav", "/x/1.wav", "/x/2.wav"]
    assert ManifestReader(manifest_path="m.jsonl").file_paths == "m.jsonl"
    with pytest.raises(ConfigError, match="not both"):
        ManifestReader(file_paths="a.jsonl", manifest_path="b.jsonl")
