"""The text pipeline on the Ray executors: same kept documents as locally, bad lines rejected."""

from __future__ import annotations

import json

import pytest
from curator import Pipeline
from curator_text import JsonlReader, JsonlWriter, ScoreFilter, WordCountFilter


def _kept(out_dir) -> list[str]:
    return sorted(json.loads(line)["id"] for p in out_dir.glob("*.jsonl")
                  for line in p.read_text().splitlines())


@pytest.mark.parametrize("kind", ["local", pytest.param("ray_data", marks=pytest.mark.ray),
                                  pytest.param("ray_actor_pool", marks=pytest.mark.ray)])
def test_text_pipeline_keeps_the_same_documents_on_every_executor(kind, tmp_path, request):
    if kind != "local":
        request.getfixturevalue("ray_cluster")
    raw = tmp_path / "raw"
    raw.mkdir()
    for f in range(5):
        with open(raw / f"part{f}.jsonl", "w") as fh:
            for i in range(20):
                fh.write(json.dumps({"id": f"{f}-{i}", "text": "word " * (i % 7)}) + "\n")
            fh.write('{"id": "broken\n')  # line 21 of every file
    out, rejected = tmp_path / "out", tmp_path / "rejected"
    pipe = Pipeline("text-ray", stages=[
        JsonlReader(file_paths=str(raw)), ScoreFilter(WordCountFilter(min_words=3)),
        JsonlWriter(path=str(out))])
    result = pipe.run(kind, rejected_dir=str(rejected), summary=False)

    assert _kept(out) == sorted(f"{f}-{i}" for f in range(5) for i in range(20) if i % 7 >= 3)
    assert len(list(out.glob("*.jsonl"))) == 5  # one output file per input partition
    assert result.rejected.counts["JsonlReader.read"] == 5  # one malformed line per file
    stats = {s.name: s for s in result.stats.stages}
    assert stats["JsonlWriter"].items_in == len(_kept(out))
