"""The image reader fixes the mmap threshold and trims the heap after each task (the helpers:
``tests/core/test_heap.py``)."""

from __future__ import annotations

from ..core.test_heap import MAPPED, libc  # noqa: F401 - the fixture


def test_the_image_reader_calls_them(libc, shards) -> None:  # noqa: F811
    from curator import FileGroupTask
    from curator_image.io.reader import WebDatasetReaderStage

    WebDatasetReaderStage().process(FileGroupTask("t", "d", [shards[0]]))
    assert libc.calls == [MAPPED, ("malloc_trim", 0)]
