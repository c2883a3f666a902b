"""Dedup tasks give the memory they freed back when they end (also when they fail)."""

from __future__ import annotations

import pytest
from curator.dedup import memory

from ..core.test_heap import libc  # noqa: F401 - the fixture


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


def test_release_memory_trims_the_c_heap(libc) -> None:  # noqa: F811
    memory.release_memory()  # Arrow's pool, then glibc's malloc_trim
    assert libc.calls == [("malloc_trim", 0)]
