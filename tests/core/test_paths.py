"""Relative paths are resolved on the driver, before stages ship to workers."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from typing import ClassVar

from curator import Pipeline, ProcessingStage, Task
from curator.paths import absolute_uri, is_node_local, resolve_stage_paths, warn_node_local_paths
from curator.stages.file_partitioning import FilePartitioningStage


@dataclass
class SeesPath(ProcessingStage):
    """Source stage that reports the ``path`` it holds when it runs."""

    path: str = ""
    path_params: ClassVar[tuple[str, ...]] = ("path",)
    name: str = "SeesPath"

    def process(self, task: Task) -> list[Task]:
        return [Task("t0", "d", [self.path])]


def test_absolute_uri(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert absolute_uri("output/") == f"{tmp_path}/output/"
    assert absolute_uri("a/b.jsonl") == f"{tmp_path}/a/b.jsonl"
    assert absolute_uri(["x", "s3://bucket/x"]) == [f"{tmp_path}/x", "s3://bucket/x"]
    assert absolute_uri("~/data") == os.path.expanduser("~/data")
    for unchanged in ("s3://bucket/out/", "file:///abs/dir", "/abs/dir", "", None, 3):
        assert absolute_uri(unchanged) == unchanged


def test_stages_are_copied_with_absolute_declared_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = FilePartitioningStage(file_paths=["in/", "gs://b/in"])
    remote = SeesPath(path="s3://bucket/x")
    resolved = resolve_stage_paths([src, remote])
    assert resolved[0].file_paths == [f"{tmp_path}/in/", "gs://b/in"]
    assert src.file_paths == ["in/", "gs://b/in"]  # the user's stage is left as it was
    assert resolved[1] is remote  # nothing to resolve: not copied


def test_pipeline_run_resolves_paths_before_stages_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = Pipeline("p", stages=[SeesPath(path="out/")]).run(
        "local", rejected_dir="rej/", summary=False)
    assert [t.data for t in result] == [[f"{tmp_path}/out/"]]


def test_node_local_paths_warn_only_on_a_multi_node_cluster():
    stages = [FilePartitioningStage(file_paths="/data/in"), SeesPath(path="s3://b/out")]
    assert is_node_local("file:///x") and is_node_local("/x") and not is_node_local("s3://b")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert warn_node_local_paths(stages, 1) == []
        found = warn_node_local_paths(stages, 3)
    assert len(found) == 1 and "FilePartitioningStage.file_paths='/data/in'" in found[0]
    assert "3-node" in found[0] and [str(w.message) for w in caught] == found
