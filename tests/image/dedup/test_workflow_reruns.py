"""Issue 31: ImageSemanticDeduplicationWorkflow manages its staging folder itself. The image
example runs twice in a row (it failed on its second run: the staging writer found the first
run's files), and an output or work folder overlapping the readers' input is refused before
anything is touched."""

from __future__ import annotations

import os

import pytest
from curator.output_dir import OutputDirError
from curator_image import ImageEmbeddingStage, ImageReaderStage, ImageSemanticDeduplicationWorkflow

from tests.image.test_examples import _load


def _listing(folder) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, f), folder)
                  for d, _, files in os.walk(folder) for f in files if not f.startswith("."))


def test_the_image_example_runs_twice_in_a_row(tmp_path, monkeypatch):
    monkeypatch.setenv("CURATOR_SUMMARY", "0")
    _load("prepare_data").prepare(str(tmp_path / "data"), n_shards=2, per_shard=6)
    example = _load("pipeline")
    first = example.main(str(tmp_path / "data"), str(tmp_path / "out"))
    files = _listing(tmp_path / "out")
    second = example.main(str(tmp_path / "data"), str(tmp_path / "out"))
    assert (second.n_images, second.removed) == (first.n_images, first.removed)
    assert second.output_files == first.output_files
    assert _listing(tmp_path / "out") == files  # nothing staged or written twice


@pytest.mark.parametrize("where", ["output_dir", "work_dir"])
def test_an_output_inside_the_input_is_refused(tmp_path, shards, clip_dir, where):
    folder = os.path.dirname(shards[0])
    before = _listing(folder)
    dirs = {"output_dir": str(tmp_path / "out"), "work_dir": str(tmp_path / "work"),
            where: os.path.join(folder, "curated")}
    wf = ImageSemanticDeduplicationWorkflow(
        stages=[ImageReaderStage(folder), ImageEmbeddingStage(model_dir=clip_dir)], **dirs)
    with pytest.raises(OutputDirError, match=f"{where}: output directory .* is inside the input path"):
        wf.run()
    assert _listing(folder) == before and not os.path.exists(os.path.join(folder, "curated"))
