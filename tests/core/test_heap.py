"""The C heap helpers: glibc's mmap threshold fixed once (unless the user set it), so freed image
and frame buffers leave the process, and the heap trimmed after a task (the stages that call
them: tests/image, tests/video, tests/dedup)."""

from __future__ import annotations

import pytest
from curator import heap


class FakeLibc:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append(("mallopt", param, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad))
        return 1


@pytest.fixture
def libc(monkeypatch) -> FakeLibc:
    fake = FakeLibc()
    monkeypatch.setattr(heap, "_STATE", {"libc": fake})
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    return fake


MAPPED = ("mallopt", -3, heap.MMAP_THRESHOLD)


def test_threshold_is_fixed_once_and_the_heap_trimmed(libc) -> None:
    heap.keep_big_blocks_mapped()
    heap.keep_big_blocks_mapped()
    heap.trim_heap()
    assert libc.calls == [MAPPED, ("malloc_trim", 0)]


def test_a_threshold_the_user_set_is_left_alone(libc, monkeypatch) -> None:
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    heap.keep_big_blocks_mapped()
    assert libc.calls == []


def test_the_real_libc_is_found_on_glibc() -> None:
    import platform

    if platform.libc_ver()[0] == "glibc":  # the process's own symbols hold malloc_trim
        assert heap._libc() is not None
    heap.trim_heap()
