"""Dedup tasks give the memory they freed back when they end (also when they fail)."""

from __future__ import annotations

import pytest
from curator.dedup import memory


def test_every_task_ends_with_a_release_even_a_failing_one(monkeypatch) -> None:
    from curator_text.dedup.stages import JaccardVerifyStage, MinHashLSHStage

    calls = []
    monkeypatch.setattr(memory, "release_memory", lambda: calls.append(1))

    @memory.releases_memory
    def process(task: int) -> int:
        if task < 0:
            raise ValueError("bad task")
        return task + 1

    assert process(1) == 2 and calls == [1]
    with pytest.raises(ValueError):
        process(-1)
    assert calls == [1, 1]
    for stage in (MinHashLSHStage, JaccardVerifyStage):  # the heavy stages are decorated
        assert stage.process.__wrapped__ is not None


def test_release_memory_runs_here() -> None:
    memory.release_memory()  # glibc's malloc_trim where there is one, Arrow's pool always
